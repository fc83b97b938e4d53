"""The JSON schemas kgrank ships (the config's, the hyperparameter files', each study's)
and what the code reads of the config's: the schema of a key and its default, so that a
default is written once, in the schema, for the workflow, the options and the API alike."""

from __future__ import annotations

import functools
import json
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
    if "$ref" in schema:
        schema = {**root["$defs"][schema["$ref"].rsplit("/", 1)[-1]], **schema}
    return schema


def config_default(key: str) -> Any:
    """The schema's default of the config's ``key`` (a copy)."""
    return json.loads(json.dumps(key_schema(key)["default"]))
