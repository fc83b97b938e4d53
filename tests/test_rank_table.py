"""kgrank.data.rank_table: the vocabulary of a rank table, importable without the rank engine."""

import subprocess
import sys

import pandas as pd

from kgrank.data.rank_table import RANK_COLUMNS, RANK_TABLE_COLUMNS, SIDES, SIDES_AND_BOTH, select_side


def test_vocabulary():
    assert SIDES == ("head", "tail")
    assert SIDES_AND_BOTH == ("head", "tail", "both")
    assert RANK_COLUMNS == ("optimistic", "realistic", "pessimistic", "random")
    assert (
        "triple_id",
        "head",
        "relation",
        "tail",
        "side",
        *RANK_COLUMNS,
        "num_candidates",
    ) == RANK_TABLE_COLUMNS


def test_select_side():
    table = pd.DataFrame({"side": ["head", "tail", "head", "tail"], "num_candidates": [1, 2, 3, 4]})
    assert select_side(table, "head")["num_candidates"].tolist() == [1, 3]
    assert select_side(table, "tail")["num_candidates"].tolist() == [2, 4]
    assert select_side(table, "both")["num_candidates"].tolist() == [1, 2, 3, 4]
    assert select_side(table, "both") is table
    assert select_side(table, "sideways").empty


def test_rank_table_and_metrics_import_without_torch():
    """The metric registry and every study that names sides must not load the rank engine."""
    code = (
        "import sys, kgrank.data.rank_table, kgrank.evaluation.metrics; "
        "print(sorted(name for name in sys.modules if name.split('.')[0] in {'torch', 'pykeen'}))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
    # the check itself can fail: the rank engine does load torch
    engine = code.replace("kgrank.evaluation.metrics", "kgrank.engine.ranks")
    loaded = subprocess.run([sys.executable, "-c", engine], capture_output=True, text=True, check=True)
    assert "'torch'" in loaded.stdout
