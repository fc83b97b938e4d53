"""A study's settings on their way from the config to the code, spelled twice: in the
study's schema and where the code reads them, nowhere between.

Each key of a study schema (src/kgrank/schemas/studies/<study>.schema.yaml), at any
depth, may list under ``x-commands`` the `kgrank` commands that read it. A rule passes
its command the resolved settings that command reads as one JSON object (``--settings``,
made by :func:`settings_json`); the command checks them against the schema, fills the
defaults of the keys left out, and its handler reads ``args.settings[key]``.

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
from typing import Any

from kgrank.schemas import SCHEMA_DIR, dereferenced

COMMANDS_KEYWORD = "x-commands"
STUDY_SCHEMA_DIR = SCHEMA_DIR / "studies"


@functools.cache
def study_schema(study: str) -> dict[str, Any]:
    from kgrank.data.io import parse_schema

    return parse_schema((STUDY_SCHEMA_DIR / f"{study}.schema.yaml").read_text(encoding="utf-8"))


def selection(study: str, command: str) -> dict[str, Any]:
    """What ``command`` reads of ``study``'s settings: key -> True (the whole value) or the
    selection within an object whose own keys are marked (``x-commands`` at any depth)."""

    def select(properties: Mapping[str, Any]) -> dict[str, Any]:
        chosen: dict[str, Any] = {}
        for key, child in properties.items():
            if command in child.get(COMMANDS_KEYWORD, ()):
                chosen[key] = True
            elif within := select(child.get("properties", {})):
                chosen[key] = within
        return chosen

    return select(study_schema(study)["properties"])


def command_keys(study: str, command: str) -> list[str]:
    """The settings of ``study`` that the `kgrank` ``command`` reads, as dotted keys."""

    def paths(chosen: Mapping[str, Any], prefix: str) -> list[str]:
        return [
            path
            for key, within in chosen.items()
            for path in ([prefix + key] if within is True else paths(within, f"{prefix}{key}."))
        ]

    return paths(selection(study, command), "")


def _selected(value: Mapping[str, Any], chosen: Mapping[str, Any]) -> dict[str, Any]:
    return {
        key: value[key] if within is True else _selected(value[key], within)
        for key, within in chosen.items()
        if key in value
    }


def settings_json(
    study: str, command: str, settings: Mapping[str, Any], only: Mapping[str, str] | None = None
) -> str:
    """The resolved ``settings`` (the config's studies.<study>, defaults filled) that
    ``command`` reads, as the JSON its ``--settings`` takes. ``only`` narrows a mapping to
    the one entry a job reads (dotted key -> entry: one family-tree configuration), so
    that adding another entry reruns none of the jobs that read this one."""
    # a copy: narrowing must not reach into the config's own objects
    chosen = json.loads(json.dumps(_selected(settings, selection(study, command))))
    for path, entry in (only or {}).items():
        *parents, last = path.split(".")
        holder = functools.reduce(lambda value, key: value[key], parents, chosen)
        holder[last] = {entry: holder[last][entry]}
    return json.dumps(chosen, sort_keys=True)


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
    from kgrank.data.io import first_non_finite
    from kgrank.errors import KgrankInputError
    from kgrank.workflow.config import check_against

    try:
        given = json.loads(text)
    except json.JSONDecodeError as error:
        raise KgrankInputError(f"--settings: not JSON ({error}); pass one JSON object") from None
    if not isinstance(given, dict):
        raise KgrankInputError(f"--settings: {type(given).__name__}, not a JSON object; pass one")
    # JSON's NaN and Infinity pass every bound of a schema (each comparison is false)
    non_finite = first_non_finite(given)
    if non_finite is not None:
        key, value = non_finite
        raise KgrankInputError(f"--settings: key {key}: {value} is not a finite number; give one")
    chosen = selection(study, command)
    unread = _unread(given, chosen, "")
    if unread:
        raise KgrankInputError(
            f"--settings: key {unread} is not a setting kgrank {command} reads; it reads "
            f"{', '.join(command_keys(study, command)) or 'none'} (studies.{study})"
        )
    schema_path = STUDY_SCHEMA_DIR / f"{study}.schema.yaml"
    check_against(given, schema_path, "--settings")
    return _with_defaults(given, study_schema(study), chosen)


def _unread(given: Mapping[str, Any], chosen: Mapping[str, Any], prefix: str) -> str | None:
    """The first key of ``given`` outside the selection, dotted; None if there is none."""
    for key in sorted(given):
        within = chosen.get(key)
        if within is None:
            return prefix + key
        if within is not True and isinstance(given[key], dict):
            unread = _unread(given[key], within, f"{prefix}{key}.")
            if unread is not None:
                return unread
    return None


_missing = object()


def _with_defaults(value: Any, schema: Mapping[str, Any], chosen: Any = True, root: Any = None) -> Any:
    """``value`` (or the schema's default where it is missing), an object's missing keys
    given their defaults, as Snakemake's validate fills the config; within a selection
    (``chosen``), its keys only. A whole number where the schema says ``number`` becomes a
    float, as a float option gave it: a config's share 1 reaches the code as 1.0, and the
    tables' columns do not follow the config's spelling.

    Not Snakemake's validate(set_default=True), which fills the config at parse time: it
    neither keeps to a selection nor turns numbers into floats, and this walk does all
    three at once."""
    root = schema if root is None else root
    schema = dereferenced(schema, root)
    if value is _missing:
        value = json.loads(json.dumps(schema.get("default", {} if chosen is not True else None)))
    if isinstance(value, dict) and "properties" in schema:
        return {
            key: _with_defaults(value.get(key, _missing), child, chosen is True or chosen[key], root)
            for key, child in schema["properties"].items()
            if (chosen is True and (key in value or "default" in child))
            or (chosen is not True and key in chosen)
        }
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [_with_defaults(item, schema["items"], True, root) for item in value]
    types = schema.get("type", ())
    types = [types] if isinstance(types, str) else types
    whole = isinstance(value, int) and not isinstance(value, bool)
    if whole and "number" in types and "integer" not in types:
        return float(value)
    return value
