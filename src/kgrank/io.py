"""Atomic file output: a killed job leaves either the old file or the new one, never half."""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; move it onto ``path`` only on success.

    The temporary file lives in the same folder so that ``os.replace`` is atomic, and
    it is removed whatever happens, so an interrupted step leaves no debris behind.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    os.close(handle)
    try:
        yield Path(temporary)
        os.replace(temporary, target)
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    with atomic_path(path) as temporary:
        temporary.write_text(text, encoding="utf-8")


def write_json(path: str | os.PathLike[str], data: Any) -> None:
    write_text(path, json.dumps(data, indent=2, sort_keys=True) + "\n")


def write_table(path: str | os.PathLike[str], frame: Any) -> None:
    """Write a pandas DataFrame as TSV or parquet, chosen by the file's suffix."""
    target = Path(path)
    with atomic_path(target) as temporary:
        if target.suffix == ".parquet":
            frame.to_parquet(temporary, index=False)
        elif target.suffix == ".tsv":
            frame.to_csv(temporary, sep="\t", index=False, float_format="%.10g")
        else:
            raise ValueError(f"{target}: unsupported table format {target.suffix!r}; use .tsv or .parquet")
