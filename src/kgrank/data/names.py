"""Names that become path components: datasets, models, studies and systems.

A dataset, model, study or system name from a config, a hyperparameter file or an imported
configuration becomes a folder or file name under ``results/`` (``ranks/<dataset>/<model>.parquet``)
or under a command's output folder, so it may not climb out of it (``..``, ``/``, an absolute
path) nor hide a file (a leading ``.``). The rule also keeps a dot out: ``<model>.parquet``
and ``<model>.sampled-<k>.parquet`` share a folder (as do ``<model>.tsv`` and
``<model>.groups.parquet``), so a model named ``transe.sampled-5`` would overwrite TransE's
sampled ranks; and the names join into the regular expressions of Snakemake's wildcard
constraints, where a dot matches any character. A leading ``-`` would read as an option
on a command line. The JSON schemas of the config (src/kgrank/schemas/) carry the same
patterns, so that a bad name is refused before any job runs.
"""

from __future__ import annotations

import re
from typing import Any

from kgrank.errors import KgrankInputError

# `$(?!\n)`: the end of the string; a schema validator's `$` (Python's re.search) also
# matches before a final newline, so that "nations\n" would pass a bare `$`.
NAME_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_-]*$(?!\\n)"
# A `<dataset>/<model>` pair (studies.ambiguity.subsets.pairs).
PAIR_PATTERN = "^[A-Za-z0-9][A-Za-z0-9_-]*/[A-Za-z0-9][A-Za-z0-9_-]*$(?!\\n)"

NAME_RULE = "a name may hold only letters, digits, '_' and '-', and must start with a letter or digit"
PAIR_RULE = (
    "a pair is <dataset>/<model>, each a name of letters, digits, '_' and '-' "
    "that starts with a letter or digit"
)

# The words that replace jsonschema's "'../x' does not match '^...$'" for these patterns.
RULES = {NAME_PATTERN: NAME_RULE, PAIR_PATTERN: PAIR_RULE}


def is_name(value: Any) -> bool:
    """Whether ``value`` is a string that may name a dataset, model, study or system."""
    return isinstance(value, str) and re.fullmatch(NAME_PATTERN, value) is not None


def check_name(value: Any, where: str, fix: str = "rename it") -> str:
    """``value`` if it is a name, else a one-line KgrankInputError: ``where`` (the file and key
    it came from), the rule, and ``fix``."""
    if not is_name(value):
        raise KgrankInputError(f"{where}: {value!r}: {NAME_RULE}; {fix}")
    return value
