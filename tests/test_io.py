"""kgrank.io: atomic writes and the readers of shared tables."""

import json

import numpy as np
import pandas as pd
import pytest

from kgrank.io import atomic_path, partial_path, read_stats, read_tables, write_json, write_table, write_text


def _stats_file(folder, dataset, entities, relations, triples):
    path = folder / dataset / "stats.json"
    write_json(
        path,
        {
            "dataset": dataset,
            "source": "pykeen",
            "entities": entities,
            "relations": relations,
            "triples": dict(zip(("train", "valid", "test"), triples, strict=True)),
            "dropped_unseen": {"valid": 0, "test": 0},
        },
    )
    return path


def test_read_stats_orders_by_entities(tmp_path, nations_dir):
    paths = [
        _stats_file(tmp_path, "big", 1000, 7, (10, 2, 3)),
        nations_dir / "stats.json",
        _stats_file(tmp_path, "tie", 14, 2, (5, 1, 1)),
    ]
    table = read_stats(paths)
    assert list(table.columns) == ["dataset", "entities", "relations", "train", "valid", "test"]
    # stable: nations before tie (both 14 entities), as they were given
    assert table["dataset"].tolist() == ["nations", "tie", "big"]
    assert table.iloc[0].tolist() == ["nations", 14, 55, 1592, 199, 201]
    assert table.index.tolist() == [0, 1, 2]


def test_read_tables_concatenates_in_order(tmp_path):
    first = pd.DataFrame({"dataset": ["a", "a"], "metric": ["x", "y"], "value": [0.5, 1.25]})
    second = pd.DataFrame({"dataset": ["b"], "metric": ["x"], "value": [3.0]})
    write_table(tmp_path / "a.tsv", first)
    write_table(tmp_path / "b.tsv", second)
    table = read_tables([tmp_path / "a.tsv", str(tmp_path / "b.tsv")])
    pd.testing.assert_frame_equal(table, pd.concat([first, second], ignore_index=True))
    assert read_tables([tmp_path / "b.tsv", tmp_path / "a.tsv"])["dataset"].tolist() == ["b", "a", "a"]


def test_write_table_round_trips_tsv_and_parquet(tmp_path):
    frame = pd.DataFrame({"side": ["head", "tail"], "rank": [1, 7], "value": [1 / 3, np.nan]})
    write_table(tmp_path / "t.tsv", frame)
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "t.tsv", sep="\t"), frame, rtol=1e-9)
    write_table(tmp_path / "t.parquet", frame)
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "t.parquet"), frame)
    with pytest.raises(ValueError, match=r"unsupported table format '\.csv'"):
        write_table(tmp_path / "t.csv", frame)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["t.parquet", "t.tsv"]


def test_atomic_path_keeps_the_old_file_on_failure(tmp_path):
    target = tmp_path / "deep" / "out.txt"
    write_text(target, "old\n")
    with pytest.raises(RuntimeError), atomic_path(target) as temporary:
        temporary.write_text("half")
        raise RuntimeError("killed")
    assert target.read_text() == "old\n"
    assert [path.name for path in target.parent.iterdir()] == ["out.txt"]


def test_a_killed_writers_debris_goes_with_the_rewrite(tmp_path):
    # SIGKILL skips every `finally`: what a killed step leaves is its partial file
    target = tmp_path / "out.tsv"
    leftover = partial_path(target)
    leftover.write_text("half a tab")
    assert leftover.name == ".out.tsv.kgrank-partial"
    write_text(target, "whole\n")
    assert target.read_text() == "whole\n"
    assert [path.name for path in tmp_path.iterdir()] == ["out.tsv"]


def test_write_json_is_sorted_and_ends_with_a_newline(tmp_path):
    write_json(tmp_path / "x.json", {"b": 1, "a": [1, 2]})
    text = (tmp_path / "x.json").read_text()
    assert text.endswith("}\n") and text.index('"a"') < text.index('"b"')
    assert json.loads(text) == {"a": [1, 2], "b": 1}
