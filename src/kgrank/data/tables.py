"""The intermediate tables one step writes and another reads, declared once, and the one
reader that checks them where they are read.

A :class:`TableKind` names a table's producer and its columns: the dtype kind of each,
whether it may hold NaN (an expectation or a variance where it is undefined), its range,
a column that bounds it (a rank at most ``num_candidates``) and the least number of rows.
:func:`read_table` reads a TSV or parquet file of a kind and checks all of that, vectorised;
the first problem stops with one line naming the file, the column, the first bad row and
the fix (``<file>: column <c>, line <n>: <what>; <fix>``; ``row <n>`` in a parquet file).

The kinds the stages write (rank tables, metric tables, learning curves) and those two
studies share (moments, Monte Carlo checks) are declared here; a study declares its own
next to the columns it names. Columns a kind does not type are only required to be there.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgrank.data.rank_table import RANK_COLUMNS, RANK_TABLE_COLUMNS, SIDES, check_rank_table
from kgrank.errors import KgrankInputError

if TYPE_CHECKING:
    import pandas as pd

# The dtype kinds a column may declare; "any" checks only that the column is there.
DTYPES = ("int", "float", "str", "bool", "any")


@dataclass(frozen=True)
class Column:
    """One declared column: its dtype kind, whether NaN (a missing value) or an infinite
    value may appear, its allowed range (inclusive), the values a text column may take and a
    column whose value bounds it from above."""

    name: str
    dtype: str = "any"
    nan: bool = False
    infinite: bool = False
    low: float | None = None
    high: float | None = None
    choices: tuple[str, ...] | None = None
    at_most: str | None = None

    def __post_init__(self) -> None:
        if self.dtype not in DTYPES:
            raise ValueError(f"column {self.name}: dtype {self.dtype!r} is not one of {DTYPES}")


@dataclass(frozen=True)
class TableKind:
    """A table one step writes and others read: its name, the step that writes it (for the
    fix of every message), its columns, the least number of rows, an extra check
    (``check(table, source)``, run after the columns' own), the character that starts a
    comment line of a TSV file (None: no comments) and the fix every message ends with
    (None: rerun the producer; a reference file that no step writes names its own)."""

    name: str
    producer: str
    columns: tuple[Column, ...]
    min_rows: int = 1
    check: Callable[[Any, str], None] | None = None
    comment: str | None = None
    fix: str | None = None

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)


def table_kind(
    name: str,
    producer: str,
    names: Iterable[str],
    *,
    ints: Iterable[str] = (),
    floats: Iterable[str] = (),
    strings: Iterable[str] = (),
    bools: Iterable[str] = (),
    nan: Iterable[str] = (),
    infinite: Iterable[str] = (),
    ranges: Mapping[str, tuple[float | None, float | None]] | None = None,
    choices: Mapping[str, Sequence[str]] | None = None,
    at_most: Mapping[str, str] | None = None,
    min_rows: int = 1,
    check: Callable[[Any, str], None] | None = None,
    comment: str | None = None,
    fix: str | None = None,
) -> TableKind:
    """A :class:`TableKind` from the column names (a study's constant, so that a column it
    adds flows through) and, by name, what each is: a name typed nowhere is "any"."""
    names = tuple(names)
    ranges, choices, at_most = dict(ranges or {}), dict(choices or {}), dict(at_most or {})
    typed = (("int", ints), ("float", floats), ("str", strings), ("bool", bools))
    dtypes = {column: dtype for dtype, columns in typed for column in columns}
    nullable, unbounded = set(nan), set(infinite)
    declared = set(dtypes) | nullable | unbounded | set(ranges) | set(choices) | set(at_most)
    unknown = sorted(declared - set(names))
    if unknown:
        raise ValueError(f"table kind {name}: {unknown} typed but not among its columns {list(names)}")
    columns = tuple(
        Column(
            column,
            dtypes.get(column, "any"),
            nan=column in nullable,
            infinite=column in unbounded,
            low=ranges.get(column, (None, None))[0],
            high=ranges.get(column, (None, None))[1],
            choices=tuple(choices[column]) if column in choices else None,
            at_most=at_most.get(column),
        )
        for column in names
    )
    return TableKind(name, producer, columns, min_rows=min_rows, check=check, comment=comment, fix=fix)


# --- reading -----------------------------------------------------------------------------


def _fix(kind: TableKind) -> str:
    return kind.fix or f"rerun {kind.producer} (or pass the file it writes)"


def _read_frame(path: Path, kind: TableKind) -> pd.DataFrame:
    """The file as a frame: parquet by its suffix, otherwise tab-separated text."""
    import pandas as pd

    if not path.is_file():
        what = "a folder, not a table" if path.is_dir() else "no such file"
        raise KgrankInputError(f"{path}: {what}; check the path, or run {kind.producer} first")
    if path.suffix == ".parquet":
        import pyarrow

        try:
            return pd.read_parquet(path)
        except (pyarrow.ArrowException, OSError, ValueError) as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise KgrankInputError(f"{path}: not a readable parquet file ({reason}); {_fix(kind)}") from None
    try:
        return pd.read_csv(path, sep="\t", comment=kind.comment)
    except pd.errors.EmptyDataError:
        raise KgrankInputError(f"{path}: empty file (not even a header line); {_fix(kind)}") from None
    except pd.errors.ParserError as error:
        reason = str(error).strip().splitlines()[-1]
        raise KgrankInputError(f"{path}: not a tab-separated table ({reason}); {_fix(kind)}") from None
    except UnicodeDecodeError as error:
        raise KgrankInputError(f"{path}: not UTF-8 text (byte {error.start}); {_fix(kind)}") from None


def _first(mask: Any) -> int | None:
    import numpy as np

    hits = np.flatnonzero(np.asarray(mask, dtype=bool))
    return int(hits[0]) if hits.size else None


def _data_lines(path: Path, comment: str | None) -> list[int]:
    """The line number (from 1) of each data row of a TSV file as pandas reads it: blank
    lines and comment lines skipped, the first line left the header."""
    with path.open(encoding="utf-8") as handle:
        numbers = [
            number
            for number, line in enumerate(handle, start=1)
            if line.rstrip("\r\n") and not (comment and line.startswith(comment))
        ]
    return numbers[1:]


def check_table(
    table: pd.DataFrame,
    kind: TableKind,
    source: str,
    *,
    parquet: bool = False,
    lines: Callable[[], list[int]] | None = None,
) -> pd.DataFrame:
    """``table`` checked against ``kind``: every declared column there, at least
    ``kind.min_rows`` rows, each column's dtype, NaN, infinite values, range, choices and
    bound; the first problem raises :class:`KgrankInputError` naming ``source``, the column
    and its row: ``row`` of a parquet file (from 1), ``line`` of a TSV file (``lines()``
    gives each row's line number, counted only when one is named; without it the header is
    line 1). Numbers written as text are converted; the table is returned."""
    import numpy as np
    import pandas as pd

    missing = [name for name in kind.names if name not in table.columns]
    if missing:
        fix = kind.fix or f"{kind.producer} writes {list(kind.names)} (pass its file, or rerun it)"
        raise KgrankInputError(f"{source}: column(s) {missing} missing; {fix}")
    if len(table) < kind.min_rows:
        what = (
            "no rows (a header only)"
            if len(table) == 0
            else f"{len(table)} row(s), fewer than {kind.min_rows}"
        )
        raise KgrankInputError(f"{source}: {what}; {_fix(kind)}")

    def where(index: int) -> str:
        if parquet:
            return f"row {index + 1}"
        numbers = lines() if lines is not None else []
        return f"line {numbers[index] if index < len(numbers) else index + 2}"

    def stop(column: str, index: int, what: str) -> None:
        raise KgrankInputError(f"{source}: column {column}, {where(index)}: {what}; {_fix(kind)}")

    for column in kind.columns:
        if column.dtype == "any":
            continue  # only required to be there
        values = table[column.name]
        absent = values.isna().to_numpy()
        if not column.nan and (index := _first(absent)) is not None:
            stop(column.name, index, "missing value (NaN or an empty field)")
        if column.dtype in ("int", "float"):
            if values.dtype.kind not in "iuf":
                if values.dtype.kind == "b":
                    stop(column.name, 0, f"{values.iloc[0]!r} is not a number")
                numbers = pd.to_numeric(values, errors="coerce")
                if (index := _first(numbers.isna().to_numpy() & ~absent)) is not None:
                    stop(column.name, index, f"{values.iloc[index]!r} is not a number")
                table[column.name] = values = numbers
            array = values.to_numpy(dtype=float)
            present = ~np.isnan(array)
            infinite = present & np.isinf(np.where(present, array, 0.0))
            if not column.infinite and (index := _first(infinite)) is not None:
                stop(column.name, index, f"{array[index]} is not a finite number")
            present &= ~infinite
            if column.dtype == "int" and (index := _first(present & (array != np.round(array)))) is not None:
                stop(column.name, index, f"{array[index]} is not a whole number")
            if column.low is not None and (index := _first(present & (array < column.low))) is not None:
                stop(column.name, index, f"{array[index]:g} is below the minimum {column.low:g}")
            if column.high is not None and (index := _first(present & (array > column.high))) is not None:
                stop(column.name, index, f"{array[index]:g} is above the maximum {column.high:g}")
            if column.at_most is not None:
                bound = pd.to_numeric(table[column.at_most], errors="coerce").to_numpy(dtype=float)
                # a bound that is itself bad is named when its own column is checked
                if (index := _first(present & np.isfinite(bound) & (array > bound))) is not None:
                    stop(
                        column.name,
                        index,
                        f"{array[index]:g} is above {column.at_most} {bound[index]:g}",
                    )
        elif column.dtype == "bool":
            if values.dtype.kind != "b":
                known = values.isin([True, False, "True", "False"]).to_numpy()
                if (index := _first(~known & ~absent)) is not None:
                    stop(column.name, index, f"{values.iloc[index]!r} is not True or False")
        elif column.dtype == "str":
            if values.dtype.kind in "iufb" and len(values):
                stop(column.name, 0, f"{values.iloc[0]!r} is not text")
            if column.choices is not None:
                known = values.isin(column.choices).to_numpy()
                if (index := _first(~known & ~absent)) is not None:
                    stop(
                        column.name,
                        index,
                        f"{values.iloc[index]!r} is not one of {', '.join(column.choices)}",
                    )
    if kind.check is not None:
        kind.check(table, source)
    return table


def read_table(path: str | os.PathLike[str], kind: TableKind) -> pd.DataFrame:
    """One table of ``kind`` (parquet by its suffix, otherwise TSV), checked."""
    path = Path(path)
    parquet = path.suffix == ".parquet"
    return check_table(
        _read_frame(path, kind),
        kind,
        str(path),
        parquet=parquet,
        # counted only when a row is named: blank and comment lines shift them
        lines=None if parquet else lambda: _data_lines(path, kind.comment),
    )


def read_tables_of(paths: Sequence[str | os.PathLike[str]], kind: TableKind) -> pd.DataFrame:
    """Several tables of one ``kind`` (one per dataset, pair, ...), each checked, as one frame."""
    import pandas as pd

    if not paths:
        raise KgrankInputError(f"no {kind.name} given; pass the files {kind.producer} writes")
    return pd.concat([read_table(path, kind) for path in paths], ignore_index=True)


# --- the kinds the stages write, and those two studies share ----------------------------


RANKS = table_kind(
    "rank table",
    "`kgrank ranks`",
    RANK_TABLE_COLUMNS,
    ints=("triple_id", "head", "relation", "tail", "num_candidates"),
    floats=RANK_COLUMNS,
    strings=("side",),
    choices={"side": SIDES},
    ranges={"triple_id": (0, None), "head": (0, None), "relation": (0, None), "tail": (0, None)},
    check=check_rank_table,
)


def read_rank_table(path: str | os.PathLike[str]) -> pd.DataFrame:
    """A rank table as `kgrank ranks` writes it: every column, its values checked
    (:data:`RANKS`)."""
    return read_table(path, RANKS)


def pair_of(path: str | os.PathLike[str]) -> tuple[str, str]:
    """(dataset, model) of a file ``.../<dataset>/<model>.parquet``, as results/ranks/ names them."""
    path = Path(path)
    if path.suffix != ".parquet" or "." in path.stem or not path.parent.name:
        raise KgrankInputError(
            f"{path}: expected a rank table named <dataset>/<model>.parquet (as results/ranks/ holds them)"
        )
    return path.parent.name, path.stem


def read_pair_tables(
    paths: Sequence[str | os.PathLike[str]], kind: TableKind | None = None
) -> dict[tuple[str, str], pd.DataFrame]:
    """Tables keyed by (dataset, model) in the order given, each checked by the core's
    reader: rank tables of the rank stage or, with ``kind``, other tables of that layout."""
    tables: dict[tuple[str, str], pd.DataFrame] = {}
    for path in paths:
        pair = pair_of(path)
        if pair in tables:
            raise KgrankInputError(f"{path}: {pair[0]}/{pair[1]} given twice; pass each pair once")
        tables[pair] = read_table(path, kind or RANKS)
    return tables


# `kgrank metrics` (and the IR study's micro metrics): one value per row. A value, its
# expectation and its variance are NaN where undefined (a z-score of a constant metric).
METRIC_COLUMNS = ("dataset", "model", "side", "rank_type", "metric", "value")
METRICS = table_kind(
    "metric table",
    "`kgrank metrics`",
    METRIC_COLUMNS,
    strings=("dataset", "model", "side", "rank_type", "metric"),
    floats=("value",),
    nan=("value",),
)

# `kgrank train`: a row per epoch; valid_mrr is NaN on the epochs not validated.
LEARNING_CURVE_COLUMNS = ("epoch", "seconds", "loss", "valid_mrr")
LEARNING_CURVE = table_kind(
    "learning curve",
    "`kgrank train`",
    LEARNING_CURVE_COLUMNS,
    ints=("epoch",),
    floats=("seconds", "loss", "valid_mrr"),
    nan=("valid_mrr",),
    ranges={"epoch": (1, None), "seconds": (0, None), "valid_mrr": (0, 1)},
)

# `kgrank moments-table`: E and Var of every metric; either is NaN where undefined.
MOMENTS_COLUMNS = ("dataset", "split", "side", "metric", "expectation", "variance", "method")
MOMENTS = table_kind(
    "moments table",
    "`kgrank moments-table`",
    MOMENTS_COLUMNS,
    strings=("dataset", "split", "side", "metric", "method"),
    floats=("expectation", "variance"),
    nan=("expectation", "variance"),
    ranges={"variance": (0, None)},
)

# `kgrank moments-montecarlo`: the simulated moments of every metric against the analytic
# ones; a z-score is NaN where the simulated variance is zero.
MONTECARLO_CHECK_COLUMNS = (
    "dataset",
    "side",
    "metric",
    "simulated_mean",
    "simulated_variance",
    "z_mean",
    "z_variance",
    "critical_z",
    "replicates",
)
MONTECARLO_CHECK = table_kind(
    "Monte Carlo check",
    "`kgrank moments-montecarlo`",
    MONTECARLO_CHECK_COLUMNS,
    strings=("dataset", "side", "metric"),
    floats=("simulated_mean", "simulated_variance", "z_mean", "z_variance", "critical_z"),
    ints=("replicates",),
    nan=("z_mean", "z_variance"),
    ranges={"simulated_variance": (0, None), "replicates": (1, None)},
)
