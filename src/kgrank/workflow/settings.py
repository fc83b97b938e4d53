"""A study's settings on their way from the config to the code, spelled twice: in the
study's schema and where the code reads them, nowhere between.

Each top-level key of a study schema (src/kgrank/schemas/studies/<study>.schema.yaml)
lists under ``x-commands`` the `kgrank` commands that read it. A rule passes its command
the resolved settings that command reads as one JSON object (``--settings``, made by
:func:`settings_json`); the command checks them against the schema, fills the defaults of
the keys left out, and its handler reads ``args.settings[key]``.

Why one object rather than argparse options derived from the schema: each rule would
still list the options it passes and each handler read them, four spellings where this
has two. Why the keys a command reads rather than the study's whole section: Snakemake
reruns a job whose params changed, so a changed figure setting reruns the figure and not
a scoring pass.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

COMMANDS_KEYWORD = "x-commands"
STUDY_SCHEMA_DIR = Path(__file__).resolve().parents[1] / "schemas" / "studies"


@functools.cache
def study_schema(study: str) -> dict[str, Any]:
    from kgrank.data.io import parse_schema

    return parse_schema((STUDY_SCHEMA_DIR / f"{study}.schema.yaml").read_text(encoding="utf-8"))


def command_keys(study: str, command: str) -> list[str]:
    """The top-level settings of ``study`` that the `kgrank` ``command`` reads."""
    properties = study_schema(study)["properties"]
    return [key for key, child in properties.items() if command in child.get(COMMANDS_KEYWORD, ())]


def settings_json(study: str, command: str, settings: Mapping[str, Any]) -> str:
    """The resolved ``settings`` (the config's studies.<study>, defaults filled) that
    ``command`` reads, as the JSON its ``--settings`` takes."""
    return json.dumps({key: settings[key] for key in command_keys(study, command)}, sort_keys=True)


def add_settings(parser: argparse.ArgumentParser, study: str) -> None:
    """``--settings JSON``: the settings of studies.<study> that this command reads."""
    command = parser.prog.split()[-1]
    parser.add_argument(
        "--settings",
        type=functools.partial(_settings_argument, study, command),
        # a string default goes through ``type`` too: every key takes its default
        default="{}",
        metavar="JSON",
        help=f"the settings of studies.{study} this command reads, as one JSON object (its keys are "
        f"those whose {COMMANDS_KEYWORD} name it in src/kgrank/schemas/studies/{study}.schema.yaml; a "
        "key left out takes its default); the workflow passes them from the config",
    )


def _settings_argument(study: str, command: str, text: str) -> dict[str, Any]:
    from kgrank.errors import KgrankInputError

    try:
        return parse_settings(study, command, text)
    except KgrankInputError as error:
        # argparse keeps the message of this error alone (and names the option itself)
        raise argparse.ArgumentTypeError(str(error).removeprefix("--settings: ")) from None


def parse_settings(study: str, command: str, text: str) -> dict[str, Any]:
    """The settings ``command`` reads from ``--settings``: checked against the study's
    schema, the defaults of keys left out filled in."""
    from kgrank.errors import KgrankInputError
    from kgrank.workflow.config import check_against

    try:
        given = json.loads(text)
    except json.JSONDecodeError as error:
        raise KgrankInputError(f"--settings: not JSON ({error}); pass one JSON object") from None
    if not isinstance(given, dict):
        raise KgrankInputError(f"--settings: {type(given).__name__}, not a JSON object; pass one")
    keys = command_keys(study, command)
    unread = sorted(set(given) - set(keys))
    if unread:
        raise KgrankInputError(
            f"--settings: key {unread[0]} is not a setting kgrank {command} reads; it reads "
            f"{', '.join(keys) or 'none'} (studies.{study})"
        )
    schema_path = STUDY_SCHEMA_DIR / f"{study}.schema.yaml"
    check_against(given, schema_path, "--settings")
    properties = study_schema(study)["properties"]
    return {key: _with_defaults(given.get(key, _missing), properties[key]) for key in keys}


_missing = object()


def _with_defaults(value: Any, schema: Mapping[str, Any]) -> Any:
    """``value`` (or the schema's default where it is missing), an object's missing keys
    given their defaults, as Snakemake's validate fills the config."""
    if value is _missing:
        value = json.loads(json.dumps(schema.get("default")))
    if isinstance(value, dict) and "properties" in schema:
        return {
            key: _with_defaults(value.get(key, _missing), child)
            for key, child in schema["properties"].items()
            if key in value or "default" in child
        }
    return value
