"""A study's settings reach its commands as one JSON object (kgrank.workflow.settings):
every key names commands that exist and take it, a command gets exactly the keys marked
for it with the schema's defaults, and a bad object is one line naming the key."""

from __future__ import annotations

import argparse
import json

import pytest

from kgrank.cli.main import build_parser
from kgrank.errors import KgrankInputError
from kgrank.workflow.config import study_schemas
from kgrank.workflow.settings import (
    COMMANDS_KEYWORD,
    STUDY_SCHEMA_DIR,
    command_keys,
    parse_settings,
    settings_json,
    study_schema,
)

STUDIES = sorted(study_schemas(STUDY_SCHEMA_DIR))


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    return dict(parser.commands.choices)


def _defaults(schema: dict) -> dict:
    """Every default of a schema object, nested objects' own defaults filled in, as
    Snakemake's validate fills the config (written out here, not through the module)."""
    filled = {}
    for key, child in schema.get("properties", {}).items():
        if "default" in child:
            value = json.loads(json.dumps(child["default"]))
            filled[key] = {**_defaults(child), **value} if isinstance(value, dict) else value
    return filled


def _marked() -> list[tuple[str, str]]:
    """(study, command) for every command a study schema's key names, at any depth."""

    def commands(properties: dict) -> set[str]:
        return {
            command
            for child in properties.values()
            for command in (*child.get(COMMANDS_KEYWORD, ()), *commands(child.get("properties", {})))
        }

    return sorted(
        {(study, command) for study in STUDIES for command in commands(study_schema(study)["properties"])}
    )


def test_every_marked_command_exists_and_takes_settings():
    commands = _subcommands()
    for study, command in _marked():
        assert command in commands, f"{study}: {COMMANDS_KEYWORD} names {command}, no such command"
        options = {option for action in commands[command]._actions for option in action.option_strings}
        assert "--settings" in options, f"kgrank {command} reads studies.{study} but has no --settings"


def test_every_command_with_settings_reads_some():
    marked = {command for _, command in _marked()}
    for name, parser in _subcommands().items():
        options = {option for action in parser._actions for option in action.option_strings}
        if "--settings" in options:
            assert name in marked, f"kgrank {name} takes --settings, but no study key names it"


@pytest.mark.parametrize(("study", "command"), _marked())
def test_the_workflow_json_round_trips_and_an_empty_object_takes_the_defaults(study, command):
    defaults = _defaults(study_schema(study))
    keys = command_keys(study, command)
    expected = {}
    for key in keys:
        *parents, last = key.split(".")
        value, holder = defaults, expected
        for parent in parents:
            value, holder = value.get(parent, {}), holder.setdefault(parent, {})
        if last in value:
            holder[last] = value[last]
    assert parse_settings(study, command, "{}") == expected
    assert parse_settings(study, command, settings_json(study, command, defaults)) == expected
    assert json.loads(settings_json(study, command, defaults)) == expected


def test_a_bad_settings_object_is_one_line_naming_the_key():
    keys = command_keys("moments", "moments-montecarlo")
    assert keys == ["montecarlo_replicates", "montecarlo_alpha"]
    refusals = [
        ("[1", "not JSON"),
        ("[1]", "list, not a JSON object"),
        ('{"splits": ["test"]}', "key splits is not a setting kgrank moments-montecarlo reads"),
        ('{"bogus": 1}', "key bogus is not a setting"),
        ('{"montecarlo_alpha": 1}', "key montecarlo_alpha: 1 is greater than or equal to the maximum"),
        ('{"montecarlo_replicates": 7.0}', "key montecarlo_replicates: 7.0 is not of type 'integer'"),
        ('{"montecarlo_alpha": NaN}', "key montecarlo_alpha: nan is not a finite number"),
    ]
    for text, message in refusals:
        with pytest.raises(KgrankInputError, match=message) as raised:
            parse_settings("moments", "moments-montecarlo", text)
        assert "\n" not in str(raised.value)
    # a key given keeps its value, the one left out takes its default
    assert parse_settings("moments", "moments-montecarlo", '{"montecarlo_alpha": 0.2}') == {
        "montecarlo_replicates": study_schema("moments")["properties"]["montecarlo_replicates"]["default"],
        "montecarlo_alpha": 0.2,
    }


def test_a_nested_selection_passes_the_marked_keys_only_and_only_narrows_a_mapping():
    """A key marked inside an object travels alone: protocols-weighted reads the schemes of
    its part, not its Monte Carlo settings, so changing those reruns only the check; a
    family-tree job gets its own configuration, so adding one reruns none of the others."""
    weighted = {
        "enabled": True,
        "schemes": ["negatives", "uniform"],
        "montecarlo_replicates": 9,
        "alpha": 0.2,
    }
    assert json.loads(settings_json("protocols", "protocols-weighted", {"weighted": weighted})) == {
        "weighted": {"schemes": ["negatives", "uniform"]}
    }
    with pytest.raises(
        KgrankInputError, match="key weighted.alpha is not a setting kgrank protocols-weighted"
    ):
        parse_settings("protocols", "protocols-weighted", '{"weighted": {"alpha": 0.2}}')
    family_tree = {
        "evaluate_every": 3,
        "densities": [0.65],
        "configurations": {"a": {"model": "transe"}, "b": {"model": "rotate"}},
    }
    narrowed = settings_json(
        "openworld",
        "openworld-family-tree",
        {"family_tree": family_tree},
        only={"family_tree.configurations": "b"},
    )
    assert json.loads(narrowed) == {
        "family_tree": {"evaluate_every": 3, "configurations": {"b": {"model": "rotate"}}}
    }
    assert family_tree["configurations"].keys() == {"a", "b"}  # the config itself is left whole


def test_a_whole_number_where_the_schema_says_number_arrives_as_a_float():
    """As a float option gave it: a config's share 1 is 1.0 (through a $ref too), while an
    integer setting and a string stay as written."""
    simulation = parse_settings(
        "openworld", "openworld-simulate", '{"simulation": {"densities": [1, 0.5], "strength": {"start": 0}}}'
    )["simulation"]
    assert simulation["densities"] == [1.0, 0.5] and isinstance(simulation["densities"][0], float)
    assert isinstance(simulation["strength"]["start"], float) and isinstance(simulation["queries"], int)
    sizes = parse_settings("ambiguity", "ambiguity-drift", '{"candidate_sizes": [3, "all"]}')[
        "candidate_sizes"
    ]
    assert sizes == [3, "all"] and isinstance(sizes[0], int)
