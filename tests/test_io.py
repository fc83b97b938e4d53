"""kgrank.data.io: atomic writes and the readers of shared tables."""

import json

import numpy as np
import pandas as pd
import pytest

from kgrank.data.io import (
    MAX_YAML_NODES,
    atomic_path,
    load_user_yaml,
    partial_path,
    read_stats,
    read_tables,
    write_json,
    write_table,
    write_text,
)
from kgrank.errors import KgrankInputError


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
    with pytest.raises(KgrankInputError, match=r"t.csv: a table is written as .tsv or .parquet, not .csv"):
        write_table(tmp_path / "t.csv", frame)
    (tmp_path / "folder.tsv").mkdir()
    with pytest.raises(KgrankInputError, match=r"folder.tsv: a folder is there; give the path of a file"):
        write_table(tmp_path / "folder.tsv", frame)
    assert sorted(path.name for path in tmp_path.iterdir()) == ["folder.tsv", "t.parquet", "t.tsv"]
    assert not any((tmp_path / "folder.tsv").iterdir())


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


def alias_bomb(levels: int) -> str:
    """A "billion laughs": each level a list of ten aliases of the level before, so that
    ``levels`` lines stand for 10 ** levels values."""
    lines = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


def test_user_yaml_reads_as_safe_load_and_refuses_an_alias_bomb():
    import yaml

    ordinary = "base: &base {lr: 0.01, dim: 50}\nmodel: {<<: *base, dim: 100}\nother: *base\n"
    assert load_user_yaml(ordinary, "c.yaml") == yaml.safe_load(ordinary)
    assert load_user_yaml("", "c.yaml") is None
    assert load_user_yaml(alias_bomb(4), "c.yaml") == yaml.safe_load(alias_bomb(4))  # 11,111 values
    # nine levels stand for about a billion values: refused at once, counted without expanding
    with pytest.raises(
        KgrankInputError, match=f"c.yaml: its aliases .* expand to more than {MAX_YAML_NODES:,}"
    ):
        load_user_yaml(alias_bomb(9), "c.yaml")
    with pytest.raises(KgrankInputError, match="refers to the node that holds it"):
        load_user_yaml("a: &a [1, *a]\n", "c.yaml")
    with pytest.raises(yaml.YAMLError):
        load_user_yaml("a: [1, 2\n", "c.yaml")


def test_an_alias_bomb_in_a_hyperparameter_file_or_the_config_stops_in_one_line(tmp_path):
    from kgrank.training.hyperparameters import load_hyperparameters
    from kgrank.workflow.config import check_yaml_file

    path = tmp_path / "transe.yaml"
    path.write_text(alias_bomb(9) + "pipeline: {model: TransE}\n")
    for reader in (load_hyperparameters, check_yaml_file):
        with pytest.raises(KgrankInputError, match="transe.yaml: its aliases") as error:
            reader(path)
        assert "\n" not in str(error.value)


@pytest.mark.parametrize("value", [".nan", ".inf", "-.Inf", ".NaN"])
def test_user_yaml_refuses_a_nan_or_infinite_number_with_its_key(value):
    with pytest.raises(
        KgrankInputError, match=r"^c.yaml: key pipeline.optimizer_kwargs.lr: -?(nan|inf) is not"
    ):
        load_user_yaml(f"pipeline:\n  optimizer_kwargs: {{lr: {value}}}\n", "c.yaml")
    with pytest.raises(KgrankInputError, match=r"key grid.1: "):
        load_user_yaml(f"grid: [1.0, {value}]\n", "c.yaml")


def test_a_file_cache_computes_again_only_when_a_file_changes(tmp_path):
    """A value is kept while its files stay as they were: rewritten (another size), touched
    or replaced by a copy that keeps the old modification time, it is computed again."""
    import os
    import shutil
    import time

    from kgrank.data.io import FileCache

    path = tmp_path / "train.tsv"
    path.write_text("a\tr\tb\n", encoding="utf-8")
    cache, calls = FileCache(size=2), []

    def compute() -> str:
        calls.append(1)
        return path.read_text(encoding="utf-8")

    assert cache.get([path], (), compute) == cache.get([path], (), compute) == "a\tr\tb\n"
    assert len(calls) == 1
    assert cache.get([path], ("other",), compute) and len(calls) == 2  # the extra key tells apart
    path.write_text("a\tr\tb\nb\tr\tc\n", encoding="utf-8")
    assert cache.get([path], (), compute).count("\n") == 2 and len(calls) == 3
    # another file of the same size copied over it with the old modification time
    other = tmp_path / "other.tsv"
    other.write_text("x\tr\tb\nb\tr\tc\n", encoding="utf-8")
    os.utime(other, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns))
    time.sleep(0.05)  # past the file system's timestamp granularity: the copy's change time differs
    shutil.copy2(other, path)
    assert cache.get([path], (), compute).startswith("x") and len(calls) == 4
    path.unlink()
    with pytest.raises(FileNotFoundError):
        cache.get([path], (), compute)  # not cached: the computation reports the missing file
    assert len(cache.values) <= 2


def test_a_dataset_folder_is_loaded_once_while_it_stays_as_it_was(tmp_path):
    """load_factories and candidate_counts keep a folder's factories and counts (kgrank
    compare reads one dataset per system); a changed split is read again, and a caller's
    change to its counts reaches no other caller."""
    from kgrank.data.datasets import load_factories
    from kgrank.engine.candidates import candidate_counts

    splits = {"train": "a\tr\tb\nb\tr\tc\nc\tr\ta\n", "valid": "a\tr\tc\n", "test": "b\tr\ta\n"}
    for split, text in splits.items():
        (tmp_path / f"{split}.tsv").write_text(text, encoding="utf-8")
    first = load_factories(tmp_path)
    assert load_factories(tmp_path) is first
    counts = candidate_counts(tmp_path, "test")
    counts["num_candidates"] = -1
    assert (candidate_counts(tmp_path, "test")["num_candidates"] > 0).all()
    (tmp_path / "test.tsv").write_text("b\tr\ta\nc\tr\tb\n", encoding="utf-8")
    again = load_factories(tmp_path)
    assert again is not first and again.testing.num_triples == 2
    assert len(candidate_counts(tmp_path, "test")) == 2 * 2
