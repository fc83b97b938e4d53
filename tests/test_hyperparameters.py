import json
import re
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from kgrank.errors import KgrankInputError
from kgrank.hyperparameters import import_published, load_hyperparameters

SHIPPED = sorted((REPO / "config" / "hyperparameters").glob("*/*.yaml"))
# The `ir` study's systems beyond the case study's four models (FB15k-237 only).
IR_SYSTEMS = {("fb15k237", "distmult"), ("fb15k237", "rescal"), ("fb15k237", "conve")}


def test_all_sixteen_pairs_and_the_ir_systems_ship():
    pairs = {(path.parent.name, path.stem) for path in SHIPPED}
    assert len(pairs - IR_SYSTEMS) == 16
    assert pairs >= IR_SYSTEMS


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_shipped_files_validate_and_match_their_place(path):
    loaded = load_hyperparameters(path)
    assert (loaded["dataset"], loaded["model"]) == (path.parent.name, path.stem)
    source = loaded["source"]
    if (path.parent.name, path.stem) in IR_SYSTEMS:
        # from the pykeen wheel's experiments, or (DistMult, which it lacks for FB15k-237)
        # from the benchmarking study's own files
        assert "pykeen_experiment" in source
        assert (
            isinstance(source["pykeen_experiment"], str) or source["pykeen_experiment"]["version"] == "1.11.1"
        )
        assert source.get("hpo_source", {}).get("repo", "pykeen/benchmarking") == "pykeen/benchmarking"
    else:
        assert source["used_by_case_study"]["repo"] == "pykeen/ranking-metrics-manuscript"


def _write(tmp_path, document):
    path = tmp_path / "pair.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def _valid():
    return yaml.safe_load((REPO / "config/hyperparameters/nations/transe.yaml").read_text())


def test_schema_error_names_file_and_key(tmp_path):
    document = _valid()
    document["pipeline"]["training_kwargs"]["num_epochs"] = 0
    with pytest.raises(
        KgrankInputError, match=r"pair\.yaml: key pipeline\.training_kwargs\.num_epochs: 0 is less"
    ):
        load_hyperparameters(_write(tmp_path, document))


def test_unknown_key_is_refused(tmp_path):
    document = _valid()
    document["pipeline"]["lerning_rate"] = 0.1
    with pytest.raises(KgrankInputError, match=r"key pipeline: Additional properties .*'lerning_rate'"):
        load_hyperparameters(_write(tmp_path, document))


def test_unknown_model_is_refused(tmp_path):
    document = _valid()
    document["pipeline"]["model"] = "transee"
    with pytest.raises(KgrankInputError, match=r"key pipeline\.model: unknown model 'transee'"):
        load_hyperparameters(_write(tmp_path, document))


@pytest.mark.parametrize(
    ("section", "misspelt", "expected"),
    [
        (
            "model_kwargs",
            "embeding_dim",
            r"pipeline\.model_kwargs\.embeding_dim: pykeen's TransE takes no argument",
        ),
        ("optimizer_kwargs", "learning_rate", r"pipeline\.optimizer_kwargs\.learning_rate: torch's Adadelta"),
        ("loss_kwargs", "margn", r"pipeline\.loss_kwargs\.margn: pykeen's CrossEntropyLoss"),
    ],
)
def test_misspelt_argument_is_refused_with_its_key(tmp_path, section, misspelt, expected):
    document = _valid()
    document["pipeline"].setdefault(section, {})[misspelt] = 1
    with pytest.raises(KgrankInputError, match=r"pair\.yaml: key " + expected + r".*use one of"):
        load_hyperparameters(_write(tmp_path, document))


def test_an_argument_the_workflow_sets_is_refused(tmp_path):
    document = _valid()
    document["pipeline"]["model_kwargs"]["triples_factory"] = "nations"
    with pytest.raises(KgrankInputError, match=r"model_kwargs\.triples_factory: pykeen's TransE takes no"):
        load_hyperparameters(_write(tmp_path, document))


def test_import_keeps_values_and_provenance(tmp_path):
    from conftest import SHARED

    source = SHARED / "reference" / "hyperparameters" / "rotate_kinships.json"
    if not source.is_file():
        pytest.skip("shared reference data not present")
    target = import_published(source, tmp_path)
    loaded = load_hyperparameters(target)
    assert loaded["pipeline"]["negative_sampler_kwargs"] == {"num_negs_per_pos": 53}
    assert "evaluator" not in loaded["pipeline"]
    assert loaded == load_hyperparameters(REPO / "config/hyperparameters/kinships/rotate.yaml")


def _pykeen_experiment(model: str, name: str):
    import pykeen

    path = Path(pykeen.__file__).parent / "experiments" / model / name
    if not path.is_file():
        pytest.skip(f"{name} not shipped with this pykeen")
    return path


def test_import_of_a_pykeen_experiment_yaml_normalises_names_and_records_the_package(tmp_path):
    source = _pykeen_experiment("rescal", "ali2020_rescal_fb15k237.yaml")
    target = import_published(source, tmp_path)
    assert target == tmp_path / "fb15k237" / "rescal.yaml"
    loaded = load_hyperparameters(target)
    assert (loaded["model"], loaded["dataset"]) == ("rescal", "fb15k237")
    assert loaded["pipeline"]["training_loop"] == "lcwa"
    assert not {"dataset", "evaluator_kwargs", "stopper", "stopper_kwargs"} & set(loaded["pipeline"])
    experiment = loaded["source"]["pykeen_experiment"]
    assert experiment["path"] == "pykeen/experiments/rescal/ali2020_rescal_fb15k237.yaml"
    assert experiment["version"] == version("pykeen")
    assert experiment["reported_results"]["realistic"]["hits_at_10"] == pytest.approx(0.5573, abs=1e-4)
    # the published early stopping is kept in words, since the budget owns early stopping
    assert '"frequency": 50' in loaded["note"]


def test_import_of_a_pykeen_experiment_json_maps_class_names_to_resolver_keys(tmp_path):
    source = _pykeen_experiment("conve", "dettmers2018_conve_fb15k237.json")
    published = json.loads(source.read_text())
    # PyKEEN 1.11.1 cannot build ConvE with channels, height and width all given
    del published["pipeline"]["model_kwargs"]["input_channels"]
    copy = tmp_path / "experiments" / "conve" / source.name
    copy.parent.mkdir(parents=True)
    copy.write_text(json.dumps(published))
    loaded = load_hyperparameters(import_published(copy, tmp_path / "out"))
    pipeline = loaded["pipeline"]
    assert (pipeline["model"], pipeline["loss"], pipeline["optimizer"], pipeline["training_loop"]) == (
        "conve",
        "bceaftersigmoid",
        "adam",
        "lcwa",
    )
    assert pipeline["training_kwargs"] == {"num_epochs": 1000, "batch_size": 128, "label_smoothing": 0.1}
    # a copy outside the package is named from its experiments folder on
    assert loaded["source"]["pykeen_experiment"]["path"] == "pykeen/experiments/conve/" + source.name
    assert "note" not in loaded


def test_import_refuses_a_file_that_is_neither_layout(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"pipeline": {"model": "transe"}}))
    with pytest.raises(
        KgrankInputError, match=r"bad\.json: key\(s\) \['model', 'dataset', 'source'\] missing"
    ):
        import_published(path, tmp_path)


def _files_under(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("dataset", "../../outside"),
        ("dataset", "/tmp/absolute"),
        ("model", "../transe"),
        ("model", ".hidden"),
        ("dataset", "nations/transe"),
        ("model", "transe.sampled-5"),
        ("dataset", ["nations"]),
    ],
    ids=[
        "dataset-climbs-out",
        "dataset-absolute",
        "model-climbs-out",
        "model-hidden",
        "dataset-slash",
        "model-dot",
        "dataset-not-a-string",
    ],
)
def test_import_refuses_a_name_that_is_not_a_path_component(tmp_path, field, value):
    """The archived layout's `dataset` and `model` become <out-dir>/<dataset>/<model>.yaml:
    a value that would leave --out-dir (or hide or shadow a file) is refused, naming the file
    and the field, before anything is written."""
    document = _valid() | {field: value}
    path = tmp_path / "published.json"
    path.write_text(json.dumps(document))
    with pytest.raises(KgrankInputError) as raised:
        import_published(path, tmp_path / "out" / "hyperparameters")
    message = str(raised.value)
    assert message.startswith(f"{path}: key {field}: {value!r}: a name may hold only letters, digits")
    assert "fix the field" in message and "\n" not in message
    assert _files_under(tmp_path) == {path}


@pytest.mark.parametrize("field", ["dataset", "model"])
def test_import_of_a_pykeen_experiment_refuses_a_name_that_is_not_a_path_component(tmp_path, field):
    source = _pykeen_experiment("rescal", "ali2020_rescal_fb15k237.yaml")
    published = yaml.safe_load(source.read_text())
    published["pipeline"][field] = "../../outside"
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(published))
    with pytest.raises(
        KgrankInputError, match=rf"^{re.escape(str(path))}: key pipeline\.{field}: '\.\./\.\./outside': "
    ):
        import_published(path, tmp_path / "out")
    assert _files_under(tmp_path) == {path}
    # a name that is not a string is refused the same way, not with a traceback
    published["pipeline"][field] = 5
    path.write_text(yaml.safe_dump(published))
    with pytest.raises(KgrankInputError, match=rf"key pipeline\.{field}: 5: a name may hold only"):
        import_published(path, tmp_path / "out")
