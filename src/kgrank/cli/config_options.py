"""The config's core keys that commands take as options, each spelled in the config
schema (type, bounds, default, description) and in the command that takes it (named once
to add its option, read in the handler), never in a rule.

A command names the keys it takes (``add_config_options(command, "seed",
"ranks.filter_splits")``); each becomes the option ``--<last part>`` (``--filter-splits``),
with its type, choices, default and help read from src/kgrank/schemas/config.schema.yaml,
and a value the schema refuses is refused in one line that names the config key. A rule
passes the config's values with ``kgrank.cli.main.config_arguments``, which reads the same
keys from the command's parser, so that neither the rule nor the option lists them again.

Why options and not a JSON object like a study's ``--settings`` (kgrank.workflow.settings):
these keys are the toolkit's own options, typed by hand (``kgrank evaluate --seed 3
--filter-splits train``); and the command, not the core schema, says which it takes,
because the core may not name a study's commands.
"""

from __future__ import annotations

import argparse
import functools
import math
from collections.abc import Sequence
from typing import Any

from kgrank.schemas import config_default, config_schema, key_schema


def option_name(key: str) -> str:
    """The option of the config's ``key``: its last part, dashed (``--filter-splits``)."""
    return "--" + key.rsplit(".", 1)[-1].replace("_", "-")


def finite_float(text: str) -> float:
    """An argparse type: a number; NaN and infinity pass every bound, so they are refused here."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid number: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text} is not a finite number; give one")
    return value


_SCALAR_TYPES = {"integer": int, "number": finite_float, "string": str}


def _scalar(schema: dict[str, Any]) -> dict[str, Any]:
    """argparse's ``type`` or ``choices`` for one value of ``schema``."""
    if "enum" in schema:
        return {"choices": list(schema["enum"])}
    types = schema["type"]
    kinds = [kind for kind in ([types] if isinstance(types, str) else types) if kind in _SCALAR_TYPES]
    if not kinds:
        raise TypeError(
            f"a config key of type {types} has no option form; give its command an option of its own"
        )
    return {"type": _SCALAR_TYPES[kinds[0]]}


class ConfigOption(argparse.Action):
    """An option that carries the config's ``key``: the schema checks the value it takes."""

    def __init__(self, option_strings: Sequence[str], dest: str, key: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.key = key

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        from kgrank.training.hyperparameters import StrictValidator

        schema = key_schema(self.key)
        error = next(
            iter(StrictValidator({**schema, "$defs": config_schema()["$defs"]}).iter_errors(values)), None
        )
        if error is not None:
            # a pattern says what it takes in the key's description, not in its regex
            problem = (
                f"{error.instance!r} is not allowed; {_description(schema, sentence=False)}"
                if error.validator == "pattern"
                else error.message
            )
            raise argparse.ArgumentError(self, f"{problem} (the config's {self.key})")
        setattr(namespace, self.dest, values)


def _description(schema: dict[str, Any], sentence: bool = True) -> str:
    """The key's description on one line; within a sentence (``sentence`` False), without
    its capital and full stop."""
    text = " ".join(schema.get("description", "").split())
    return text if sentence or not text else text[0].lower() + text[1:].removesuffix(".")


def add_config_options(parser: argparse.ArgumentParser, *keys: str) -> None:
    """The options of the config's ``keys``, as the config schema types them."""
    for key in keys:
        schema = key_schema(key)
        arguments: dict[str, Any] = {"help": f"{_description(schema)} (the config's {key})".lstrip()}
        if schema.get("type") == "array":
            arguments.update(_scalar(schema["items"]), nargs="+" if schema.get("minItems") else "*")
        else:
            arguments.update(_scalar(schema))
        # a copy: a handler that changes its list must not change the schema's
        default = config_default(key)
        parser.add_argument(option_name(key), action=ConfigOption, key=key, default=default, **arguments)


def config_value(config: dict[str, Any], key: str) -> Any:
    """The value of the dotted ``key`` in a resolved config (defaults filled)."""
    return functools.reduce(lambda value, part: value[part], key.split("."), config)
