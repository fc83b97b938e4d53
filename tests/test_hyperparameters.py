import json
import re
from importlib.metadata import version
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from kgrank.errors import KgrankInputError
from kgrank.training.hyperparameters import import_published, load_hyperparameters

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
    with pytest.raises(
        KgrankInputError, match=r"key pipeline\.lerning_rate: Additional properties .*'lerning_rate'"
    ):
        load_hyperparameters(_write(tmp_path, document))


def test_unknown_model_is_refused(tmp_path):
    document = _valid()
    document["pipeline"]["model"] = "transee"
    with pytest.raises(KgrankInputError, match=r"key pipeline\.model: unknown model 'transee'"):
        load_hyperparameters(_write(tmp_path, document))


def test_a_top_level_model_other_than_the_pipelines_is_refused(tmp_path):
    document = _valid()
    document["model"] = "complx"
    with pytest.raises(KgrankInputError, match=r"key model: 'complx' is not the model the pipeline trains"):
        load_hyperparameters(_write(tmp_path, document))
    document["model"] = document["pipeline"]["model"].upper()  # the resolver's spelling differences pass
    load_hyperparameters(_write(tmp_path, document))


def test_a_file_that_is_not_yaml_is_one_line_with_its_place(tmp_path):
    path = tmp_path / "pair.yaml"
    path.write_text("model: [unclosed\n")
    with pytest.raises(KgrankInputError) as refusal:
        load_hyperparameters(path)
    assert "\n" not in str(refusal.value)
    assert "pair.yaml, line 2, column 1: not valid YAML (expected ',' or ']'" in str(refusal.value)


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


# --- values: the value table ($defs/values) wherever its keywords appear ---------------

# (file, section, keyword, bad value, what the error must say after the key)
BAD_VALUES = [
    (
        "nations/transe",
        "optimizer_kwargs",
        "lr",
        -0.1,
        r"-0\.1 is less than or equal to the minimum of 0; lr must be",
    ),
    (
        "nations/transe",
        "optimizer_kwargs",
        "lr",
        0,
        r"0 is less than or equal to the minimum of 0; lr must be",
    ),
    (
        "nations/transe",
        "model_kwargs",
        "embedding_dim",
        0,
        r"0 is less than the minimum of 1; embedding_dim must",
    ),
    ("nations/transe", "model_kwargs", "embedding_dim", 64.0, r"64\.0 is not of type 'integer'"),
    ("nations/tucker", "model_kwargs", "relation_dim", -8, r"-8 is less than the minimum of 1"),
    (
        "nations/tucker",
        "optimizer_kwargs",
        "weight_decay",
        -1,
        r"-1 is less than the minimum of 0; weight_decay",
    ),
    ("nations/transe", "model_kwargs", "scoring_fct_norm", "abc", r"'abc' is not one of \[1, 2\]"),
    ("nations/transe", "model_kwargs", "scoring_fct_norm", 3, r"3 is not one of \[1, 2\]"),
    (
        "nations/tucker",
        "training_kwargs",
        "label_smoothing",
        1.0,
        r"1\.0 is greater than or equal to the maximum",
    ),
    ("nations/tucker", "training_kwargs", "label_smoothing", -0.1, r"-0\.1 is less than the minimum of 0"),
    (
        "nations/transe",
        "training_kwargs",
        "num_epochs",
        0,
        r"0 is less than the minimum of 1; num_epochs must",
    ),
    (
        "nations/transe",
        "training_kwargs",
        "batch_size",
        0,
        r"0 is less than the minimum of 1; batch_size must",
    ),
    ("nations/transe", "training_kwargs", "sub_batch_size", 0, r"0 is less than the minimum of 1"),
    (
        "nations/tucker",
        "model_kwargs",
        "dropout_0",
        1.0,
        r"1\.0 is greater than or equal to the maximum of 1; dropout",
    ),
    ("fb15k237/conve", "model_kwargs", "input_dropout", -0.2, r"-0\.2 is less than the minimum of 0"),
    ("nations/tucker", "model_kwargs", "apply_batch_normalization", "yes", r"'yes' is not of type 'boolean'"),
    (
        "kinships/rotate",
        "loss_kwargs",
        "margin",
        0,
        r"0 is less than or equal to the minimum of 0; margin must",
    ),
    (
        "kinships/rotate",
        "loss_kwargs",
        "adversarial_temperature",
        -0.5,
        r"-0\.5 is less than or equal to the min",
    ),
    ("kinships/rotate", "negative_sampler_kwargs", "num_negs_per_pos", 0, r"0 is less than the minimum of 1"),
    ("fb15k237/conve", "loss_kwargs", "reduction", "avg", r"'avg' is not one of \['mean', 'sum'\]"),
    (
        "nations/transe",
        "optimizer_kwargs",
        "betas",
        [0.9, 1.0],
        r"1\.0 is greater than or equal to the maximum",
    ),
    (
        "nations/transe",
        "regularizer_kwargs",
        "weight",
        -0.01,
        r"-0\.01 is less than the minimum of 0; weight must",
    ),
]


@pytest.mark.parametrize(
    ("pair", "section", "keyword", "value", "expected"),
    BAD_VALUES,
    ids=[f"{pair}-{keyword}={value!r}" for pair, _, keyword, value, _ in BAD_VALUES],
)
def test_a_value_the_receiving_class_refuses_is_named_with_what_it_accepts(
    tmp_path, pair, section, keyword, value, expected
):
    document = yaml.safe_load((REPO / f"config/hyperparameters/{pair}.yaml").read_text())
    document["pipeline"].setdefault(section, {})[keyword] = value
    with pytest.raises(KgrankInputError) as caught:
        load_hyperparameters(_write(tmp_path, document))
    message = str(caught.value)
    assert "\n" not in message
    key = re.escape(f"pair.yaml: key pipeline.{section}.{keyword}")
    assert re.search(key + r"(\.\d+)?: " + expected, message), message
    # what is accepted, and the fix
    assert " must be " in message and message.endswith("; write such a value")


def test_every_kwargs_section_takes_the_value_table():
    """One declaration: each `*_kwargs` of the pipeline refers to $defs/values."""
    from kgrank.training.hyperparameters import _schema

    pipeline = _schema()["properties"]["pipeline"]["properties"]
    sections = {key for key in pipeline if key.endswith("_kwargs") and key != "dataset_kwargs"}
    assert sections == {
        "model_kwargs",
        "loss_kwargs",
        "optimizer_kwargs",
        "regularizer_kwargs",
        "negative_sampler_kwargs",
        "training_kwargs",
    }
    assert all(pipeline[key]["$ref"] == "#/$defs/values" for key in sections)
    # every entry says what it accepts, for the error
    values = _schema()["$defs"]["values"]
    entries = {**values["properties"], **values["patternProperties"]}
    assert all(entry.get("description") for entry in entries.values())


def test_every_budget_key_replaces_a_keyword_of_the_table():
    from kgrank.training.hyperparameters import BUDGET_KEYWORDS, _schema
    from kgrank.workflow.config import PAIR_BUDGET_KEYS

    assert set(BUDGET_KEYWORDS.values()) <= set(_schema()["$defs"]["values"]["properties"])
    # the two keys with names for values: the value table holds numbers
    assert set(PAIR_BUDGET_KEYS) - {"training_loop", "loss"} <= set(BUDGET_KEYWORDS)


@pytest.mark.parametrize(
    ("keyword", "value", "expected"),
    [
        ("num_epochs", 0, r"--max-epochs: 0 is less than the minimum of 1; --max-epochs must be a whole"),
        ("lr", -0.1, r"--max-epochs: -0\.1 is less than or equal to the minimum of 0"),
        ("batch_size", 2.5, r"--max-epochs: 2\.5 is not of type 'integer'"),
    ],
)
def test_check_value_names_where_the_value_came_from(keyword, value, expected):
    from kgrank.training.hyperparameters import check_value

    with pytest.raises(KgrankInputError, match=expected):
        check_value(keyword, value, "--max-epochs", "--max-epochs")
    check_value(keyword, 1, "--max-epochs")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda pipeline: pipeline.update(model="complx"), r"\.c1\.model: unknown model 'complx'"),
        (lambda pipeline: pipeline.update(optimzer="adam"), r"\.c1\.optimzer: Additional properties"),
        (
            lambda pipeline: pipeline["optimizer_kwargs"].update(lr=-1),
            r"\.c1\.optimizer_kwargs\.lr: -1 is less",
        ),
        (lambda pipeline: pipeline.pop("optimizer"), r"\.c1: 'optimizer' is a required property"),
    ],
)
def test_an_inline_pipeline_is_named_by_its_config_key(change, expected):
    from kgrank.training.hyperparameters import validate_pipeline

    pipeline = _valid()["pipeline"]
    change(pipeline)
    with pytest.raises(
        KgrankInputError, match=r"^cfg\.yaml: key studies\.openworld\.family_tree\.configurations" + expected
    ):
        validate_pipeline(pipeline, "cfg.yaml", "studies.openworld.family_tree.configurations.c1")
    with pytest.raises(KgrankInputError, match=r"cfg\.yaml: key c1: expected a mapping"):
        validate_pipeline(["transe"], "cfg.yaml", "c1")
