"""Systems from outside: models kgrank did not train, each turned into a rank table.

Three kinds, each read into a table of kgrank's rank-table format
(``rank_table.RANK_TABLE_COLUMNS``; head, relation, tail are PyKEEN ids of the dataset's
training factory, one row per test triple and side, head rows first), so that every later
step treats it like the ranks of a model kgrank trained:

- ``ranks``: a rank table from any framework, CSV (comma), TSV or TXT (tab), or Parquet,
  with a header line naming its columns: ``head``, ``relation``, ``tail`` (labels of the
  dataset, or its PyKEEN ids), ``side`` (head/tail), the ranks, and optionally
  ``num_candidates``. The ranks are one column ``rank`` (taken as optimistic = realistic
  = pessimistic = random), or ``optimistic`` and ``pessimistic`` (realistic = their mean
  unless given, random = realistic unless given), or ``realistic`` alone (every rank
  variant takes its value). Absent candidate counts are the dataset's filtered ones
  (``candidates.candidate_counts``); present ones must equal them. Every test triple must
  have both sides unless ``allow_partial``.
- ``pykeen``: a PyKEEN pipeline folder (``pipeline(...).save_to_directory(folder)``:
  ``trained_model.pkl`` and ``training_triples/``), ranked by kgrank's rank engine
  (``ranks.compute_ranks``) with the dataset's filter.
- ``scores``: a score matrix (``.npy`` or ``.pt``, one row per query, one column per
  entity in the dataset's id order) with its query index (a CSV/TSV with head, relation,
  tail, side: one row per matrix row, in order), ranked by the engine's
  ``ranks.ranks_from_scores`` with the dataset's filter. A higher score is better.

Every bad input raises :class:`kgrank.errors.KgrankInputError` with one line naming the
file, the line (as an editor shows it, the header being line 1; ``row N`` in a Parquet
file) or the column, and the fix.
"""

from __future__ import annotations

import csv
import io
import os
import pickle
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kgrank.data.datasets import SPLITS, load_factories, prepare_dataset, read_triples
from kgrank.data.rank_table import RANK_COLUMNS, RANK_TABLE_COLUMNS, SIDES
from kgrank.defaults import DEFAULT_FILTER_SPLITS, IDENTIFIERS
from kgrank.engine.candidates import candidate_counts, known_answers
from kgrank.errors import KgrankInputError

if TYPE_CHECKING:
    from kgrank.engine.ties import Tolerance

KINDS = ("ranks", "pykeen", "scores", "positional")
RANK_TABLE_SUFFIXES = {".csv": ",", ".tsv": "\t", ".txt": "\t", ".parquet": None}
SCORE_SUFFIXES = (".npy", ".pt")
# The columns of a rank table from outside, and what else each may be called.
TRIPLE_COLUMNS = ("head", "relation", "tail")
ALIASES = {
    "head": ("h", "subject", "s"),
    "relation": ("r", "rel", "predicate", "p"),
    "tail": ("t", "object", "o"),
    "side": ("target",),
    "num_candidates": ("candidates",),
}
RANK_INPUT_COLUMNS = ("rank", *RANK_COLUMNS)
# How other frameworks write which side was ranked: the head was ranked (head prediction)
# or the tail. kbc writes lhs/rhs, RotatE's code head-batch/tail-batch.
SIDE_VALUES = {
    "head": ("head", "h", "lhs", "head_batch", "head-batch"),
    "tail": ("tail", "t", "rhs", "tail_batch", "tail-batch"),
}
# The wide layout: one row per triple, a rank column per side (and optionally a candidate
# count per side), as AmpliGraph's and TorchKGE's exports hold them.
WIDE_COLUMNS = {"head": ("head_rank", "head_num_candidates"), "tail": ("tail_rank", "tail_num_candidates")}
# What a PyKEEN pipeline folder holds (PipelineResult.save_to_directory).
PYKEEN_MODEL_FILE = "trained_model.pkl"
PYKEEN_TRAINING_FOLDER = "training_triples"
# a realistic rank given beside optimistic and pessimistic must be their mean, to this
REALISTIC_TOLERANCE = 1e-6
SCORE_BATCH_ROWS = 1024

_INTEGER = re.compile(r"^(0|[1-9][0-9]*)$")


# --- where a row is ---------------------------------------------------------------------


@dataclass(frozen=True)
class _Source:
    """A table read from a file: its cells as text, and where each row is in the file."""

    path: Path
    frame: pd.DataFrame  # every cell a string; columns named as the header does (stripped)
    lines: np.ndarray  # the 1-based line of each row (CSV/TSV) or its 1-based row (Parquet)
    parquet: bool

    def where(self, row: int) -> str:
        """``file:line`` (CSV/TSV) or ``file: row N`` (Parquet) of table row ``row``."""
        return f"{self.path}: row {self.lines[row]}" if self.parquet else f"{self.path}:{self.lines[row]}"

    def place(self, row: int) -> str:
        """``line N`` (CSV/TSV) or ``row N`` (Parquet) of table row ``row``."""
        return f"{'row' if self.parquet else 'line'} {self.lines[row]}"


def _shape_hint(what: str) -> str:
    if what == "queries":
        return "a header line (head, relation, tail, side) and one line per score-matrix row"
    return (
        "a header line (head, relation, tail, side, rank [, num_candidates]) and one line per "
        "test triple and side"
    )


def _read_delimited(path: Path, delimiter: str, what: str) -> _Source:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise KgrankInputError(
            f"{path}: byte {error.object[error.start]:#04x} at offset {error.start} is not UTF-8; "
            "save the file as UTF-8"
        ) from None
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header: list[str] | None = None
    header_line = 0
    rows: list[list[str]] = []
    lines: list[int] = []
    start = 1
    try:
        for record in reader:
            line = start
            start = reader.line_num + 1
            if not record or all(not cell.strip() for cell in record):
                continue
            if header is None:
                header, header_line = [cell.strip() for cell in record], line
                continue
            if len(record) != len(header):
                raise KgrankInputError(
                    f"{path}:{line}: {len(record)} fields, the header (line {header_line}) has "
                    f"{len(header)}; give every line the header's columns"
                    + (
                        " (is the file tab-separated? name it .tsv)"
                        if delimiter == "," and len(record) == 1
                        else ""
                    )
                )
            rows.append(record)
            lines.append(line)
    except csv.Error as error:
        raise KgrankInputError(
            f"{path}:{reader.line_num}: not readable as {'CSV' if delimiter == ',' else 'TSV'} ({error}); "
            "fix the quoting on this line"
        ) from None
    if header is None:
        raise KgrankInputError(f"{path}: the file is empty; give it {_shape_hint(what)}")
    if not rows and _looks_like_data(header):
        raise _data_not_header(path, header, what)
    if not rows:
        raise KgrankInputError(
            f"{path}: only a header line (line {header_line}), no rows; add one line per "
            + ("score-matrix row" if what == "queries" else "test triple and side")
        )
    frame = pd.DataFrame(rows, columns=header, dtype=str) if len(set(header)) == len(header) else None
    if frame is None:
        duplicate = next(name for name in header if header.count(name) > 1)
        raise KgrankInputError(
            f"{path}:{header_line}: column {duplicate!r} appears twice in the header; keep one"
        )
    return _Source(path, frame, np.asarray(lines), parquet=False)


def _read_parquet(path: Path) -> _Source:
    import pyarrow

    try:
        table = pd.read_parquet(path)
    except (pyarrow.ArrowException, OSError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise KgrankInputError(
            f"{path}: not a readable parquet file ({reason}); write it with pandas.DataFrame.to_parquet, "
            "or give a .csv or .tsv"
        ) from None
    if table.empty:
        raise KgrankInputError(f"{path}: no rows; give one row per test triple and side")
    table.columns = [str(column).strip() for column in table.columns]
    text = pd.DataFrame(index=table.index)
    for column in table.columns:
        values = table[column]
        if pd.api.types.is_float_dtype(values) and values.notna().all() and (values == values.round()).all():
            # ids stored as floats (a column that once held a NaN) read as the integers they are
            values = values.astype(np.int64)
        text[column] = ["" if pd.isna(value) else str(value) for value in values]
    return _Source(path, text.reset_index(drop=True), np.arange(1, len(table) + 1), parquet=True)


def _read_table(path: str | os.PathLike[str], what: str = "ranks") -> _Source:
    path = Path(path)
    if path.is_dir():
        raise KgrankInputError(f"{path}: a folder, not a file of {what}; give the file")
    suffix = path.suffix.lower()
    allowed = RANK_TABLE_SUFFIXES if what == "ranks" else {s: d for s, d in RANK_TABLE_SUFFIXES.items() if d}
    if suffix not in allowed:
        raise KgrankInputError(
            f"{path}: unknown table format {suffix or '(no suffix)'!r}; name it "
            + ", ".join(allowed)
            + " (.csv: comma-separated, .tsv/.txt: tab-separated)"
            + ("; an array of ranks in test order (.npy, .pt) takes --order test" if what == "ranks" else "")
        )
    if not path.is_file():
        raise KgrankInputError(f"{path}: no such file; check the path")
    if path.stat().st_size == 0:
        raise KgrankInputError(f"{path}: the file is empty; give it {_shape_hint(what)}")
    source = _read_parquet(path) if suffix == ".parquet" else _read_delimited(path, allowed[suffix], what)
    return _canonical_columns(source, what)


def _looks_like_data(fields: Sequence[str]) -> bool:
    """A first line of data, not a header: at most one field is a column name (a side
    value, head or tail, is one) and some field is a number."""
    names = {*ALIASES, *(alias for aliases in ALIASES.values() for alias in aliases), *RANK_INPUT_COLUMNS}
    lowered = [field.strip().lower() for field in fields]
    numeric = pd.to_numeric(pd.Series(lowered), errors="coerce").notna().any()
    return sum(field in names for field in lowered) <= 1 and bool(numeric)


def _data_not_header(path: Path, fields: Sequence[str], what: str) -> KgrankInputError:
    columns = "head, relation, tail, side" + ("" if what == "queries" else ", rank [, num_candidates]")
    return KgrankInputError(
        f"{path}:1: the first line looks like data ({', '.join(fields)}), not a header; add a header "
        f"line naming the columns ({columns})"
    )


def _canonical_columns(source: _Source, what: str) -> _Source:
    """Columns renamed to their canonical names (case and aliases aside); a missing one
    is named, and a first line of data instead of a header is said to be one."""
    canonical = {alias: name for name, aliases in ALIASES.items() for alias in aliases}
    names = {column: canonical.get(column.lower(), column.lower()) for column in source.frame.columns}
    if len(set(names.values())) != len(names):
        clash = next(name for name in names.values() if list(names.values()).count(name) > 1)
        raise KgrankInputError(
            f"{source.path}: two columns name {clash!r} (one under an alias); keep one of them"
        )
    frame = source.frame.rename(columns=names)
    if what == "ranks" and "side" not in frame.columns and {"head_rank", "tail_rank"} <= set(frame.columns):
        return _long_from_wide(_Source(source.path, frame, source.lines, source.parquet))
    required = [*TRIPLE_COLUMNS, "side"]
    missing = [column for column in required if column not in names.values()]
    if missing:
        header = list(source.frame.columns)
        if not source.parquet and _looks_like_data(header):
            raise _data_not_header(source.path, header, what)
        raise KgrankInputError(
            f"{source.path}: column(s) {', '.join(missing)} missing (found: {', '.join(header)}); "
            f"name the columns {', '.join(required)}"
        )
    return _Source(source.path, frame, source.lines, source.parquet)


def _long_from_wide(source: _Source) -> _Source:
    """A wide rank table (head_rank and tail_rank per triple) as one row per side; said on
    stderr, since it is read differently from the long layout."""
    frame = source.frame
    missing = [column for column in TRIPLE_COLUMNS if column not in frame.columns]
    if missing:
        raise KgrankInputError(
            f"{source.path}: column(s) {', '.join(missing)} missing beside head_rank and tail_rank; name the "
            f"columns {', '.join(TRIPLE_COLUMNS)}, head_rank, tail_rank"
        )
    sides = []
    for side, (rank, candidates) in WIDE_COLUMNS.items():
        part = frame[list(TRIPLE_COLUMNS)].assign(side=side, rank=frame[rank])
        if candidates in frame.columns:
            part["num_candidates"] = frame[candidates]
        sides.append(part)
    if (WIDE_COLUMNS["head"][1] in frame.columns) != (WIDE_COLUMNS["tail"][1] in frame.columns):
        raise KgrankInputError(
            f"{source.path}: give both head_num_candidates and tail_num_candidates, or neither"
        )
    _note(f"{source.path}: wide layout (head_rank, tail_rank per triple) read as one row per side")
    long = pd.concat(sides, ignore_index=True)
    return _Source(source.path, long, np.concatenate([source.lines, source.lines]), source.parquet)


# --- ids and labels ---------------------------------------------------------------------


def _identifier_mode(values: np.ndarray, labels: dict[str, int], size: int, identifiers: str) -> str:
    """Auto: "ids" when every value is a whole number within [0, size), else "labels"."""
    if identifiers != "auto":
        return identifiers
    unique = pd.unique(values)
    all_ids = all(_INTEGER.match(value) and int(value) < size for value in unique)
    if all_ids and all(value in labels for value in unique):
        # every value is both: an integer vocabulary's labels read as ids would shuffle them
        raise KgrankInputError(
            "every value is both a label and an id of the dataset; say which they are "
            "(identifiers='ids' or 'labels'; --identifiers ids|labels)"
        )
    return "ids" if all_ids else "labels"


def _to_ids(
    source: _Source, columns: Sequence[str], labels: dict[str, int], kind: str, identifiers: str
) -> dict[str, np.ndarray]:
    """The PyKEEN ids of ``columns`` (one vocabulary: entities or relations)."""
    size = len(labels)
    cells = {column: source.frame[column].to_numpy(dtype=str) for column in columns}
    for column, values in cells.items():
        empty = np.flatnonzero(np.char.str_len(np.char.strip(values)) == 0)
        if len(empty):
            raise KgrankInputError(
                f"{source.where(int(empty[0]))}: column {column} is empty; give the {kind}'s label or id"
            )
    try:
        mode = _identifier_mode(np.concatenate(list(cells.values())), labels, size, identifiers)
    except KgrankInputError as error:
        raise KgrankInputError(f"{source.path}: columns {', '.join(columns)}: {error}") from None
    result = {}
    for column, values in cells.items():
        if mode == "ids":
            ids = np.array([int(value) if _INTEGER.match(value) else -1 for value in values], dtype=np.int64)
        else:
            ids = np.array([labels.get(value, -1) for value in values], dtype=np.int64)
        bad = np.flatnonzero((ids < 0) | (ids >= size))
        if len(bad):
            row = int(bad[0])
            value = str(values[row])
            fix = ""
            if mode == "ids":
                detail = (
                    f"{value!r} is not {_article(kind)} id in [0, {size}) (the column holds ids elsewhere)"
                )
            else:
                detail = f"{value!r} is not {_article(kind)} label of the dataset"
                if _INTEGER.match(value):
                    detail += " (other rows hold labels: use labels or ids throughout)"
                close = [label for label in labels if label.lower() == value.lower()]
                fix = f"did you mean {close[0]!r}?" if close else ""
            raise KgrankInputError(
                f"{source.where(row)}: column {column}: {detail}; "
                + (fix or f"give {_PLURAL[kind]} of the dataset's train.tsv")
            )
        result[column] = ids
    return result


_PLURAL = {"entity": "entities", "relation": "relations"}


def _article(kind: str) -> str:
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _sides(source: _Source) -> np.ndarray:
    given = np.char.lower(np.char.strip(source.frame["side"].to_numpy(dtype=str)))
    sides = np.full(given.shape, "", dtype="<U4")
    for side, values in SIDE_VALUES.items():
        sides[np.isin(given, values)] = side
    bad = np.flatnonzero(sides == "")
    if len(bad):
        known = ", ".join(value for values in SIDE_VALUES.values() for value in values)
        raise KgrankInputError(
            f"{source.where(int(bad[0]))}: column side: {source.frame['side'].iloc[int(bad[0])]!r} is not "
            f"head or tail ({known}); write head (the head was ranked) or tail"
        )
    other = sorted(set(given.tolist()) - set(SIDES))
    if other:
        side_of = {value: side for side, values in SIDE_VALUES.items() for value in values}
        read = ", ".join(f"{value} as {side_of[value]}" for value in other)
        _note(f"{source.path}: side values read {read}")
    return sides


def _numbers(source: _Source, column: str) -> np.ndarray:
    values = pd.to_numeric(source.frame[column].str.strip(), errors="coerce").to_numpy(dtype=float)
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        row = int(bad[0])
        cell = source.frame[column].iloc[row]
        what = "empty" if not cell.strip() else f"{cell!r}, not a finite number"
        raise KgrankInputError(f"{source.where(row)}: column {column} is {what}; give a number on every row")
    return values


def _rank_columns(source: _Source) -> dict[str, np.ndarray]:
    """optimistic, realistic, pessimistic, random from the rank columns the table has."""
    present = [column for column in RANK_INPUT_COLUMNS if column in source.frame.columns]
    given = {column: _numbers(source, column) for column in present}
    if not given:
        raise KgrankInputError(
            f"{source.path}: no rank column (found: {', '.join(source.frame.columns)}); add a column "
            "rank, or optimistic and pessimistic, or realistic"
        )
    if "rank" in given and len(given) > 1:
        raise KgrankInputError(
            f"{source.path}: both rank and {', '.join(c for c in given if c != 'rank')}; give either one "
            "column rank or the rank variants (optimistic, pessimistic, realistic, random)"
        )
    if ("optimistic" in given) != ("pessimistic" in given):
        one, other = ("optimistic", "pessimistic") if "optimistic" in given else ("pessimistic", "optimistic")
        raise KgrankInputError(f"{source.path}: column {one} without {other}; give both, or only rank")
    if "rank" in given:
        return dict.fromkeys(RANK_COLUMNS, given["rank"])
    if "optimistic" not in given and "realistic" not in given:
        raise KgrankInputError(
            f"{source.path}: column random alone; add rank, or optimistic and pessimistic, or realistic"
        )
    if "optimistic" in given:
        optimistic, pessimistic = given["optimistic"], given["pessimistic"]
        bad = np.flatnonzero(optimistic > pessimistic)
        if len(bad):
            row = int(bad[0])
            raise KgrankInputError(
                f"{source.where(row)}: optimistic {optimistic[row]:g} is above pessimistic "
                f"{pessimistic[row]:g}; swap the columns (optimistic = 1 + #better)"
            )
        realistic = (optimistic + pessimistic) / 2.0
        if "realistic" in given:
            bad = np.flatnonzero(np.abs(given["realistic"] - realistic) > REALISTIC_TOLERANCE)
            if len(bad):
                row = int(bad[0])
                raise KgrankInputError(
                    f"{source.where(row)}: realistic {given['realistic'][row]:g} is not the mean of "
                    f"optimistic and pessimistic ({realistic[row]:g}); fix it or drop the column"
                )
    else:
        realistic = given["realistic"]
        optimistic = pessimistic = realistic
    random = given.get("random", realistic)
    bad = np.flatnonzero((random < optimistic) | (random > pessimistic))
    if len(bad):
        row = int(bad[0])
        raise KgrankInputError(
            f"{source.where(row)}: random {random[row]:g} is outside [optimistic, pessimistic] = "
            f"[{optimistic[row]:g}, {pessimistic[row]:g}]; fix it or drop the column"
        )
    return {"optimistic": optimistic, "realistic": realistic, "pessimistic": pessimistic, "random": random}


# --- assembling a rank table ------------------------------------------------------------


def _labelled(factory: Any, triple: np.ndarray) -> tuple[str, str, str]:
    """A triple of ids in the factory's labels (through its id maps: reading
    ``factory.triples`` would rebuild every labelled triple, and PyKEEN warns that it does)."""
    head, relation, tail = (int(value) for value in triple)
    entity = getattr(factory, "entity_id_to_label", None)
    if entity is None:
        return str(head), str(relation), str(tail)
    return entity[head], factory.relation_id_to_label[relation], entity[tail]


def _test_index(factories: Any) -> tuple[np.ndarray, dict[tuple[int, int, int], list[int]]]:
    test = np.asarray(factories.testing.mapped_triples, dtype=np.int64)
    index: dict[tuple[int, int, int], list[int]] = {}
    for triple_id, triple in enumerate(map(tuple, test.tolist())):
        index.setdefault(triple, []).append(triple_id)
    return test, index


def _assemble(
    source: _Source,
    triples: dict[str, np.ndarray],
    sides: np.ndarray,
    ranks: dict[str, np.ndarray],
    num_candidates: np.ndarray | None,
    dataset_dir: Path,
    factories: Any,
    filter_splits: Sequence[str],
    allow_partial: bool,
    what: str,
) -> tuple[pd.DataFrame, np.ndarray]:
    """Rows matched to the dataset's test triples, checked, in kgrank's order (head rows,
    then tail rows, each in test order). A test triple listed twice in the split gets the
    row's ranks for each of its triple ids, as the rank engine ranks it twice."""
    test, index = _test_index(factories)
    expected = candidate_counts(dataset_dir, "test", filter_splits)["num_candidates"].to_numpy()
    position: dict[tuple[int, str], int] = {}
    rows: list[tuple[int, int, int]] = []  # (side index, triple id, source row)
    for row, (head, relation, tail, side) in enumerate(
        zip(
            triples["head"].tolist(),
            triples["relation"].tolist(),
            triples["tail"].tolist(),
            sides.tolist(),
            strict=True,
        )
    ):
        triple_ids = index.get((head, relation, tail))
        if triple_ids is None:
            labels = [source.frame[column].iloc[row] for column in TRIPLE_COLUMNS]
            raise KgrankInputError(
                f"{source.where(row)}: ({', '.join(labels)}) is not a test triple of {dataset_dir}; "
                f"{what} must hold the dataset's test triples only (remove the row, or evaluate on the "
                "dataset it was ranked on)"
            )
        key = (triple_ids[0], side)
        if key in position:
            raise KgrankInputError(
                f"{source.where(row)}: the {side} side of this triple is already ranked on "
                f"{source.place(position[key])}; keep one row per triple and side"
            )
        position[key] = row
        rows += [(SIDES.index(side), triple_id, row) for triple_id in triple_ids]
    wanted = {(triple_ids[0], side) for triple_ids in index.values() for side in SIDES}
    missing = sorted(wanted - position.keys(), key=lambda pair: (SIDES.index(pair[1]), pair[0]))
    if missing and not allow_partial:
        triple_id, side = missing[0]
        example = _labelled(factories.testing, test[triple_id])
        raise KgrankInputError(
            f"{source.path}: {len(missing)} of {len(wanted)} (test triple, side) pairs have no row, e.g. the "
            f"{side} side of ({', '.join(map(str, example))}); add them, or accept a partial evaluation "
            "(allow_partial=True; --allow-partial)"
        )
    rows.sort()
    order = np.array([row for _, _, row in rows], dtype=np.int64)
    triple_ids = np.array([triple_id for _, triple_id, _ in rows], dtype=np.int64)
    side_of = np.array([SIDES[side] for side, _, _ in rows])
    filtered = expected[np.where(side_of == "head", 0, len(test)) + triple_ids]
    if num_candidates is not None:
        bad = np.flatnonzero(num_candidates[order] != filtered)
        if len(bad):
            row = int(order[bad[0]])
            splits = ", ".join(filter_splits) if len(filter_splits) else "nothing (unfiltered)"
            raise KgrankInputError(
                f"{source.where(row)}: num_candidates {num_candidates[row]:g}, but the dataset filtered by "
                f"{splits} leaves {int(filtered[bad[0]])}; rank in that setting, or pass the filter your "
                "framework used (filter_splits; --filter-splits), or drop the column to take the dataset's"
            )
    table = pd.DataFrame(
        {
            "triple_id": triple_ids,
            "head": test[triple_ids, 0],
            "relation": test[triple_ids, 1],
            "tail": test[triple_ids, 2],
            "side": side_of,
            **{column: ranks[column][order] for column in RANK_COLUMNS},
            "num_candidates": filtered.astype(np.int64),
        }
    )
    for column in RANK_COLUMNS:
        bad = np.flatnonzero((table[column] < 1) | (table[column] > table["num_candidates"]))
        if len(bad):
            row = int(order[bad[0]])
            value = table[column].iloc[int(bad[0])]
            limit = table["num_candidates"].iloc[int(bad[0])]
            name = column if column in source.frame.columns else "rank"
            raise KgrankInputError(
                f"{source.where(row)}: {name} {value:g} is outside [1, {limit}] "
                "(1 = best; the upper end is the candidates left after filtering); fix the rank"
            )
    for column in RANK_COLUMNS:
        values = table[column].to_numpy()
        if column != "realistic" and np.all(values == np.round(values)):
            table[column] = values.astype(np.int64)  # whole ranks as the rank engine writes them
    return table[list(RANK_TABLE_COLUMNS)], order


def load_rank_table(
    path: str | os.PathLike[str],
    dataset_dir: str | os.PathLike[str],
    *,
    filter_splits: Sequence[str] = DEFAULT_FILTER_SPLITS,
    allow_partial: bool = False,
    identifiers: str = "auto",
) -> pd.DataFrame:
    """A rank table from another framework (CSV, TSV/TXT or Parquet, module docstring) as
    kgrank's rank table on the prepared dataset ``dataset_dir``.

    ``filter_splits``: the splits whose known answers leave the candidate lists (fills or
    checks ``num_candidates``); ``allow_partial``: accept a table that lacks some test
    triples (their rows are left out); ``identifiers``: "auto" reads a column of whole
    numbers within range as PyKEEN ids and anything else as labels, "ids" or "labels" say
    which.
    """
    with notes_held():
        return _rank_table_of(
            _read_table(path, "ranks"), dataset_dir, filter_splits, allow_partial, identifiers
        )


# Notes on how a file was read (its layout, its side values), held until it has been read
# whole: a file refused further on gets its one line of refusal, not the notes before it.
_held_notes: list[str] | None = None


@contextmanager
def notes_held() -> Iterator[None]:
    """Hold the notes on how files were read until the block (or the decorated function)
    ends without an error; a refusal inside it prints its one line alone."""
    global _held_notes
    outer, _held_notes = _held_notes, []
    try:
        yield
        notes = _held_notes
    finally:
        _held_notes = outer
    for note in notes:
        _note(note)


def _note(text: str) -> None:
    if _held_notes is None:
        print(text, file=sys.stderr)
    else:
        _held_notes.append(text)


def _rank_table_of(
    source: _Source,
    dataset_dir: str | os.PathLike[str],
    filter_splits: Sequence[str],
    allow_partial: bool,
    identifiers: str,
) -> pd.DataFrame:
    """:func:`load_rank_table` of a table already read."""
    _check_identifiers(identifiers)
    dataset_dir = Path(dataset_dir)
    factories = load_factories(dataset_dir)
    triples = _triples_of(source, factories, identifiers)
    num_candidates = _numbers(source, "num_candidates") if "num_candidates" in source.frame.columns else None
    table, _ = _assemble(
        source,
        triples,
        _sides(source),
        _rank_columns(source),
        num_candidates,
        dataset_dir,
        factories,
        filter_splits,
        allow_partial,
        "a rank table",
    )
    return table


def _triples_of(source: _Source, factories: Any, identifiers: str) -> dict[str, np.ndarray]:
    training = factories.training
    return {
        **_to_ids(source, ("head", "tail"), dict(training.entity_to_id), "entity", identifiers),
        **_to_ids(source, ("relation",), dict(training.relation_to_id), "relation", identifiers),
    }


def _check_identifiers(identifiers: str) -> None:
    if identifiers not in IDENTIFIERS:
        raise KgrankInputError(f"identifiers {identifiers!r} is not one of {', '.join(IDENTIFIERS)}")


# --- a PyKEEN pipeline folder -----------------------------------------------------------


def _read_id_map(path: Path) -> dict[str, int]:
    try:
        frame = pd.read_csv(path, sep="\t", dtype={"label": str}, keep_default_na=False)
    except (OSError, EOFError, ValueError, pd.errors.ParserError) as error:
        raise KgrankInputError(
            f"{path}: not readable ({str(error).splitlines()[0] if str(error) else type(error).__name__}); "
            "save the pipeline folder again (save_to_directory)"
        ) from None
    if not {"id", "label"} <= set(frame.columns):
        raise KgrankInputError(f"{path}: columns id and label missing; save the pipeline folder again")
    return dict(zip(frame["label"].astype(str), frame["id"].astype(np.int64).tolist(), strict=True))


def _id_translation(
    model_map: dict[str, int], dataset_map: dict[str, int], kind: str, where: Path
) -> np.ndarray:
    """The model's id of each dataset id (an array indexed by dataset id); the same label
    set is required."""
    only_model = sorted(set(model_map) - set(dataset_map))
    only_dataset = sorted(set(dataset_map) - set(model_map))
    if only_model or only_dataset:
        example = " and ".join(
            [f"{only_dataset[0]!r} is in the dataset only"] * bool(only_dataset)
            + [f"{only_model[0]!r} is in the model only"] * bool(only_model)
        )
        raise KgrankInputError(
            f"{where}: the model knows {len(model_map)} {_PLURAL[kind]}, the dataset's train.tsv "
            f"{len(dataset_map)}, and {example}; evaluate on the dataset the model was trained on"
        )
    translation = np.empty(len(dataset_map), dtype=np.int64)
    for label, dataset_id in dataset_map.items():
        translation[dataset_id] = model_map[label]
    return translation


def is_pykeen_folder(path: str | os.PathLike[str]) -> bool:
    return Path(path).is_dir() and (Path(path) / PYKEEN_MODEL_FILE).is_file()


# What kgrank says where a PyKEEN folder's pickle was not marked trusted
UNTRUSTED_PICKLE = (
    "a pickle runs code from its file when it is loaded, so kgrank loads one only from a folder you "
    "trust: pass --trust-pickle (to the command that read it), set trusted: true beside the system "
    "under external_systems, or trusted=True from Python"
)


def load_pykeen_model(folder: str | os.PathLike[str], device: str = "cpu", *, trusted: bool = False) -> Any:
    """The pickled model of a PyKEEN pipeline folder.

    PyKEEN pickles the whole model object and its folder holds nothing to rebuild it from
    (``metadata.json`` is empty), so the only way in is ``torch.load(...,
    weights_only=False)``, which runs code from the file. It is refused unless ``trusted``
    says the folder is one you trust (one you named yourself, written by your own
    training)."""
    import torch

    path = Path(folder) / PYKEEN_MODEL_FILE
    if not path.is_file():
        raise KgrankInputError(
            f"{folder}: no {PYKEEN_MODEL_FILE}; pass the folder of pipeline(...).save_to_directory(...)"
        )
    if not trusted:
        raise KgrankInputError(f"{path}: not loaded: {UNTRUSTED_PICKLE}")
    from kgrank.training.train import resolve_device

    device = str(resolve_device(device))
    try:
        model = torch.load(path, map_location=device, weights_only=False)
    except (
        RuntimeError,
        OSError,
        EOFError,
        pickle.UnpicklingError,
        AttributeError,
        ModuleNotFoundError,
    ) as error:
        lines = str(error).split(". ")[0].splitlines()
        reason = lines[0] if lines else f"{type(error).__name__}: the file ends too early"
        raise KgrankInputError(
            f"{path}: not a readable PyKEEN model ({reason}); save it again with save_to_directory, "
            "with the same pykeen and torch versions"
        ) from None
    if not (hasattr(model, "predict") and hasattr(model, "num_entities")):
        raise KgrankInputError(
            f"{path}: holds a {type(model).__name__}, not a PyKEEN model; pass a pipeline folder"
        )
    return model


def _pykeen_model_on(
    folder: Path, dataset_dir: Path, device: str, trusted: bool
) -> tuple[Any, Any, np.ndarray, np.ndarray]:
    """A PyKEEN folder's model, the dataset's factories, and the model's id of each dataset
    entity and relation (matched by label through ``training_triples/``)."""
    training_folder = folder / PYKEEN_TRAINING_FOLDER
    maps = {kind: training_folder / f"{kind}_to_id.tsv.gz" for kind in ("entity", "relation")}
    model = load_pykeen_model(folder, device, trusted=trusted)
    if not all(path.is_file() for path in maps.values()):
        raise KgrankInputError(
            f"{folder}: no {PYKEEN_TRAINING_FOLDER}/entity_to_id.tsv.gz and relation_to_id.tsv.gz, so the "
            "model's ids cannot be matched to the dataset's labels; save with "
            "save_to_directory(..., save_training=True) from a labelled TriplesFactory"
        )
    factories = load_factories(dataset_dir)
    entities = _id_translation(
        _read_id_map(maps["entity"]), factories.training.entity_to_id, "entity", folder
    )
    relations = _id_translation(
        _read_id_map(maps["relation"]), factories.training.relation_to_id, "relation", folder
    )
    num_relations = int(getattr(model, "num_real_relations", model.num_relations))
    if (model.num_entities, num_relations) != (len(entities), len(relations)):
        raise KgrankInputError(
            f"{folder / PYKEEN_MODEL_FILE}: the model has {model.num_entities} entities and {num_relations} "
            f"relations, its training_triples/ {len(entities)} and {len(relations)}; the folder is "
            "inconsistent: save it again"
        )
    return model, factories, entities, relations


def _same_ids(entities: np.ndarray, relations: np.ndarray) -> bool:
    return bool(
        np.array_equal(entities, np.arange(len(entities)))
        and np.array_equal(relations, np.arange(len(relations)))
    )


def _reorder_to_dataset(model: Any, entities: np.ndarray, relations: np.ndarray, folder: Path) -> None:
    """Reorder the rows of the model's embedding tables so that row i is the dataset's
    entity (relation) i: the model then scores in the dataset's ids, and every part that
    rescores it (candidate subsets, sampled candidates, ties, run lists) needs no
    translation. A model trained with inverse relations keeps relation r at rows 2r (the
    relation) and 2r + 1 (its inverse), PyKEEN's DefaultRelationInverter layout."""
    import torch
    from pykeen.nn.representation import Embedding

    relation_rows = relations
    if getattr(model, "use_inverse_triples", False):
        relation_rows = np.stack([2 * relations, 2 * relations + 1], axis=1).reshape(-1)
    reordered: set[int] = set()  # a table shared by two lists moves once
    for kind, rows in (("entity", entities), ("relation", relation_rows)):
        representations = getattr(model, f"{kind}_representations", None)
        if representations is None:  # a model without representations (a baseline): refused below
            representations = [model]
        for representation in representations:
            table = getattr(representation, "_embeddings", None)
            if not isinstance(representation, Embedding) or table.weight.shape[0] != len(rows):
                raise KgrankInputError(
                    f"{folder}: the model numbers {_PLURAL[kind]} differently from the dataset and its "
                    f"{type(representation).__name__} representation is not a table kgrank can reorder; "
                    "rank it (kgrank evaluate --model) or train it on the dataset's ids"
                )
            if id(table) in reordered:
                continue
            reordered.add(id(table))
            with torch.no_grad():
                table.weight.copy_(table.weight[torch.as_tensor(rows, device=table.weight.device)])


def load_scoring_model(
    model_dir: str | os.PathLike[str],
    dataset_dir: str | os.PathLike[str],
    *,
    device: str = "cpu",
    trusted: bool = False,
) -> tuple[Any, Any]:
    """A model to rescore on ``dataset_dir``, with the dataset's factories: a kgrank model
    folder (``model.pt``, ``config.json``) or a PyKEEN pipeline folder, whose embedding
    tables are reordered to the dataset's ids where the folder numbers them differently.
    What every command that scores a model loads (ranks, sampled candidates, candidate
    subsets, tie rescoring, the IR passes). ``trusted``: as in :func:`load_pykeen_model`."""
    if not is_pykeen_folder(model_dir):
        from kgrank.training.train import load_model

        return load_model(model_dir, dataset_dir, device=device)
    folder = Path(model_dir)
    model, factories, entities, relations = _pykeen_model_on(folder, Path(dataset_dir), device, trusted)
    if not _same_ids(entities, relations):
        _reorder_to_dataset(model, entities, relations, folder)
        # after the reordering, so that a refusal is the only line a refused folder prints
        print(
            f"{folder}: the model numbers entities or relations differently from {dataset_dir}; "
            "its embedding tables were reordered to the dataset's ids (matched by label)",
            file=sys.stderr,
        )
    return model.eval(), factories


def rank_pykeen_folder(
    folder: str | os.PathLike[str],
    dataset_dir: str | os.PathLike[str],
    *,
    filter_splits: Sequence[str] = DEFAULT_FILTER_SPLITS,
    seed: int = 0,
    batch_size: int = 256,
    device: str = "cpu",
    progress: bool = False,
    tolerance: Tolerance | None = None,
    trusted: bool = False,
) -> pd.DataFrame:
    """Ranks of the test triples of ``dataset_dir`` by the model of a PyKEEN pipeline folder
    (``trained_model.pkl`` and ``training_triples/``), through ``ranks.compute_ranks``.

    The model's entity and relation ids (``training_triples/*_to_id.tsv.gz``) are matched
    to the dataset's by label: equal maps are used as they are, permuted ones are
    translated, different label sets are refused. Loads the pickle only where ``trusted``
    (see :func:`load_pykeen_model`).
    """
    from kgrank.engine.candidates import KnownAnswers
    from kgrank.engine.ranks import compute_ranks

    folder, dataset_dir = Path(folder), Path(dataset_dir)
    model, factories, entities, relations = _pykeen_model_on(folder, dataset_dir, device, trusted)
    identity = _same_ids(entities, relations)

    def to_model(triples: Any) -> np.ndarray:
        mapped = np.asarray(triples, dtype=np.int64).reshape(-1, 3)
        return np.stack([entities[mapped[:, 0]], relations[mapped[:, 1]], entities[mapped[:, 2]]], axis=1)

    if identity:
        known = known_answers(factories, filter_splits)
        test = np.asarray(factories.testing.mapped_triples, dtype=np.int64)
    else:
        print(
            f"{folder}: the model numbers entities or relations differently from {dataset_dir}; "
            "matched by label",
            file=sys.stderr,
        )
        known = KnownAnswers(
            [to_model(triples) for triples in factories.mapped(tuple(filter_splits))],
            len(entities),
            len(relations),
        )
        test = to_model(factories.testing.mapped_triples)
    options = {"batch_size": batch_size, "seed": seed, "progress": progress, "tolerance": tolerance}
    table = compute_ranks(model, test, known, **options)
    if not identity:
        dataset_test = np.asarray(factories.testing.mapped_triples, dtype=np.int64)
        for position, column in enumerate(TRIPLE_COLUMNS):
            table[column] = dataset_test[table["triple_id"].to_numpy(), position]
    return table


# --- a score matrix ---------------------------------------------------------------------


def id_maps(dataset_dir: str | os.PathLike[str]) -> dict[str, pd.DataFrame]:
    """The dataset's entity and relation ids (``id``, ``label``): the ids a rank table or a
    score matrix's columns mean, as PyKEEN numbers them (labels sorted)."""
    training = load_factories(dataset_dir).training
    return {
        kind: pd.DataFrame(
            sorted(((index, label) for label, index in mapping.items())), columns=["id", "label"]
        )
        for kind, mapping in (("entity", training.entity_to_id), ("relation", training.relation_to_id))
    }


def _column_of_id(path: str | os.PathLike[str], entity_to_id: Mapping[str, int]) -> np.ndarray:
    """From a file of one entity label per matrix column, in column order: the column of
    each dataset id; every label once, each the dataset's."""
    path = Path(path)
    if not path.is_file():
        raise KgrankInputError(
            f"{path}: no such file; give the entity label of each matrix column, one a line"
        )
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise KgrankInputError(
            f"{path}: byte {error.object[error.start]:#04x} at offset {error.start} is not UTF-8; "
            "save the file as UTF-8"
        ) from None
    # split on line ends only: str.splitlines would also split a label at U+2028 or \x1c
    labels = [line.removesuffix("\r") for line in text.split("\n")]
    labels = labels[:-1] if labels and labels[-1] == "" else labels
    if len(labels) != len(entity_to_id):
        raise KgrankInputError(
            f"{path}: {len(labels)} lines for {len(entity_to_id)} entities of the dataset; give one label "
            "per matrix column"
        )
    column_of_id = np.full(len(entity_to_id), -1, dtype=np.int64)
    for line, label in enumerate(labels, start=1):
        if label not in entity_to_id:
            raise KgrankInputError(f"{path}:{line}: {label!r} is no entity of the dataset; fix the label")
        if column_of_id[entity_to_id[label]] >= 0:
            first = int(column_of_id[entity_to_id[label]]) + 1
            raise KgrankInputError(
                f"{path}:{line}: {label!r} again (first on line {first}); one line per entity"
            )
        column_of_id[entity_to_id[label]] = line - 1
    return column_of_id


def _load_scores(path: Path) -> Any:
    import torch

    if path.suffix.lower() not in SCORE_SUFFIXES:
        raise KgrankInputError(f"{path}: unknown score format {path.suffix!r}; give a .npy or .pt matrix")
    if not path.is_file():
        raise KgrankInputError(f"{path}: no such file; check the path")
    try:
        if path.suffix.lower() == ".npy":
            scores = np.load(path, mmap_mode="r", allow_pickle=False)
        else:
            scores = torch.load(path, map_location="cpu", weights_only=True)
    except (ValueError, OSError, EOFError, RuntimeError, pickle.UnpicklingError) as error:
        reason = (str(error).split(". ")[0].splitlines() or [type(error).__name__])[0]
        raise KgrankInputError(
            f"{path}: not a readable score matrix ({reason}); save a (queries, entities) float array with "
            "numpy.save or a tensor with torch.save"
        ) from None
    if isinstance(scores, torch.Tensor):
        scores = scores.detach()
    elif not isinstance(scores, np.ndarray):
        raise KgrankInputError(
            f"{path}: holds a {type(scores).__name__}, not a tensor; save the score tensor itself"
        )
    if scores.ndim != 2:
        raise KgrankInputError(
            f"{path}: shape {tuple(scores.shape)}, expected (queries, entities): one row per query"
        )
    if not (np.issubdtype(np.dtype(str(scores.dtype).replace("torch.", "")), np.number)):
        raise KgrankInputError(f"{path}: dtype {scores.dtype} is not numeric; save float scores")
    return scores


@notes_held()
def rank_score_matrix(
    scores_path: str | os.PathLike[str],
    queries_path: str | os.PathLike[str],
    dataset_dir: str | os.PathLike[str],
    *,
    filter_splits: Sequence[str] = DEFAULT_FILTER_SPLITS,
    seed: int = 0,
    allow_partial: bool = False,
    identifiers: str = "auto",
    tolerance: Tolerance | None = None,
    column_labels: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """Ranks from a score matrix (``.npy`` or ``.pt``, shape (queries, entities), higher =
    better) and its query index (CSV/TSV: head, relation, tail, side, one row per matrix row
    in order), through the rank engine's ``ranks.ranks_from_scores`` with the dataset's
    filter. The random rank is drawn as ``compute_ranks`` draws it, so a model's scores give
    the same table as the model.

    The columns are the dataset's entity ids in order (its labels sorted, as PyKEEN numbers
    them; :func:`id_maps` lists them), unless ``column_labels`` names a file of the entity
    label of each column, one per line, in column order."""
    import torch

    from kgrank.engine.ranks import random_tie_ranks, ranks_from_scores

    _check_identifiers(identifiers)
    scores_path, dataset_dir = Path(scores_path), Path(dataset_dir)
    scores = _load_scores(scores_path)
    source = _read_table(queries_path, "queries")
    factories = load_factories(dataset_dir)
    num_entities = factories.training.num_entities
    if scores.shape[0] != len(source.frame) or scores.shape[1] != num_entities:
        raise KgrankInputError(
            f"{scores_path}: shape {tuple(scores.shape)}, but {source.path} lists {len(source.frame)} "
            f"queries and {dataset_dir} has {num_entities} entities; give one row per query and one "
            "column per entity"
        )
    triples = _triples_of(source, factories, identifiers)
    sides = _sides(source)
    known = known_answers(factories, filter_splits)
    # the matrix column that holds each dataset id
    column_of_id = (
        None if column_labels is None else _column_of_id(column_labels, factories.training.entity_to_id)
    )
    batch = np.stack([triples[column] for column in TRIPLE_COLUMNS], axis=1)
    columns = {
        name: np.zeros(len(batch), dtype=np.int64) for name in ("optimistic", "pessimistic", "num_candidates")
    }
    for side in SIDES:
        rows = np.flatnonzero(sides == side)
        for start in range(0, len(rows), SCORE_BATCH_ROWS):
            chunk = rows[start : start + SCORE_BATCH_ROWS]
            block = torch.as_tensor(
                np.asarray(scores[chunk]) if isinstance(scores, np.ndarray) else scores[chunk]
            )
            block = block.to(torch.float64 if block.dtype == torch.float64 else torch.float32).clone()
            if column_of_id is not None:
                block = block[:, torch.as_tensor(column_of_id)]
            nan = torch.isnan(block).any(dim=1)
            if nan.any():
                row = int(chunk[int(nan.nonzero()[0])])
                raise KgrankInputError(
                    f"{scores_path}: row {row} (query {source.where(row)}) holds NaN; give every entity "
                    "a score (-inf for one that cannot be the answer)"
                )
            true_entities = torch.as_tensor(batch[chunk, 0] if side == "head" else batch[chunk, 2])
            filter_rows, filter_cols = known.answers(side, batch[chunk])
            if tolerance is None or tolerance.exact:
                ranked = ranks_from_scores(block, true_entities, filter_rows, filter_cols)
            else:
                from kgrank.engine.ties import ranks_with_tolerance

                tie = {"absolute": tolerance.absolute, "relative": tolerance.relative}
                ranked = ranks_with_tolerance(block, true_entities, filter_rows, filter_cols, **tie)
            for name, values in ranked.items():
                columns[name][chunk] = values
    optimistic, pessimistic = columns["optimistic"], columns["pessimistic"]
    ranks = {
        "optimistic": optimistic.astype(float),
        "realistic": (optimistic + pessimistic) / 2.0,
        "pessimistic": pessimistic.astype(float),
        "random": optimistic.astype(float),  # drawn below, in the table's order
    }
    table, order = _assemble(
        source,
        triples,
        sides,
        ranks,
        None,
        dataset_dir,
        factories,
        filter_splits,
        allow_partial,
        "the query index",
    )
    # one definition of the filtered setting: the engine's counts are candidate_counts'
    assert np.array_equal(table["num_candidates"].to_numpy(), columns["num_candidates"][order])
    for column in ("optimistic", "pessimistic"):
        table[column] = table[column].astype(np.int64)
    table["random"] = random_tie_ranks(table["optimistic"].to_numpy(), table["pessimistic"].to_numpy(), seed)
    return table


# --- one entry point --------------------------------------------------------------------


def load_positional_ranks(
    path: str | os.PathLike[str],
    dataset_dir: str | os.PathLike[str],
    *,
    filter_splits: Sequence[str] = DEFAULT_FILTER_SPLITS,
    allow_partial: bool = False,
) -> pd.DataFrame:
    """Ranks as an array in the test split's order (``.npy`` or ``.pt``), as AmpliGraph's
    evaluate_performance returns them and TorchKGE's rank_true_heads and rank_true_tails
    stacked give them: shape (test triples, 2), the head's rank then the tail's for each
    triple of the prepared dataset's test.tsv, in its order. Read as the long rank table
    with the test labels beside each rank (:func:`load_rank_table`)."""
    path, dataset_dir = Path(path), Path(dataset_dir)
    array = np.asarray(_load_scores(path), dtype=float)
    test = read_triples(dataset_dir / "test.tsv")
    if array.ndim != 2 or array.shape[1] != 2 or len(array) != len(test):
        raise KgrankInputError(
            f"{path}: shape {array.shape}, but {dataset_dir / 'test.tsv'} holds {len(test)} test triples; "
            f"with --order test give an array of shape ({len(test)}, 2): the head's rank, then the tail's, "
            "per triple in that file's order"
        )
    long = pd.DataFrame(
        {
            **{column: np.tile(test[:, position], 2) for position, column in enumerate(TRIPLE_COLUMNS)},
            "side": np.repeat(list(SIDES), len(test)),
            "rank": [repr(float(value)) for value in np.concatenate([array[:, 0], array[:, 1]])],
        }
    )
    # a problem names the array's row (1-based), as a Parquet row is named
    rows = np.tile(np.arange(1, len(test) + 1), 2)
    table = _rank_table_of(
        _Source(path, long, rows, True), dataset_dir, filter_splits, allow_partial, "labels"
    )
    # said once the array has read as a rank table, so a refusal stays one line
    print(
        f"{path}: read as head and tail ranks of the {len(test)} test triples in test.tsv's order",
        file=sys.stderr,
    )
    return table


def detect_kind(source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> str:
    """``ranks``, ``pykeen`` or ``scores`` for what :func:`load_system` is given."""
    if isinstance(source, (list, tuple)):
        if len(source) == 2:
            return "scores"
        raise KgrankInputError(
            f"{len(source)} paths given; give one (a rank table or a PyKEEN folder) or two (a score matrix "
            "and its query index)"
        )
    path = Path(source)
    if path.is_dir():
        if is_pykeen_folder(path):
            return "pykeen"
        if (path / "model.pt").is_file() and (path / "config.json").is_file():
            return "kgrank"
        raise KgrankInputError(
            f"{path}: a folder without {PYKEEN_MODEL_FILE}; pass the folder PyKEEN's "
            "pipeline(...).save_to_directory(...) wrote (or a kgrank model folder: model.pt, config.json)"
        )
    suffix = path.suffix.lower()
    if suffix in SCORE_SUFFIXES:
        raise KgrankInputError(
            f"{path}: a score matrix needs its query index (head, relation, tail, side per row): give "
            "kgrank evaluate both (--scores FILE --queries FILE), or load_system((scores, queries), ...); "
            "kgrank compare takes its ranks (kgrank evaluate ... --ranks-out FILE.parquet)"
        )
    if suffix in RANK_TABLE_SUFFIXES:
        return "ranks"
    if not path.exists():
        raise KgrankInputError(f"{path}: no such file or folder; check the path")
    raise KgrankInputError(
        f"{path}: not a rank table (.csv, .tsv, .txt, .parquet), a PyKEEN pipeline folder or a score "
        "matrix (.npy, .pt with a query index); give one of them"
    )


def load_system(
    source: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    dataset_dir: str | os.PathLike[str],
    *,
    kind: str | None = None,
    filter_splits: Sequence[str] = DEFAULT_FILTER_SPLITS,
    seed: int = 0,
    allow_partial: bool = False,
    identifiers: str = "auto",
    batch_size: int = 256,
    device: str = "cpu",
    progress: bool = False,
    tolerance: str | Tolerance | None = None,
    trusted: bool = False,
    column_labels: str | os.PathLike[str] | None = None,
) -> pd.DataFrame:
    """The rank table (kgrank's format) of a system from outside, on the prepared dataset
    ``dataset_dir``; see the module docstring for the kinds.

    ``source``: a rank table file, a PyKEEN pipeline folder, or a pair (score matrix,
    query index); ``kind`` (``ranks``, ``pykeen``, ``scores``) is detected when None (a
    kgrank model folder, ``kind="kgrank"``, is ranked as `kgrank ranks` does);
    ``filter_splits``: the filtered setting; ``seed``: the non-deterministic rank where it
    is drawn; ``allow_partial`` and ``identifiers``: as in :func:`load_rank_table`;
    ``batch_size``, ``device``, ``progress``: the rank engine's, for a model;
    ``tolerance``: when two scores tie (``exact``, ``absolute:<a>``, ``relative:<r>``;
    :func:`kgrank.engine.ties.parse_tolerance`), for a model or a score matrix, whose scores are
    ranked here (a rank table's ties were settled where it was made).
    ``trusted``: a PyKEEN folder's pickle, which runs code when loaded, is loaded only
    where this is True (a folder you trust); otherwise it is refused with the fix;
    ``column_labels``: for a score matrix, a file of each column's entity label (see
    :func:`rank_score_matrix`).
    """
    if isinstance(tolerance, str):
        from kgrank.engine.ties import parse_tolerance

        tolerance = parse_tolerance(tolerance)
    for split in filter_splits:
        if split not in SPLITS:
            raise KgrankInputError(f"filter split {split!r} is not one of {', '.join(SPLITS)}")
    if not isinstance(source, str | os.PathLike | list | tuple):
        raise KgrankInputError(
            f"system {source!r} ({type(source).__name__}): give a path (a rank file, a PyKEEN folder) or a "
            "(scores, queries) pair"
        )
    kind = kind if kind is not None else detect_kind(source)
    if kind == "scores":
        if not (isinstance(source, (list, tuple)) and len(source) == 2):
            raise KgrankInputError("a score matrix comes with its query index: pass (scores, queries)")
        scores, queries = source
        return rank_score_matrix(
            scores,
            queries,
            dataset_dir,
            filter_splits=filter_splits,
            seed=seed,
            allow_partial=allow_partial,
            identifiers=identifiers,
            tolerance=tolerance,
            column_labels=column_labels,
        )
    if isinstance(source, (list, tuple)):
        raise KgrankInputError(f"a {kind} system is one path, got {len(source)}")
    if kind in ("ranks", "positional") and tolerance is not None and not tolerance.exact:
        raise KgrankInputError(
            f"tie tolerance {tolerance.name}: a rank table holds ranks, not scores, so its ties were "
            "settled where it was made; drop the tolerance, or pass the model or its score matrix"
        )
    if kind == "positional":
        return load_positional_ranks(
            source, dataset_dir, filter_splits=filter_splits, allow_partial=allow_partial
        )
    if kind == "ranks":
        return load_rank_table(
            source,
            dataset_dir,
            filter_splits=filter_splits,
            allow_partial=allow_partial,
            identifiers=identifiers,
        )
    if kind == "pykeen":
        return rank_pykeen_folder(
            source,
            dataset_dir,
            filter_splits=filter_splits,
            seed=seed,
            batch_size=batch_size,
            device=device,
            progress=progress,
            tolerance=tolerance,
            trusted=trusted,
        )
    if kind == "kgrank":
        from kgrank.engine.ranks import compute_ranks
        from kgrank.training.train import load_model

        model, factories = load_model(source, dataset_dir, device=device)
        return compute_ranks(
            model,
            factories.testing.mapped_triples,
            known_answers(factories, filter_splits),
            batch_size=batch_size,
            seed=seed,
            progress=progress,
            tolerance=tolerance,
        )
    raise KgrankInputError(f"unknown kind {kind!r}; use one of {', '.join(KINDS)} (or None to detect it)")


# --- the dataset a user names -----------------------------------------------------------


def cache_dir() -> Path:
    """Where PyKEEN datasets named by `kgrank evaluate --dataset NAME` are prepared once:
    ``$XDG_CACHE_HOME/kgrank/datasets`` (``~/.cache/kgrank/datasets`` by default)."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kgrank" / "datasets"


def is_prepared_dataset(path: str | os.PathLike[str]) -> bool:
    path = Path(path)
    return path.is_dir() and all(
        (path / name).is_file() for name in ("train.tsv", "valid.tsv", "test.tsv", "stats.json")
    )


@contextmanager
def dataset_folder(spec: str | os.PathLike[str], header: str | bool = "auto") -> Iterator[Path]:
    """A prepared dataset folder for what a user names: a prepared folder (train/valid/
    test.tsv and stats.json) as it is; a folder of raw train/valid/test files, prepared into
    a temporary folder (removed afterwards; ``header`` as a dataset entry's: auto, True,
    False); or a PyKEEN dataset name, prepared once into
    :func:`cache_dir` (``<cache>/<name>``; said on stderr when first prepared; other datasets
    than Nations, Kinships and UMLS download)."""
    path = Path(spec)
    if is_prepared_dataset(path):
        yield path
        return
    if path.is_dir():
        with tempfile.TemporaryDirectory(prefix="kgrank-dataset-") as temporary:
            prepared = Path(temporary) / path.name
            source = {"source": "folder", "path": str(path), "header": header}
            prepare_dataset(path.resolve().name, source, prepared)
            yield prepared
        return
    yield _cached_pykeen_dataset(str(spec))


def _cached_pykeen_dataset(name: str) -> Path:
    from pykeen.datasets import dataset_resolver

    if os.sep in name or (os.altsep and os.altsep in name) or name.startswith("."):
        raise KgrankInputError(
            f"{name}: no such folder; give a dataset folder or a PyKEEN dataset name (nations ...)"
        )
    try:
        dataset_class = dataset_resolver.lookup(name)
    except (KeyError, ValueError):
        raise KgrankInputError(
            f"{name!r}: no such folder, and not a PyKEEN dataset; give a prepared dataset folder "
            "(`kgrank prepare-dataset`), a folder of train/valid/test files, or a PyKEEN name "
            "(nations, kinships ...)"
        ) from None
    target = cache_dir() / dataset_class.__name__.lower()
    if is_prepared_dataset(target):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        prepare_dataset(target.name, {"source": "pykeen"}, partial)
        try:
            os.replace(partial, target)
        except OSError:
            if not is_prepared_dataset(target):  # another run prepared it meanwhile, else a real error
                raise
        else:
            print(f"dataset {name}: prepared from PyKEEN into {target} (reused from now on)", file=sys.stderr)
    finally:
        shutil.rmtree(partial, ignore_errors=True)
    return target
