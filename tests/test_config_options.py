"""The config's core keys reach the commands as options typed by the config schema
(kgrank.cli.config_options): a rule's options parse back to the config's values, a value
the schema refuses is one line naming the key, and no rule file spells a core option."""

from __future__ import annotations

import argparse
import re
import shlex

import pytest
from conftest import REPO

from kgrank.cli.config_options import ConfigOption, add_config_options, option_name
from kgrank.cli.main import build_parser, config_arguments, main
from kgrank.schemas import config_default, key_schema


def _commands() -> dict:
    return dict(build_parser().commands.choices)


def _config_options() -> dict[str, list[ConfigOption]]:
    return {
        name: options
        for name, command in _commands().items()
        if (options := [action for action in command._actions if isinstance(action, ConfigOption)])
    }


# A resolved config whose every core value differs from its default, of the right type
CONFIG = {
    "seed": 123,
    "device": "cuda:1",
    "sub_batch_size": 64,
    "training": {"scoring": "pykeen"},
    "ranks": {
        "batch_size": 17,
        "scoring": "pykeen",
        "tie_rule": "float64",
        "filter_splits": ["train", "test"],
    },
    "metrics": {"hits": [2, 7], "confidence": 0.9},
    "comparison": {
        "metrics": ["mrr", "gmr", "hits@3"],
        "rank_type": "pessimistic",
        "alpha": 0.01,
        "bootstrap_resamples": 500,
    },
}


def _value(key: str):
    value = CONFIG
    for part in key.split("."):
        value = value[part]
    return value


def test_the_commands_that_take_core_keys():
    takes = {name: sorted(option.key for option in options) for name, options in _config_options().items()}
    assert set(takes["ranks"]) == {
        "seed",
        "device",
        "ranks.batch_size",
        "ranks.filter_splits",
        "ranks.scoring",
        "ranks.tie_rule",
    }
    assert set(takes["train"]) == {"seed", "device", "training.scoring", "sub_batch_size"}
    assert set(takes["metrics"]) == {"seed", "metrics.hits", "metrics.confidence"}
    assert "comparison.bootstrap_resamples" in takes["compare"]
    # every scoring command takes the config's device
    for name in ("ranks", "evaluate", "ir-evaluate", "ambiguity-subsets", "protocols-ties-pair"):
        assert "device" in takes[name], name


@pytest.mark.parametrize("command", sorted(_config_options()))
def test_a_rules_options_parse_back_to_the_config_values(command):
    options = _config_options()[command]
    # the command's core options alone: its other options are required
    parser = argparse.ArgumentParser()
    add_config_options(parser, *(option.key for option in options))
    parsed = parser.parse_args(shlex.split(config_arguments(CONFIG, command)))
    for option in options:
        assert getattr(parsed, option.dest) == _value(option.key), option.key
        assert type(getattr(parsed, option.dest)) is type(_value(option.key)), option.key


@pytest.mark.parametrize("command", sorted(_config_options()))
def test_each_option_defaults_to_the_schema_default_and_says_its_key(command):
    for option in _config_options()[command]:
        assert option.option_strings == [option_name(option.key)]
        assert option.default == key_schema(option.key).get("default")
        assert f"the config's {option.key}" in option.help


def test_a_job_replaces_a_value_and_a_null_leaves_the_option_out():
    assert "--seed 9 " in config_arguments(CONFIG, "train", seed=9) + " "
    assert "--sub-batch-size" not in config_arguments({**CONFIG, "sub_batch_size": None}, "train")
    assert "--sub-batch-size" not in config_arguments(CONFIG, "train", sub_batch_size=None)
    assert "--hits 1 10 " in config_arguments(CONFIG, "metrics", hits=(1, 10)) + " "
    with pytest.raises(TypeError, match="takes no config option hits"):
        config_arguments(CONFIG, "train", hits=[1])


def test_a_value_with_spaces_is_quoted():
    quoted = config_arguments(
        {**CONFIG, "comparison": {**CONFIG["comparison"], "metrics": ["a b"]}}, "compare"
    )
    assert "--metrics 'a b'" in quoted


def test_the_api_defaults_are_the_schemas():
    from kgrank.defaults import DEFAULT_CONFIDENCE, DEFAULT_FILTER_SPLITS, DEFAULT_HITS

    assert DEFAULT_HITS == tuple(config_default("metrics.hits")) == (1, 3, 5, 10)
    assert DEFAULT_FILTER_SPLITS == ("train", "valid", "test")
    assert DEFAULT_CONFIDENCE == 0.95


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        (["--seed", "-1"], ("argument --seed: -1 is less than the minimum of 0", "the config's seed")),
        (["--seed", "x"], ("argument --seed: invalid int value",)),
        (["--hits", "0"], ("argument --hits: 0 is less than the minimum of 1", "metrics.hits")),
        (["--hits", "3", "3"], ("argument --hits", "non-unique", "metrics.hits")),
        (["--confidence", "1"], ("argument --confidence: 1.0 is greater than or equal to the maximum of 1",)),
        (["--confidence", "nan"], ("argument --confidence: nan is not a finite number",)),
    ],
)
def test_a_value_the_schema_refuses_is_one_line(argv, names, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit:
        main(
            [
                "metrics",
                "--ranks",
                "r",
                "--external",
                "ranks",
                "--dataset",
                "d",
                "--model",
                "m",
                *argv,
                "--out",
                str(tmp_path / "o"),
            ]
        )
    assert exit.value.code == 2
    line = capsys.readouterr().err.strip()
    assert len(line.splitlines()) == 1
    for name in names:
        assert name in line, line
    assert not (tmp_path / "o").exists()


def test_a_device_with_a_trailing_newline_is_refused(tmp_path, capsys):
    """torch.device("cpu\n") would fail with a traceback; "$" alone in the pattern lets it by."""
    with pytest.raises(SystemExit) as exit:
        main(["evaluate", "--dataset", str(tmp_path), "--ranks", "r.csv", "--device", "cpu\n"])
    assert exit.value.code == 2
    line = capsys.readouterr().err.strip()
    assert "argument --device: 'cpu\\n' is not allowed; where a model trains and scores: auto" in line, line


def test_no_rule_file_spells_a_core_option():
    """A core option reaches a command only through `{params.options}` (config_options)."""
    spelled = {option_name(option.key) for options in _config_options().values() for option in options}
    names = "|".join(re.escape(name) for name in sorted(spelled))
    pattern = re.compile(rf"({names}) \{{(params|config)")
    found = [
        f"{path.name}:{number}"
        for path in sorted((REPO / "workflow" / "rules").rglob("*.smk"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert not found, found
