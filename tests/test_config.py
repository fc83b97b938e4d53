import pytest
import yaml
from conftest import REPO

from kgrank.config import check_config, check_pairs
from kgrank.errors import KgrankInputError

SCHEMA = REPO / "workflow/schemas/config.schema.yaml"


def _default():
    return yaml.safe_load((REPO / "config/config.yaml").read_text())


@pytest.mark.parametrize("path", [REPO / "config/config.yaml", REPO / ".test/config.yaml"])
def test_shipped_configs_validate(path):
    config = yaml.safe_load(path.read_text())
    check_config(config, SCHEMA, source=str(path))
    check_pairs(config["datasets"], config["models"], REPO / "config/hyperparameters")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda config: config["budget"].update(max_epochs=0), r"key budget\.max_epochs: 0 is less than"),
        (lambda config: config.update(sed=1), r"key \(top level\): Additional properties .*'sed'"),
        (lambda config: config["datasets"].update(x={"source": "web"}), r"key datasets\.x\.source: 'web'"),
        (lambda config: config.update(models=[]), r"key models: \[\] should be non-empty"),
    ],
)
def test_bad_keys_are_named(change, message):
    config = _default()
    change(config)
    with pytest.raises(KgrankInputError, match=f"config.yaml: {message}"):
        check_config(config, SCHEMA, source="config.yaml")


def test_misplaced_hyperparameter_file(tmp_path):
    folder = tmp_path / "nations"
    folder.mkdir()
    text = (REPO / "config/hyperparameters/kinships/transe.yaml").read_text()
    (folder / "transe.yaml").write_text(text)
    with pytest.raises(
        KgrankInputError, match="key dataset: says 'kinships' but the file's place says 'nations'"
    ):
        check_pairs({"nations": {}}, ["transe"], tmp_path)
