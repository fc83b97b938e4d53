import pytest
import yaml
from conftest import REPO

from kgrank.errors import KgrankInputError
from kgrank.hyperparameters import import_published, load_hyperparameters

SHIPPED = sorted((REPO / "config" / "hyperparameters").glob("*/*.yaml"))


def test_all_sixteen_pairs_ship():
    assert len(SHIPPED) == 16


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: f"{path.parent.name}/{path.stem}")
def test_shipped_files_validate_and_match_their_place(path):
    loaded = load_hyperparameters(path)
    assert (loaded["dataset"], loaded["model"]) == (path.parent.name, path.stem)
    assert loaded["source"]["used_by_case_study"]["repo"] == "pykeen/ranking-metrics-manuscript"


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
