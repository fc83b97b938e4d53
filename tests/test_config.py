import copy
import re
from pathlib import Path

import pytest
import yaml
from conftest import REPO

from kgrank.data.names import NAME_PATTERN, PAIR_PATTERN, is_name
from kgrank.errors import KgrankInputError
from kgrank.workflow.config import (
    budget_columns,
    check_config,
    check_datasets,
    check_external_systems,
    check_pairs,
    check_yaml_file,
    external_budget_columns,
    external_system_paths,
    study_enabled,
    study_schemas,
    training_runs,
)

SCHEMA = REPO / "src/kgrank/schemas/config.schema.yaml"
STUDY_SCHEMAS = REPO / "src/kgrank/schemas/studies"
SHIPPED = [REPO / "config/config.yaml", REPO / "config/paper.yaml", REPO / ".test/config.yaml"]


def _default():
    return yaml.safe_load((REPO / "config/config.yaml").read_text())


def _schema(path):
    return yaml.safe_load(path.read_text())


SHIPPED_SCHEMAS = sorted((REPO / "src/kgrank/schemas").rglob("*.yaml"))


@pytest.mark.parametrize("path", SHIPPED_SCHEMAS, ids=lambda path: path.name)
def test_shipped_schemas_read_as_pyyaml_reads_them(path):
    """kgrank.data.io.parse_schema (libyaml where PyYAML has it) gives what yaml.safe_load gives,
    types included (1, 1.0 and True compare equal in Python, not in JSON)."""
    import json

    from kgrank.data.io import parse_schema

    text = path.read_text(encoding="utf-8")
    assert json.dumps(parse_schema(text), sort_keys=True) == json.dumps(yaml.safe_load(text), sort_keys=True)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: str(path.relative_to(REPO)))
def test_shipped_configs_validate(path, tmp_path):
    """Every check that runs before any job (common.smk and the study rule files) passes."""
    from kgrank.studies.ambiguity.settings import check_candidate_sizes
    from kgrank.studies.openworld.settings import check_family_tree_settings, check_simulation_settings
    from kgrank.workflow.config import check_budget, known_entity_count, study_pairs

    config = yaml.safe_load(path.read_text())
    check_config(config, SCHEMA, source=str(path), study_schema_dir=STUDY_SCHEMAS)
    config = _filled(config)
    train = [name for name, dataset in config["datasets"].items() if dataset.get("train", True)]
    hyperparameters = check_pairs(train, config["models"], REPO / "config/hyperparameters")
    for dataset, model in study_pairs(config):
        hyperparameters |= check_pairs([dataset], [model], REPO / "config/hyperparameters")
    check_budget(
        config["budget"],
        train,
        config["models"],
        study_pairs(config),
        REPO / "config/hyperparameters",
        hyperparameters,
        source=str(path),
    )
    openworld = config["studies"]["openworld"]
    check_simulation_settings(openworld, str(path))
    check_family_tree_settings(openworld["family_tree"], str(path))
    # as parse time knows them: no dataset prepared yet
    counts = {
        name: known_entity_count(name, config["datasets"][name], tmp_path / "none.json") for name in train
    }
    check_candidate_sizes(config["studies"]["ambiguity"]["candidate_sizes"], counts, str(path))


def _filled(config):
    """The config with every default of its schemas, as common.smk fills it."""
    from snakemake.utils import validate

    config = copy.deepcopy(config)
    validate(config, str(SCHEMA))
    for study, schema in study_schemas(STUDY_SCHEMAS).items():
        if config["studies"].get(study) is None:
            config["studies"][study] = {"enabled": study in config["studies"]}
        validate(config["studies"][study], str(schema))
    return config


@pytest.mark.parametrize("path", SHIPPED, ids=lambda path: str(path.relative_to(REPO)))
def test_shipped_configs_run_both_studies(path):
    config = yaml.safe_load(path.read_text())
    assert set(config["studies"]) <= set(study_schemas(STUDY_SCHEMAS))
    assert study_enabled(config, "paper") and study_enabled(config, "moments")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # the schema holds the budget's types; its ranges are the value table's (check_budget)
        (
            lambda config: config["budget"].update(max_epochs="10"),
            r"key budget\.max_epochs: '10' is not of type 'integer', 'null'",
        ),
        (lambda config: config.update(sed=1), r"key sed: Additional properties .*'sed'"),
        (lambda config: config["datasets"].update(x={"source": "web"}), r"key datasets\.x\.source: 'web'"),
        (lambda config: config.update(models=[]), r"key models: \[\] should be non-empty"),
        (lambda config: config["metrics"].update(hits=[0]), r"key metrics\.hits\.0: 0 is less than"),
        (
            lambda config: config["ranks"].update(filter_splits=["tset"]),
            r"key ranks\.filter_splits\.0: 'tset' is not one of",
        ),
        # the keys that moved under `studies` are refused in their old places
        (
            lambda config: config.update(published_values="x.tsv"),
            r"key published_values: Additional properties .*'published_values'",
        ),
        (
            lambda config: config.update(published_results="x.tsv"),
            r"key published_results: Additional properties .*'published_results'",
        ),
        (
            lambda config: config.update(moments={"replicates": 2000}),
            r"key moments: Additional properties .*'moments'",
        ),
        (lambda config: config["studies"].update(moments=5), r"key studies\.moments: 5 is not of type"),
    ],
)
def test_bad_keys_are_named(change, message):
    config = _default()
    change(config)
    with pytest.raises(KgrankInputError, match=f"config.yaml: {message}"):
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)


@pytest.mark.parametrize(
    ("change", "key", "schema"),
    [
        (lambda studies: studies.update(bogus={}), "studies.bogus", "studies"),
        (
            lambda studies: studies["moments"].update(montecarlo_replicates=5),
            "studies.moments.montecarlo_replicates",
            "moments",
        ),
        (lambda studies: studies["moments"].update(splits=["tset"]), "studies.moments.splits.0", "moments"),
        (lambda studies: studies["moments"].update(enabled="no"), "studies.moments.enabled", "moments"),
        (
            lambda studies: studies["paper"].update(table2_reference={"num_candidates": 0}),
            "studies.paper.table2_reference.num_candidates",
            "paper",
        ),
        (
            lambda studies: studies["paper"].update(published_values=3),
            "studies.paper.published_values",
            "paper",
        ),
    ],
)
def test_bad_study_keys_are_named(change, key, schema):
    config = _default()
    change(config["studies"])
    with pytest.raises(KgrankInputError, match=f"^config.yaml: key {re.escape(key)}: ") as caught:
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)
    message = str(caught.value)
    assert "\n" not in message
    # the fix: where the allowed values are written down
    expected = STUDY_SCHEMAS if schema == "studies" else STUDY_SCHEMAS / f"{schema}.schema.yaml"
    assert str(expected) in message


@pytest.mark.parametrize("value", [float("nan"), float("inf"), -float("inf")])
@pytest.mark.parametrize(
    ("place", "key"),
    [
        (lambda config, value: config["budget"].update(learning_rate=value), "budget.learning_rate"),
        (lambda config, value: config.update(seed=value), "seed"),
        (
            lambda config, value: config["studies"]["moments"].update(montecarlo=value),
            "studies.moments.montecarlo",
        ),
    ],
    ids=["budget-rate", "seed", "study-key"],
)
def test_a_nan_or_infinite_number_is_refused_wherever_it_stands(place, key, value):
    # the schemas' bounds let both through: NaN fails no comparison, .inf passes every lower bound
    config = _default()
    place(config, value)
    with pytest.raises(
        KgrankInputError, match=f"^config.yaml: key {re.escape(key)}: -?(nan|inf) is not a finite"
    ):
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)


def test_unknown_study_lists_the_studies():
    config = _default()
    config["studies"]["moment"] = {}
    with pytest.raises(
        KgrankInputError, match=r"key studies\.moment: no such study; the studies are"
    ) as caught:
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)
    assert "'moments'" in str(caught.value) and "'paper'" in str(caught.value)


def test_unknown_key_in_a_study_names_the_study_and_the_key():
    config = _default()
    config["studies"]["paper"]["bogus"] = 1
    with pytest.raises(KgrankInputError, match=r"key studies\.paper\b.*'bogus'"):
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)


def test_unknown_key_in_a_study_is_named_by_its_full_path():
    config = _default()
    config["studies"]["paper"]["bogus"] = 1
    with pytest.raises(KgrankInputError, match=r"key studies\.paper\.bogus\b"):
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)


# Every place where the config names a dataset, model, study or system, each given a name
# that would leave results/ ('..', '/', an absolute path), hide a file or shadow another's
# (results/ranks/<dataset>/<model>.sampled-<k>.parquet beside <model>.parquet).
BAD_NAMES = [
    (lambda config, bad: config["datasets"].update({bad: {"source": "pykeen"}}), "datasets.{bad!r}"),
    (lambda config, bad: config.update(models=["transe", bad]), "models.1: {bad!r}"),
    (lambda config, bad: config["studies"].update({bad: {}}), "studies.{bad!r}"),
    (lambda config, bad: config.update(external_systems={bad: {}}), "external_systems.{bad!r}"),
    (
        lambda config, bad: config.update(external_systems={"nations": {bad: {"ranks": "r.csv"}}}),
        "external_systems.nations.{bad!r}",
    ),
    (
        lambda config, bad: config["budget"].update(max_epochs_by_model={bad: 3}),
        "budget.max_epochs_by_model.{bad!r}",
    ),
    (lambda config, bad: config["budget"]["by_dataset"].update({bad: {}}), "budget.by_dataset.{bad!r}"),
    (
        lambda config, bad: config["budget"]["by_dataset"].update(nations={bad: {"max_epochs": 3}}),
        "budget.by_dataset.nations.{bad!r}",
    ),
    (lambda config, bad: config["studies"]["ir"].update(dataset=bad), "studies.ir.dataset: {bad!r}"),
    (
        lambda config, bad: config["studies"]["ir"].update(systems=["transe", bad]),
        "studies.ir.systems.1: {bad!r}",
    ),
    (
        lambda config, bad: config["studies"]["ir"].update(other_datasets=[bad]),
        "studies.ir.other_datasets.0: {bad!r}",
    ),
]


@pytest.mark.parametrize("bad", ["../x", "/tmp/x", ".hidden", "a/b", "transe.sampled-5", "-x", ""])
@pytest.mark.parametrize(("change", "key"), BAD_NAMES, ids=[key.split(":")[0] for _, key in BAD_NAMES])
def test_a_name_that_is_not_a_path_component_is_refused(change, key, bad):
    config = _default()
    change(config, bad)
    with pytest.raises(KgrankInputError) as raised:
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)
    assert str(raised.value) == (
        f"config.yaml: key {key.format(bad=bad)}: a name may hold only letters, digits, '_' and '-', "
        "and must start with a letter or digit; rename it"
    )


@pytest.mark.parametrize("bad", ["nations/../x", "../x/transe", "nations/transe/x", "nations/.h", "nations"])
def test_a_subset_pair_that_is_not_two_names_is_refused(bad):
    config = _default()
    config["studies"]["ambiguity"]["subsets"] = {"pairs": [bad]}
    with pytest.raises(
        KgrankInputError,
        match=rf"^config\.yaml: key studies\.ambiguity\.subsets\.pairs\.0: {re.escape(repr(bad))}: "
        r"a pair is <dataset>/<model>, each a name .*; rename it$",
    ):
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)


def test_the_schemas_name_pattern_is_the_packages():
    """The config schema and kgrank.data.names state the rule once each; they must agree."""
    assert _schema(SCHEMA)["$defs"]["name"]["pattern"] == NAME_PATTERN
    assert [is_name(name) for name in ("fb15k237", "wn18rr", "pk-ranks", "transe_d32", "A1")] == [True] * 5
    assert not any(is_name(name) for name in ("..", "a.b", "a/b", "_a", "-a", "", "a\n", "é", None, 5))


def _patterns(node):
    if isinstance(node, dict):
        yield from ([node["pattern"]] if isinstance(node.get("pattern"), str) else [])
        for value in node.values():
            yield from _patterns(value)
    elif isinstance(node, list):
        for value in node:
            yield from _patterns(value)


def test_every_name_pattern_of_the_schemas_is_one_of_the_packages():
    """The study fragments repeat the name and pair patterns; a copy that drifts would lose
    its readable message (kgrank.data.names.RULES) and maybe its strictness."""
    for path in [SCHEMA, *sorted(STUDY_SCHEMAS.glob("*.schema.yaml"))]:
        for pattern in _patterns(_schema(path)):
            if "A-Za-z0-9" in pattern:
                assert pattern in (NAME_PATTERN, PAIR_PATTERN), (path.name, pattern)


def test_a_name_ending_in_a_newline_is_refused_by_the_schema():
    config = _default()
    config["models"] = ["transe\n"]
    with pytest.raises(KgrankInputError, match="a name may hold only letters"):
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)


@pytest.mark.parametrize("section", [{}, None, {"enabled": True}, {"montecarlo_replicates": 500}])
def test_a_listed_study_section_validates(section):
    config = _default()
    config["studies"] = {"moments": section}
    check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)


def test_no_studies_section_validates():
    config = _default()
    del config["studies"]
    check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)
    assert not study_enabled(config, "paper") and not study_enabled(config, "moments")


@pytest.mark.parametrize(
    ("studies", "expected"),
    [
        ({"paper": {}}, True),
        ({"paper": {"enabled": True}}, True),
        ({"paper": {"published_values": "x.tsv"}}, True),
        ({"paper": {"enabled": False}}, False),
        ({"paper": {"enabled": False, "published_values": "x.tsv"}}, False),
        ({"moments": {}}, False),
        ({}, False),
        (None, False),
    ],
)
def test_study_enabled(studies, expected):
    assert study_enabled({"studies": studies}, "paper") is expected
    assert study_enabled({"seed": 1}, "paper") is False


def test_a_listed_null_study_is_enabled():
    assert study_enabled({"studies": {"paper": None}}, "paper") is True


def test_budget_columns():
    pipeline = {"training_loop": "lcwa", "training_kwargs": {"num_epochs": 351}}
    published = {"epochs": 351, "published_epochs": 351, "hyperparameters": {"pipeline": pipeline}}
    assert (
        budget_columns(published).items()
        >= {
            "epochs": 351,
            "published_epochs": 351,
            "training_loop": "lcwa",
            "published_training_loop": "lcwa",
        }.items()
    )
    capped = {**published, "epochs": 5, "training_loop": "slcwa"}
    assert (
        budget_columns(capped).items()
        >= {
            "epochs": 5,
            "published_epochs": 351,
            "training_loop": "slcwa",
            "published_training_loop": "lcwa",
        }.items()
    )


# --- the defaults are written once in the schemas; the Python side must agree ------------


def _cli_default(command, option):
    import argparse

    from kgrank.cli.main import build_parser

    (subparsers,) = (
        action for action in build_parser()._actions if isinstance(action, argparse._SubParsersAction)
    )
    (action,) = (action for action in subparsers.choices[command]._actions if option in action.option_strings)
    return action.default


def test_python_defaults_agree_with_the_schema():
    from kgrank.data.datasets import SPLITS
    from kgrank.defaults import DEFAULT_FILTER_SPLITS, DEFAULT_HITS

    properties = _schema(SCHEMA)["properties"]
    hits = properties["metrics"]["properties"]["hits"]["default"]
    filter_splits = properties["ranks"]["properties"]["filter_splits"]
    assert hits == list(DEFAULT_HITS)
    assert filter_splits["default"] == list(DEFAULT_FILTER_SPLITS)
    assert filter_splits["items"]["enum"] == list(SPLITS)
    # the stage commands' defaults are the same ones (a study's command takes them from its rule)
    assert _cli_default("metrics", "--hits") == hits
    confidence = properties["metrics"]["properties"]["confidence"]["default"]
    assert _cli_default("metrics", "--confidence") == confidence
    assert _cli_default("ranks", "--filter-splits") == filter_splits["default"]
    ranks = properties["ranks"]["properties"]
    assert _cli_default("ranks", "--batch-size") == ranks["batch_size"]["default"]
    assert _cli_default("ranks", "--scoring") == ranks["scoring"]["default"]
    assert _cli_default("train", "--device") == properties["device"]["default"]


def _setting_keys(schema) -> set[str]:
    """Every value key of a study's settings, at any depth (sections are not values)."""
    keys = set()
    for key, child in (schema.get("properties") or {}).items():
        if child.get("type") == "object":
            keys |= _setting_keys(child)
        else:
            keys.add(key)
    return keys


def test_a_study_setting_reaches_its_command_one_way():
    """A setting a command reads (marked for it under x-commands) arrives in --settings
    alone: no option of that command carries it a second way, with a default of its own
    that could drift from the schema's."""
    import argparse
    import importlib

    from kgrank.studies import study_names
    from kgrank.workflow.settings import command_keys

    checked = 0
    for study in study_names():
        parser = argparse.ArgumentParser(prog="kgrank")
        commands = parser.add_subparsers()
        importlib.import_module(f"kgrank.studies.{study}.commands").add_commands(commands)
        for name, command in commands.choices.items():
            read = {key.rsplit(".", 1)[-1] for key in command_keys(study, name)}
            options = {action.dest for action in command._actions}
            assert not read & options, (
                f"kgrank {name}: {sorted(read & options)} both in --settings and as options"
            )
            checked += bool(read)
    assert checked >= 20  # the commands that read settings, across the six studies


def test_every_study_schema_is_an_object_with_enabled():
    schemas = study_schemas(STUDY_SCHEMAS)
    assert {"paper", "moments"} <= set(schemas)
    for name, path in schemas.items():
        schema = _schema(path)
        assert schema["type"] == "object" and schema["additionalProperties"] is False, name
        assert schema["properties"]["enabled"] == {
            "type": "boolean",
            "default": True,
            "description": schema["properties"]["enabled"]["description"],
        }, name


def test_schema_defaults_fill_a_bare_study():
    """Snakemake's validate fills a listed study's defaults from its fragment."""
    from snakemake.utils import validate

    section = {}
    validate(section, str(STUDY_SCHEMAS / "moments.schema.yaml"))
    assert section == {
        "enabled": True,
        "splits": ["train", "valid", "test"],
        "montecarlo_replicates": 10000,
        "montecarlo_alpha": 0.01,
        "formula_montecarlo_replicates": 200000,
    }
    config = _default()
    validate(config, str(SCHEMA))
    assert config["metrics"]["hits"] == [1, 3, 5, 10]


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
    from kgrank.workflow.config import budget_caption, describe_budget, pair_budget

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
    assert (
        pair_budget(budget, "nations", "transe").items()
        >= {
            "max_epochs": 100,
            "training_loop": None,
            "num_negs_per_pos": None,
        }.items()
    )
    tucker = pair_budget(budget, "fb15k237", "tucker")
    assert tucker == {
        "max_epochs": 1,
        "training_loop": "slcwa",
        "num_negs_per_pos": 1,
        "embedding_dim": None,
        "relation_dim": None,
        "batch_size": None,
        "learning_rate": None,
        "loss": None,
        "label_smoothing": None,
        "early_stopping": None,
    }
    assert describe_budget(tucker) == "1 epoch (sLCWA, 1 negatives)"
    smaller = {
        **tucker,
        "embedding_dim": 128,
        "batch_size": 512,
        "learning_rate": 0.01,
        "early_stopping": {"frequency": 5},
    }
    assert (
        describe_budget(smaller, {"frequency": 5, "patience": 2})
        == "at most 1 epoch (sLCWA, 1 negatives, dim 128, batch 512, lr 0.01)"
    )
    other_loss = {**tucker, "loss": "nssa", "label_smoothing": 0.0}
    assert describe_budget(other_loss) == "1 epoch (sLCWA, 1 negatives, nssa loss, label smoothing 0)"
    stopping = {**budget, "early_stopping": {"frequency": 5, "patience": 2, "relative_delta": 0.002}}
    assert "every 5 epochs, patience 2" in budget_caption(stopping, ["nations"], ["rotate"])
    # a pair's own rule replaces the budget's
    own = {**stopping, "by_dataset": {"fb15k237": {"tucker": {"early_stopping": {"frequency": 1}}}}}
    assert pair_budget(own, "fb15k237", "tucker")["early_stopping"] == {"frequency": 1}
    assert pair_budget(own, "nations", "tucker")["early_stopping"]["frequency"] == 5
    # the shared rule is stated once, a pair's own rule with the pair
    caption = budget_caption(own, ["nations", "fb15k237"], ["tucker"])
    assert "nations: tucker at most 100 epochs; " in caption
    assert "fb15k237: tucker at most 100 epochs (validated every epoch, patience 2)" in caption
    assert caption.endswith(
        "(validated every 5 epochs, patience 2 unless the pair says otherwise; best weights kept)."
    )
    patient = {**own, "by_dataset": {"fb15k237": {"tucker": {"early_stopping": {"frequency": 5}}}}}
    assert "fb15k237: tucker at most 100 epochs. At most" in budget_caption(patient, ["fb15k237"], ["tucker"])
    assert describe_budget(pair_budget(budget, "fb15k237", "rotate")) == "4 epochs (16 negatives)"
    caption = budget_caption(budget, ["nations", "kinships", "fb15k237"], ["rotate", "tucker"])
    assert "nations and kinships: rotate 20 epochs, tucker 100 epochs" in caption
    assert "fb15k237: rotate 4 epochs" in caption
    assert budget_caption({"max_epochs": None}, ["nations"], ["rotate"]).startswith(
        "Training budget: the published configuration"
    )


def test_budget_for_an_untrained_pair_is_refused():
    from kgrank.workflow.config import check_budget

    budget = {"max_epochs": 1, "by_dataset": {"fb15k237": {"transE": {"max_epochs": 2}}}}
    with pytest.raises(
        KgrankInputError, match=r"key budget.by_dataset.fb15k237.transE: no such trained pair"
    ):
        check_budget(budget, ["fb15k237"], ["transe"])
    check_budget(budget, ["fb15k237"], ["transE"])


def test_unknown_pykeen_dataset_is_refused_with_a_suggestion():
    with pytest.raises(
        KgrankInputError,
        match=r"cfg\.yaml: key datasets\.nation: PyKEEN has no dataset 'nation'; did you mean nations",
    ):
        check_datasets({"nations": {"source": "pykeen"}, "nation": {"source": "pykeen"}}, source="cfg.yaml")
    # an archive's name is the user's to choose
    check_datasets({"my_graph": {"source": "archive", "archive": "graph.tar.gz"}})


def test_config_file_that_is_not_yaml_is_named_with_its_line(tmp_path):
    path = tmp_path / "config.yaml"
    path.write_text("seed: 7\nmodels: [transe\ndatasets: {}\n")
    with pytest.raises(
        KgrankInputError, match=r"config\.yaml, line 3, column [0-9]+: not valid YAML \(expected ',' or '\]'"
    ):
        check_yaml_file(path)
    path.write_text("seed: 7\n")
    check_yaml_file(path)


# --- a dataset from a local folder --------------------------------------------------------


def _split_folder(tmp_path, names=("train.tsv", "valid.tsv", "test.txt")):
    folder = tmp_path / "mykg"
    folder.mkdir()
    for name in names:
        (folder / name).write_text("a\tr\tb\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize(
    "entry",
    [
        {"source": "folder", "path": "FOLDER"},
        {"source": "folder", "path": "FOLDER", "header": "auto", "train": False},
        {"source": "folder", "path": "FOLDER", "header": False, "sha256": {"train": "a" * 64}},
        {
            "source": "folder",
            "path": "FOLDER",
            "sha256": {"train": "a" * 64, "valid": "B" * 64, "test": "0" * 64},
        },
        # sha256 is optional for an archive now, and it may say how to read header lines
        {"source": "archive", "archive": "graph.tar.gz"},
        {"source": "archive", "archive": "graph.tar.gz", "sha256": "f" * 64, "header": True},
    ],
)
def test_a_local_dataset_entry_validates(tmp_path, entry):
    folder = _split_folder(tmp_path)
    entry = {key: str(folder) if value == "FOLDER" else value for key, value in entry.items()}
    config = _default()
    config["datasets"] = {"mykg": entry}
    check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)
    check_datasets(config["datasets"], source="config.yaml")


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"source": "folder"}, r"key datasets\.mykg: 'path' is a required property"),
        (
            {"source": "folder", "path": "FOLDER", "header": "yes"},
            r"key datasets\.mykg\.header: 'yes' is not one of",
        ),
        ({"source": "folder", "path": "FOLDER", "sha256": {"train": "abc"}}, r"key datasets\.mykg\.sha256"),
        ({"source": "folder", "path": "FOLDER", "sha256": {"tset": "a" * 64}}, r"key datasets\.mykg\.sha256"),
        (
            {"source": "folder", "path": "FOLDER", "folder": "x"},
            r"key datasets\.mykg\.folder: Additional properties",
        ),
    ],
)
def test_a_bad_folder_entry_is_named(tmp_path, entry, message):
    folder = _split_folder(tmp_path)
    entry = {key: str(folder) if value == "FOLDER" else value for key, value in entry.items()}
    config = _default()
    config["datasets"] = {"mykg": entry}
    with pytest.raises(KgrankInputError, match=f"^config.yaml: {message}"):
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)


@pytest.mark.parametrize(
    ("names", "entry", "message"),
    [
        (
            ("train.tsv", "valid.tsv", "test.txt"),
            {"path": "NOWHERE"},
            r"key datasets\.mykg\.path: folder .*nowhere not found; fix the path$",
        ),
        (
            ("train.tsv", "test.tsv"),
            {},
            r"key datasets\.mykg\.path: .*mykg: no valid\.tsv or valid\.txt in the folder; add the valid",
        ),
        (
            ("train.tsv", "valid.tsv", "test.tsv", "train.txt"),
            {},
            r"key datasets\.mykg\.path: .*mykg: both train\.tsv and train\.txt are there; keep one of them",
        ),
        (
            ("train.tsv", "valid.tsv", "test.tsv"),
            {"sha256": "a" * 64},
            r"key datasets\.mykg\.sha256: a folder has one sha256 per split; write sha256: \{train: HEX",
        ),
        (
            ("train.tsv", "valid.tsv", "test.tsv"),
            {"archive": "graph.tar.gz"},
            r"key datasets\.mykg\.archive: not read with source: folder \(only with source: archive\)",
        ),
    ],
)
def test_check_datasets_refuses_a_folder_it_cannot_read(tmp_path, names, entry, message):
    folder = _split_folder(tmp_path, names)
    entry = {"source": "folder", "path": str(folder), **entry}
    if entry["path"] == "NOWHERE":
        entry["path"] = str(tmp_path / "nowhere")
    with pytest.raises(KgrankInputError, match=f"^cfg.yaml: {message}") as caught:
        check_datasets({"mykg": entry}, source="cfg.yaml")
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            {"source": "pykeen", "header": False},
            r"key datasets\.nations\.header: not read with source: pykeen",
        ),
        ({"source": "archive", "archive": "g.tar.gz", "path": "x"}, r"key datasets\.nations\.path: not read"),
        (
            {"source": "archive", "archive": "g.tar.gz", "sha256": {"train": "a" * 64}},
            r"key datasets\.nations\.sha256: an archive has one sha256; write sha256: HEX",
        ),
    ],
)
def test_a_key_the_source_does_not_read_is_refused(entry, message):
    with pytest.raises(KgrankInputError, match=f"^cfg.yaml: {message}"):
        check_datasets({"nations": entry}, source="cfg.yaml")


def test_a_pykeen_entry_may_keep_an_archives_keys():
    """As before: switching `source` between archive and pykeen stays a one-line change."""
    check_datasets({"nations": {"source": "pykeen", "archive": "g.tar.gz", "sha256": "a" * 64}})


EXTERNAL = Path(__file__).parent / "data" / "external-nations"


@pytest.mark.parametrize(
    ("systems", "message"),
    [
        ({"natons": {"a": {"ranks": "ranks.csv"}}}, "key external_systems.natons: no such dataset"),
        ({"kinships": {"a": {"ranks": "ranks.csv"}}}, "has train: false"),
        ({"nations": {"transe": {"ranks": "ranks.csv"}}}, "'transe' is also a trained model"),
        ({"nations": {"a": {"ranks": "ranks.csv", "model": "pykeen-distmult"}}}, "give exactly one of"),
        ({"nations": {"a": {"scores": "scores.npy"}}}, "scores needs its queries; add queries: FILE"),
        ({"nations": {"a": {"ranks": "ranks.csv", "queries": "queries.tsv"}}}, "not read with ranks"),
        ({"nations": {"a": {"queries": "queries.tsv"}}}, "give exactly one of model: DIR"),
        ({"nations": {"a": {"ranks": "missing.csv"}}}, "external_systems.nations.a.ranks:"),
        ({"nations": {"a": {"model": "."}}}, "holds no trained_model.pkl"),
        (
            {"nations": {"a": {"model": "pykeen-distmult"}}},
            "runs code from the file when it is loaded; add trusted",
        ),
        ({"nations": {"a": {"ranks": "ranks.csv", "trusted": True}}}, "a.trusted: only a PyKEEN folder's"),
        (
            {"nations": {"a": {"scores": "scores.npy", "queries": "queries.tsv", "rescore": False}}},
            "a.rescore: only",
        ),
    ],
    ids=[
        "unknown-dataset",
        "untrained-dataset",
        "name-of-a-model",
        "two-kinds",
        "scores-alone",
        "queries-with-ranks",
        "queries-alone",
        "no-file",
        "no-pickle",
        "an-untrusted-pickle",
        "trust-for-a-rank-table",
        "rescore-for-a-score-matrix",
    ],
)
def test_external_systems_are_checked_before_any_job(systems, message):
    datasets = {"nations": {"source": "pykeen"}, "kinships": {"source": "pykeen", "train": False}}
    with pytest.raises(KgrankInputError, match=re.escape(message)) as raised:
        check_external_systems(systems, datasets, ["transe"], EXTERNAL, source="c.yaml")
    assert "\n" not in str(raised.value) and str(raised.value).startswith("c.yaml: key external_systems.")


def test_external_systems_give_their_pairs():
    systems = {
        "nations": {
            "folder": {"model": "pykeen-distmult", "trusted": True},
            "scores": {"scores": "scores.npy", "queries": "queries.tsv", "identifiers": "labels"},
        }
    }
    pairs = check_external_systems(systems, {"nations": {}}, ["transe"], EXTERNAL)
    assert pairs == [("nations", "folder"), ("nations", "scores")]
    assert set(external_system_paths(systems["nations"]["scores"], EXTERNAL)) == {"scores", "queries"}


def test_an_external_system_has_no_training_budget():
    columns = external_budget_columns("ranks")
    assert columns["training_loop"] == "external (rank table)"
    resolved = {
        "hyperparameters": {"pipeline": {"training_loop": "lcwa", "training_kwargs": {"batch_size": 8}}},
        "epochs": 2,
        "published_epochs": 3,
    }
    assert list(columns) == list(budget_columns(resolved))
    assert all(value is None for key, value in columns.items() if key != "training_loop")


# --- values and settings that cannot do what they say, refused before any job ----------

NATIONS_MODELS = ["transe", "rotate", "tucker"]


def _pair_budget(**values):
    return {"max_epochs": 5, "by_dataset": {"nations": values}}


@pytest.mark.parametrize(
    ("budget", "expected"),
    [
        ({"max_epochs": 0}, r"key budget\.max_epochs: 0 is less than the minimum of 1; max_epochs must be "),
        ({"max_epochs": 2.5}, r"key budget\.max_epochs: 2\.5 is not of type 'integer'"),
        (
            {"max_epochs": 5, "max_epochs_by_model": {"rotate": 0}},
            r"key budget\.max_epochs_by_model\.rotate: 0 is less than the minimum of 1",
        ),
        (
            _pair_budget(transe={"learning_rate": -0.1}),
            r"key budget\.by_dataset\.nations\.transe\.learning_rate: -0\.1 is less than or equal to the "
            r"minimum of 0; learning_rate must be a learning rate > 0",
        ),
        (
            _pair_budget(transe={"learning_rate": 0}),
            r"key budget\.by_dataset\.nations\.transe\.learning_rate: 0 is less than or equal",
        ),
        (
            _pair_budget(transe={"max_epochs": 0}),
            r"key budget\.by_dataset\.nations\.transe\.max_epochs: 0 is less",
        ),
        (
            _pair_budget(transe={"batch_size": 0}),
            r"key budget\.by_dataset\.nations\.transe\.batch_size: 0 is less",
        ),
        (
            _pair_budget(transe={"embedding_dim": 0}),
            r"key budget\.by_dataset\.nations\.transe\.embedding_dim: 0 is less than the minimum",
        ),
        (
            _pair_budget(tucker={"relation_dim": -4}),
            r"key budget\.by_dataset\.nations\.tucker\.relation_dim: -4 is less than the minimum",
        ),
        (
            _pair_budget(rotate={"num_negs_per_pos": 0}),
            r"key budget\.by_dataset\.nations\.rotate\.num_negs_per_pos: 0 is less than the",
        ),
        # the pipeline the pair trains with its budget, validated like a file
        (
            _pair_budget(transe={"relation_dim": 8}),
            r"key budget\.by_dataset\.nations\.transe with nations/transe\.yaml: key "
            r"pipeline\.model_kwargs\.relation_dim: pykeen's TransE takes no argument 'relation_dim'",
        ),
        (
            _pair_budget(transe={"num_negs_per_pos": 8}),
            r"key budget\.by_dataset\.nations\.transe: num_negs_per_pos 8 given for the lcwa training loop",
        ),
    ],
    ids=[
        "max-epochs-0",
        "max-epochs-float",
        "model-cap-0",
        "negative-learning-rate",
        "zero-learning-rate",
        "pair-epochs-0",
        "batch-size-0",
        "embedding-dim-0",
        "negative-relation-dim",
        "negatives-0",
        "relation-dim-for-transe",
        "negatives-for-lcwa",
    ],
)
def test_a_budget_value_is_checked_against_the_keyword_it_replaces(budget, expected):
    from kgrank.workflow.config import check_budget

    hyperparameters = check_pairs(["nations"], NATIONS_MODELS, REPO / "config/hyperparameters")
    with pytest.raises(KgrankInputError, match="^cfg.yaml: " + expected) as caught:
        check_budget(budget, ["nations"], NATIONS_MODELS, (), None, hyperparameters, source="cfg.yaml")
    assert "\n" not in str(caught.value)


def _configuration(change):
    config = _filled(_default())
    family_tree = config["studies"]["openworld"]["family_tree"]
    change(family_tree["configurations"]["transe-d64"])
    return family_tree


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda pipeline: pipeline.update(model="complx"), r"\.model: unknown model 'complx'"),
        (lambda pipeline: pipeline.update(optimzer="adam"), r"\.optimzer: Additional properties"),
        (
            lambda pipeline: pipeline["optimizer_kwargs"].update(lr=-0.1),
            r"\.optimizer_kwargs\.lr: -0\.1 is less",
        ),
        (
            lambda pipeline: pipeline["model_kwargs"].update(embedding_dim=0),
            r"\.model_kwargs\.embedding_dim: 0 is",
        ),
        (
            lambda pipeline: pipeline["model_kwargs"].update(scoring_fct_norm="abc"),
            r"\.model_kwargs\.scoring_fct_norm: 'abc' is not one of \[1, 2\]",
        ),
        (
            lambda pipeline: pipeline["training_kwargs"].update(num_epochs=0),
            r"\.training_kwargs\.num_epochs: 0",
        ),
    ],
    ids=["unknown-model", "misspelt-key", "negative-lr", "zero-dimension", "unknown-norm", "no-epochs"],
)
def test_family_tree_configurations_are_checked_before_any_job(change, expected):
    from kgrank.studies.openworld.settings import check_family_tree_settings

    key = r"^cfg\.yaml: key studies\.openworld\.family_tree\.configurations\.transe-d64"
    with pytest.raises(KgrankInputError, match=key + expected):
        check_family_tree_settings(_configuration(change), "cfg.yaml")


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            lambda settings: settings["simulation"].update(entities=400, answers=400),
            r"simulation\.answers: 400 answers per query among 400 entities; a query needs fewer",
        ),
        (
            lambda settings: settings["simulation"].update(entities=40, answers=43),
            r"simulation\.answers: 43 answers per query among 40 entities",
        ),
        (
            lambda settings: settings["simulation"]["strength"].update(start=0.9, stop=0.3),
            r"simulation\.strength: start 0\.9 > stop 0\.3, so the strength grid is empty; give start <= ",
        ),
        (
            lambda settings: settings["inconsistency"].update(weaker_strengths=[0.95], gaps=[0.1]),
            r"inconsistency: every weaker strength \[0\.95\] plus every gap \[0\.1\] exceeds 1",
        ),
        (
            lambda settings: settings["saturation"].update(comparison_queries=7),
            r"saturation\.comparison_queries: 7 is not among studies\.openworld\.inconsistency\.query_counts",
        ),
        (
            lambda settings: settings["saturation"].update(low=0.9, high=0.4),
            r"saturation: low 0\.9 >= high 0\.4",
        ),
        (
            lambda settings: settings["saturation"].update(half_width=0.001),
            r"saturation\.low: 0\.4 has 1 grid strength\(s\) within half_width 0\.001",
        ),
    ],
    ids=[
        "answers-equal-entities",
        "answers-above-entities",
        "reversed-strengths",
        "no-pair-of-strengths",
        "comparison-not-simulated",
        "low-above-high",
        "slope-window-too-narrow",
    ],
)
def test_openworld_settings_that_cannot_run_stop_before_any_job(change, expected):
    from kgrank.studies.openworld.settings import check_simulation_settings

    settings = _filled(_default())["studies"]["openworld"]
    check_simulation_settings(settings, "cfg.yaml")
    change(settings)
    with pytest.raises(KgrankInputError, match=r"^cfg\.yaml: key studies\.openworld\." + expected):
        check_simulation_settings(settings, "cfg.yaml")


def test_a_candidate_size_no_dataset_has_is_refused():
    from kgrank.studies.ambiguity.settings import check_candidate_sizes

    counts = {"nations": 14, "kinships": 104}
    # above the smaller dataset only: that dataset keeps its candidates, by design
    check_candidate_sizes([10, 30, 100, "all"], counts, "cfg.yaml")
    for size in (104, 1000):
        with pytest.raises(
            KgrankInputError,
            match=rf"^cfg\.yaml: key studies\.ambiguity\.candidate_sizes: {size} candidates per task, but "
            r"the largest dataset ranked \(kinships\) has 104 entities.*use sizes below 104",
        ):
            check_candidate_sizes([10, size, "all"], counts, "cfg.yaml")
    # a count not known before the job (a local dataset not prepared): the drift job checks
    check_candidate_sizes([10, 1000], {**counts, "mine": None}, "cfg.yaml")


def test_entity_counts_known_before_any_job(tmp_path):
    from kgrank.workflow.config import known_entity_count

    missing = tmp_path / "none.json"
    # PyKEEN's documented statistics, without downloading
    assert known_entity_count("nations", {"source": "pykeen"}, missing) == 14
    assert known_entity_count("fb15k237", {"source": "pykeen"}, missing) == 14505
    assert known_entity_count("mine", {"source": "archive", "archive": "g.tar.gz"}, missing) is None
    stats = tmp_path / "stats.json"
    stats.write_text('{"entities": 7}')
    assert known_entity_count("mine", {"source": "archive", "archive": "g.tar.gz"}, stats) == 7


def test_sampled_candidates_are_checked_against_the_known_entity_counts():
    from kgrank.workflow.config import check_sampled_candidates

    check_sampled_candidates([5, 12], {"nations": 14, "local": None})
    check_sampled_candidates([10_000], {"local": None})  # unknown: the ranks job checks it
    with pytest.raises(
        KgrankInputError, match=r"^c.yaml: key ranks.sampled_candidates: 13 candidates per task, "
    ):
        check_sampled_candidates([5, 13], {"fb15k237": 14_505, "nations": 14}, "c.yaml")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda config: config.update(seed=7.0), r"key seed: 7.0 is not of type 'integer'"),
        (
            lambda config: config.update(seed=2**70),
            r"key seed: 1180591620717411303424 is greater than the maximum",
        ),
        (
            lambda config: (
                config["studies"]["openworld"].setdefault("simulation", {}).update(entities=10**12)
            ),
            r"key studies.openworld.simulation.entities: 1000000000000 is greater than the maximum",
        ),
        (
            lambda config: config["studies"]["ir"].setdefault("stability", {}).update(repetitions=10**9),
            r"key studies.ir.stability.repetitions: 1000000000 is greater than the maximum of 10000",
        ),
    ],
    ids=["a-float-seed", "a-70-bit-seed", "a-trillion-entities", "a-billion-repetitions"],
)
def test_values_the_jobs_cannot_take_stop_the_plan(change, message):
    # issue 47: each passed the dry run and failed every job, or used up the memory
    config = _default()
    change(config)
    with pytest.raises(KgrankInputError, match=f"^config.yaml: {message}"):
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)


def test_a_dimension_beyond_what_memory_holds_is_refused():
    from kgrank.training.hyperparameters import check_value

    with pytest.raises(
        KgrankInputError,
        match="embedding_dim: .*1000000000 is greater than the maximum of 65536|from 1 to 65,536",
    ):
        check_value("embedding_dim", 10**9, "config.yaml: key budget.embedding_dim")
    check_value("embedding_dim", 1000, "config.yaml: key budget.embedding_dim")


def test_training_runs_are_each_pairs_further_seeds():
    """comparison.seeds gives every trained pair its runs, seeds_by_pair one pair's; the
    run of `seed` is the studies' own and never trains twice."""
    runs = training_runs(
        {"seeds": [3, 42, 5], "seeds_by_pair": {"nations": {"transe": [42]}}, "metrics": ["mrr"]},
        42,
        ["nations", "kinships"],
        ["transe", "complex"],
    )
    assert runs == {
        ("nations", "transe"): [],
        ("nations", "complex"): [3, 5],
        ("kinships", "transe"): [3, 5],
        ("kinships", "complex"): [3, 5],
    }
    # left out: `seed` alone
    assert training_runs({"metrics": ["mrr"]}, 42, ["nations"], ["transe"]) == {("nations", "transe"): []}


@pytest.mark.parametrize(
    ("comparison", "message"),
    [
        ({"seeds": [1, 2]}, "key comparison.seeds: [1, 2] leaves out seed 42, the run every study reads"),
        (
            {"seeds_by_pair": {"nations": {"transe": [7]}}},
            "key comparison.seeds_by_pair.nations.transe: [7] leaves out seed 42",
        ),
        (
            {"seeds_by_pair": {"nations": {"rotate": [42, 7]}}},
            "key comparison.seeds_by_pair.nations.rotate: not a pair of `datasets` x `models`",
        ),
        (
            {"seeds_by_pair": {"wn18rr": {"transe": [42]}}},
            "key comparison.seeds_by_pair.wn18rr.transe: not a pair",
        ),
        ({"metrics": ["mrr", "median_rank"]}, "key comparison.metrics: metric 'median_rank'"),
    ],
    ids=["seed-left-out", "pair-seed-left-out", "untrained-model", "untrained-dataset", "not-comparable"],
)
def test_training_runs_refuse_what_would_mislead(comparison, message):
    with pytest.raises(KgrankInputError, match=re.escape(message)) as raised:
        training_runs({"metrics": ["mrr"], **comparison}, 42, ["nations"], ["transe"], source="c.yaml")
    assert "\n" not in str(raised.value) and str(raised.value).startswith("c.yaml: key comparison.")


@pytest.mark.parametrize(
    ("comparison", "message"),
    [
        ({"seeds": [42, 42]}, "key comparison.seeds: [42, 42] has non-unique elements"),
        ({"seeds": list(range(42, 63))}, "key comparison.seeds: [42, 43, 44, "),
        ({"seeds": [42, 2**32]}, "key comparison.seeds.1: 4294967296 is greater than the maximum"),
        ({"bootstrap_resamples": 10**6}, "key comparison.bootstrap_resamples: 1000000 is greater"),
        ({"alpha": 1.0}, "key comparison.alpha: 1.0 is greater than or equal to the maximum"),
        ({"rank_type": "average"}, "key comparison.rank_type: 'average' is not one of"),
    ],
    ids=["repeated-seed", "21-seeds", "a-33-bit-seed", "a-million-resamples", "alpha-1", "rank-type"],
)
def test_comparison_keys_are_checked_against_the_schema(comparison, message):
    config = _default()
    config["comparison"] = comparison
    with pytest.raises(KgrankInputError, match=f"^config.yaml: {re.escape(message)}"):
        check_config(config, SCHEMA, source="config.yaml", study_schema_dir=STUDY_SCHEMAS)
