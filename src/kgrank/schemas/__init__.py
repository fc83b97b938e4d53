"""The JSON schemas kgrank ships (the config's, the hyperparameter files', each study's)
and what the code reads of the config's: the schema of a key and its default, so that a
default is written once, in the schema, for the workflow, the options and the API alike."""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

SCHEMA_DIR = Path(__file__).resolve().parent
CONFIG_SCHEMA = SCHEMA_DIR / "config.schema.yaml"


@functools.cache
def config_schema() -> dict[str, Any]:
    from kgrank.data.io import parse_schema

    return parse_schema(CONFIG_SCHEMA.read_text(encoding="utf-8"))


def key_schema(key: str) -> dict[str, Any]:
    """The schema of the config's dotted ``key`` (``metrics.hits``), a local $ref resolved."""
    root = config_schema()
    schema = root
    for part in key.split("."):
        schema = schema["properties"][part]
    return dereferenced(schema, root)


def dereferenced(schema: Mapping[str, Any], root: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with its local reference (``$ref: "#/$defs/<name>"`` into ``root``)
    merged in, its own keys winning; as it is where it has none."""
    if "$ref" not in schema:
        return dict(schema)
    return {**root["$defs"][schema["$ref"].rsplit("/", 1)[-1]], **schema}


def config_default(key: str) -> Any:
    """The schema's default of the config's ``key`` (a copy; None where it has none)."""
    return copy.deepcopy(key_schema(key).get("default"))
