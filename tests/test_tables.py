"""kgrank.data.tables: every intermediate table checked where it is read, one line per problem."""

from __future__ import annotations

import sys
from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest

from kgrank.data.io import command_outputs, write_text
from kgrank.data.tables import (
    LEARNING_CURVE,
    METRICS,
    RANKS,
    check_table,
    read_table,
    read_tables_of,
    table_kind,
)
from kgrank.errors import KgrankInputError

KIND = table_kind(
    "toy table",
    "`kgrank toy`",
    ("name", "count", "share", "flag", "side", "bound", "free"),
    strings=("name", "side"),
    ints=("count",),
    floats=("share", "bound"),
    bools=("flag",),
    nan=("share",),
    ranges={"count": (1, None), "share": (0, 1)},
    choices={"side": ("head", "tail")},
    at_most={"count": "bound"},
)


def _toy(**changes: list) -> pd.DataFrame:
    frame = pd.DataFrame(
        {
            "name": ["a", "b", "c"],
            "count": [1, 2, 3],
            "share": [0.5, np.nan, 1.0],
            "flag": [True, False, True],
            "side": ["head", "tail", "head"],
            "bound": [5.0, 5.0, 5.0],
            "free": [None, "x", "3"],
        }
    )
    return frame.assign(**changes)


def _tsv(tmp_path, frame: pd.DataFrame, name: str = "t.tsv"):
    path = tmp_path / name
    frame.to_csv(path, sep="\t", index=False)
    return path


def test_a_good_table_reads_back_as_written(tmp_path):
    table = read_table(_tsv(tmp_path, _toy()), KIND)
    assert table["count"].tolist() == [1, 2, 3]
    assert np.isnan(table["share"].iloc[1])  # a declared NaN passes


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": ["a", None, "c"]}, "column name, line 3: missing value (NaN or an empty field)"),
        ({"count": [1, None, 3]}, "column count, line 3: missing value"),
        ({"count": [1, "two", 3]}, "column count, line 3: 'two' is not a number"),
        ({"count": [1, 2.5, 3]}, "column count, line 3: 2.5 is not a whole number"),
        ({"count": [1, 2, 0]}, "column count, line 4: 0 is below the minimum 1"),
        ({"count": [1, 2, 6]}, "column count, line 4: 6 is above bound 5"),
        ({"share": [0.5, np.inf, 1.0]}, "column share, line 3: inf is not a finite number"),
        ({"share": [0.5, 0.1, 1.5]}, "column share, line 4: 1.5 is above the maximum 1"),
        ({"bound": [5.0, -np.inf, 5.0]}, "column bound, line 3: -inf is not a finite number"),
        ({"flag": [True, "maybe", False]}, "column flag, line 3: 'maybe' is not True or False"),
        ({"side": ["head", "both", "tail"]}, "column side, line 3: 'both' is not one of head, tail"),
    ],
)
def test_the_first_bad_value_is_named_with_its_file_column_and_line(tmp_path, changes, message):
    path = _tsv(tmp_path, _toy(**changes))
    with pytest.raises(KgrankInputError) as error:
        read_table(path, KIND)
    text = str(error.value)
    assert text.startswith(f"{path}: {message}"), text
    assert text.endswith("; rerun `kgrank toy` (or pass the file it writes)")
    assert "\n" not in text


def test_empty_header_only_and_missing_columns(tmp_path):
    empty = tmp_path / "empty.tsv"
    empty.write_text("")
    header = _tsv(tmp_path, _toy().iloc[:0], "header.tsv")
    missing = _tsv(tmp_path, _toy().drop(columns="share"), "missing.tsv")
    ragged = tmp_path / "ragged.tsv"
    ragged.write_text("a\tb\n1\t2\n1\t2\t3\n")
    cases = {
        empty: "empty file (not even a header line)",
        header: "no rows (a header only); rerun `kgrank toy`",
        missing: "column(s) ['share'] missing; `kgrank toy` writes",
        ragged: "not a tab-separated table (Error tokenizing data",
        tmp_path / "nowhere.tsv": "no such file; check the path, or run `kgrank toy` first",
        tmp_path: "a folder, not a table",
    }
    for path, message in cases.items():
        with pytest.raises(KgrankInputError, match=None) as error:
            read_table(path, KIND)
        assert str(error.value).startswith(f"{path}: {message}"), str(error.value)


def test_parquet_rows_are_counted_from_one(tmp_path):
    path = tmp_path / "t.parquet"
    _toy(count=[1, 2, 9]).to_parquet(path)
    with pytest.raises(KgrankInputError, match=r"t\.parquet: column count, row 3: 9 is above bound 5"):
        read_table(path, KIND)
    (tmp_path / "bad.parquet").write_text("not parquet")
    with pytest.raises(KgrankInputError, match="not a readable parquet file"):
        read_table(tmp_path / "bad.parquet", KIND)


def test_rank_tables_keep_their_triple_and_side_message(tmp_path):
    table = pd.DataFrame(
        {
            "triple_id": [0, 0],
            "head": [0, 0],
            "relation": [0, 0],
            "tail": [1, 1],
            "side": ["head", "tail"],
            **{column: [1.0, 2.0] for column in ("optimistic", "realistic", "pessimistic", "random")},
            "num_candidates": [5, 5],
        }
    )
    path = tmp_path / "r.parquet"
    table.assign(num_candidates=[5.0, np.nan]).to_parquet(path)
    with pytest.raises(KgrankInputError, match=r"column num_candidates, row 2: missing value"):
        read_table(path, RANKS)
    table.assign(realistic=[1.0, 7.0]).to_parquet(path)
    with pytest.raises(KgrankInputError, match=r"triple_id 0, side tail: realistic 7\.0 is not in"):
        read_table(path, RANKS)
    table.to_parquet(path)
    assert len(read_table(path, RANKS)) == 2


def test_declared_nan_columns_of_the_core_kinds(tmp_path):
    """A metric value and a learning curve's unvalidated epochs are NaN by design."""
    metrics = pd.DataFrame(
        {
            "dataset": ["d"],
            "model": ["m"],
            "side": ["both"],
            "rank_type": ["realistic"],
            "metric": ["z_hits_at_1"],
            "value": [np.nan],
        }
    )
    assert len(read_table(_tsv(tmp_path, metrics, "m.tsv"), METRICS)) == 1
    curve = pd.DataFrame(
        {"epoch": [1, 2], "seconds": [0.1, 0.2], "loss": [1.0, 0.5], "valid_mrr": [np.nan, 0.3]}
    )
    assert len(read_table(_tsv(tmp_path, curve, "c.tsv"), LEARNING_CURVE)) == 2
    with pytest.raises(KgrankInputError, match="no metric table given"):
        read_tables_of([], METRICS)


def test_a_kind_refuses_to_type_a_column_it_does_not_have():
    with pytest.raises(ValueError, match=r"\['nope'\] typed but not among its columns"):
        table_kind("x", "y", ("a",), ints=("nope",))


def _frame_of(rows: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "name": ["a"] * rows,
            "count": np.ones(rows, dtype=int),
            "share": np.full(rows, 0.5),
            "flag": np.ones(rows, dtype=bool),
            "side": ["head"] * rows,
            "bound": np.full(rows, 5.0),
            "free": np.zeros(rows),
        }
    )


def _python_calls(function: Callable[[], object]) -> int:
    calls = 0

    def count(frame, event, arg):
        nonlocal calls
        calls += event == "call"

    sys.setprofile(count)
    try:
        function()
    finally:
        sys.setprofile(None)
    return calls


def test_checking_a_table_is_vectorised():
    """The check's Python work does not grow with the rows (a loop over 40,000 rows would
    add at least 40,000 calls); counted, not timed, so that a busy machine cannot fail it."""
    small, large = _frame_of(400), _frame_of(40_000)
    calls = [
        _python_calls(lambda frame=frame: check_table(frame, KIND, "memory")) for frame in (small, large)
    ]
    assert calls[1] < calls[0] + 1_000, calls


def test_a_failing_command_removes_what_it_wrote(tmp_path):
    first, second = tmp_path / "a.tsv", tmp_path / "b.md"
    with pytest.raises(KgrankInputError), command_outputs():
        write_text(first, "x\n")
        assert first.exists()
        raise KgrankInputError("a later input is bad")
    assert not first.exists()
    with command_outputs() as written:
        write_text(second, "y\n")
    assert written == [second] and second.read_text() == "y\n"


def test_comment_lines_of_a_kind_that_has_them(tmp_path):
    from kgrank.studies.ambiguity.table1 import PUBLISHED_TABLE1

    path = tmp_path / "published.tsv"
    path.write_text("# source\ndataset\tmodel\tmean_rank\tentities\tamri_percent\nwn18rr\tTransE\t2289\t\t\n")
    assert read_table(path, PUBLISHED_TABLE1)["mean_rank"].tolist() == [2289]
    path.write_text("# source\ndataset\tmodel\tmean_rank\tentities\tamri_percent\nwn18rr\tTransE\t0.5\t\t\n")
    with pytest.raises(KgrankInputError, match=r"column mean_rank, line 3: 0\.5 is below the minimum 1"):
        read_table(path, PUBLISHED_TABLE1)
