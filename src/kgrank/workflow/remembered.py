"""What the workflow's parse-time checks learn from PyKEEN, kept between Snakemake calls.

Snakemake parses the workflow on every call: each dry run, each rerun after a crash, each
job of a cluster run. The checks that ask PyKEEN (does it have this dataset, how large
does it document it, does this model take these arguments) import its datasets, models
and losses, which bring torch and scikit-learn: about 4 of a dry run's 7 CPU-seconds on
the tiny config. An answer depends only on the question, what is asked about, the
versions of PyKEEN and torch and kgrank's own code, so it is kept in a file named by a
hash of those (under ``$KGRANK_ANSWERS``, else ``$XDG_CACHE_HOME/kgrank/answers``, else
``~/.cache/kgrank/answers``; ``KGRANK_ANSWERS=off`` keeps nothing). A refusal is an
exception and is never kept: a config that does not validate is refused by PyKEEN itself
every time.

Written here because no library keys a cache on what this one must: functools' caches
last one process, and joblib.Memory keys on one function's own source, not on the code it
calls or the installed PyKEEN, so it would keep an answer that a change there makes wrong.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar

Answer = TypeVar("Answer")

ENVIRONMENT_VARIABLE = "KGRANK_ANSWERS"
OFF = "off"


def cache_folder() -> Path | None:
    """Where answers are kept; None with ``KGRANK_ANSWERS=off``."""
    chosen = os.environ.get(ENVIRONMENT_VARIABLE)
    if chosen == OFF:
        return None
    if chosen:
        return Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "kgrank" / "answers"


@cache
def _code_version() -> str:
    """kgrank's source (every module of the package) and the installed PyKEEN and torch."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode())
        digest.update(path.read_bytes())
    for distribution in ("pykeen", "torch"):
        digest.update(f"{distribution}=={metadata.version(distribution)}".encode())
    return digest.hexdigest()


def remembered(question: str, details: Any, answer: Callable[[], Answer]) -> Answer:
    """``answer()``, or what it returned before for the same question and details under the
    same code. ``details`` must be JSON data; only an answer that JSON gives back equal is
    kept (a tuple, for one, is not)."""
    folder = cache_folder()
    if folder is None:
        return answer()
    try:
        key = json.dumps([question, details, _code_version()], sort_keys=True)
    except TypeError:  # details that are not JSON data: nothing to key an answer by
        return answer()
    path = folder / f"{hashlib.sha256(key.encode()).hexdigest()}.json"
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if kept["key"] == key:
            return kept["answer"]
    except (OSError, ValueError, KeyError, TypeError):
        pass  # not asked before, or a file cut short: ask again
    value = answer()
    try:
        text = json.dumps({"key": key, "answer": value})
    except (TypeError, ValueError):  # an answer JSON cannot write: given, not kept
        return value
    if json.loads(text)["answer"] == value:
        _keep(folder, path, text)
    return value


def _keep(folder: Path, path: Path, text: str) -> None:
    """Write beside and rename: a parallel call reads the whole file or none of it."""
    partial = None
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=folder, suffix=".partial", delete=False) as handle:
            partial = Path(handle.name)
            handle.write(text)
        os.replace(partial, path)
    except OSError:  # a read-only home: the answer is still right, only not kept
        if partial is not None:
            partial.unlink(missing_ok=True)
