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


def test_pair_budget_precedence_and_words():
    from kgrank.config import budget_caption, describe_budget, pair_budget

    budget = {
        "max_epochs": 100,
        "max_epochs_by_model": {"rotate": 20},
        "by_dataset": {
            "fb15k237": {
                "rotate": {"max_epochs": 4, "num_negs_per_pos": 16},
                "tucker": {"max_epochs": 1, "training_loop": "slcwa", "num_negs_per_pos": 1},
            }
        },
    }
    assert pair_budget(budget, "nations", "rotate")["max_epochs"] == 20
    assert pair_budget(budget, "nations", "transe") == {
        "max_epochs": 100,
        "training_loop": None,
        "num_negs_per_pos": None,
    }
    tucker = pair_budget(budget, "fb15k237", "tucker")
    assert tucker == {"max_epochs": 1, "training_loop": "slcwa", "num_negs_per_pos": 1}
    assert describe_budget(tucker) == "1 epoch (sLCWA, 1 negatives)"
    assert describe_budget(pair_budget(budget, "fb15k237", "rotate")) == "4 epochs (16 negatives)"
    caption = budget_caption(budget, ["nations", "kinships", "fb15k237"], ["rotate", "tucker"])
    assert "nations and kinships: rotate 20 epochs, tucker 100 epochs" in caption
    assert "fb15k237: rotate 4 epochs" in caption
    assert budget_caption({"max_epochs": None}, ["nations"], ["rotate"]).startswith(
        "Training budget: the published configuration"
    )


def test_budget_for_an_untrained_pair_is_refused():
    from kgrank.config import check_budget

    budget = {"max_epochs": 1, "by_dataset": {"fb15k237": {"transE": {"max_epochs": 2}}}}
    with pytest.raises(
        KgrankInputError, match=r"key budget.by_dataset.fb15k237.transE: no such trained pair"
    ):
        check_budget(budget, ["fb15k237"], ["transe"])
    check_budget(budget, ["fb15k237"], ["transE"])
