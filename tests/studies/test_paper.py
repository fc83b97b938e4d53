"""The `paper` study: Figure 1 and Tables 1-4."""

import numpy as np
import pandas as pd
import pytest
from conftest import markdown_row

from kgrank.cli.main import main
from kgrank.data.io import write_report_table
from kgrank.evaluation.metrics import Variant, default_metrics, lookup
from kgrank.studies.paper.figure1 import figure1_data, order_datasets, plot_figure1
from kgrank.studies.paper.report import TABLE4_CAPTION, table4
from kgrank.studies.paper.tables import (
    DIRECTION_AWARE,
    PRINTED_DESIDERATA,
    TABLE1_VARIANTS,
    desiderata,
    table1,
    table1_report,
    table2,
    table3,
    variant_name,
)


def _stats():
    return pd.DataFrame(
        {
            "dataset": ["nations", "kinships"],
            "entities": [14, 104],
            "relations": [55, 25],
            "train": [1592, 8544],
            "valid": [199, 1068],
            "test": [201, 1074],
        }
    )


def _metrics():
    rows = []
    for dataset in ("kinships", "nations"):
        for model in ("transe", "complex"):
            for metric, value in (
                ("inverse_harmonic_mean_rank", 0.5),
                ("adjusted_inverse_harmonic_mean_rank", 0.4),
                ("z_inverse_harmonic_mean_rank", 12.0),
                ("hits_at_10", 0.9),
            ):
                for side in ("head", "both"):
                    rows.append(
                        {
                            "dataset": dataset,
                            "model": model,
                            "side": side,
                            "rank_type": "realistic",
                            "metric": metric,
                            "value": value,
                        }
                    )
    return pd.DataFrame(rows)


def test_figure1_uses_both_sides_realistic_ranks_ordered_by_size(tmp_path):
    data = figure1_data(_metrics(), _stats())
    assert set(data["side"]) == {"both"} and set(data["rank_type"]) == {"realistic"}
    assert list(dict.fromkeys(data["dataset"])) == ["nations", "kinships"]
    assert "hits_at_10" not in set(data["metric"])
    plot_figure1(_metrics(), _stats(), tmp_path / "f.pdf", tmp_path / "f.png", caption="budget")
    assert (tmp_path / "f.pdf").read_bytes().startswith(b"%PDF")
    assert (tmp_path / "f.png").read_bytes().startswith(b"\x89PNG")


def test_figure1_orders_datasets_as_the_papers_caption_or_by_entities():
    """The caption: "in increasing size ... Nations having the least and FB15k-237 having
    the most": by triples; by entities WN18RR comes last."""
    stats = pd.DataFrame(
        {
            "dataset": ["wn18rr", "nations", "fb15k237", "kinships"],
            "entities": [40943, 14, 14541, 104],
            "relations": [11, 55, 237, 25],
            "train": [86835, 1592, 272115, 8544],
            "valid": [3034, 199, 17535, 1068],
            "test": [3134, 201, 20466, 1074],
        }
    )
    by_triples = list(order_datasets(stats, "triples")["dataset"])
    assert by_triples == ["nations", "kinships", "wn18rr", "fb15k237"]
    assert list(order_datasets(stats, "entities")["dataset"]) == ["nations", "kinships", "fb15k237", "wn18rr"]
    with pytest.raises(ValueError, match="use one of triples, entities"):
        order_datasets(stats, "relations")


def test_table4_is_computed_from_stats(tmp_path):
    write_report_table(table4(_stats()), tmp_path / "t.md", tmp_path / "t.tex", caption=TABLE4_CAPTION)
    row = markdown_row((tmp_path / "t.md").read_text(), "Nations")
    assert row == ["Nations", "14", "55", "1592", "199", "201"]
    assert "\\begin{tabular}" in (tmp_path / "t.tex").read_text()


@pytest.mark.parametrize(
    ("name", "variant", "expected"),
    [
        # MR: f(1) = 1 is fixed, yet it grows with r (the printed anti-monotonicity fails),
        # while a lower rank always improves it in its own direction
        (
            "mr",
            "base",
            {
                "fixed optimum": True,
                "asymptotic pessimum": False,
                "anti-monotonic": False,
                "size invariant": False,
                DIRECTION_AWARE: True,
            },
        ),
        (
            "mr",
            "adjusted index",
            {
                "fixed optimum": True,
                "asymptotic pessimum": True,
                "anti-monotonic": True,
                "size invariant": True,
                DIRECTION_AWARE: True,
            },
        ),
        (
            "mrr",
            "base",
            {
                "fixed optimum": True,
                "asymptotic pessimum": True,
                "anti-monotonic": True,
                "size invariant": False,
                DIRECTION_AWARE: True,
            },
        ),
        # at the worst ranks z-MRR tends to 0 like ln(N) / sqrt(N): a limit, hence a pessimum
        (
            "mrr",
            "z-score",
            {
                "fixed optimum": False,
                "asymptotic pessimum": True,
                "anti-monotonic": True,
                "size invariant": True,
                DIRECTION_AWARE: True,
            },
        ),
        (
            "hits@10",
            "base",
            {
                "fixed optimum": True,
                "asymptotic pessimum": True,
                "anti-monotonic": False,
                "size invariant": False,
                DIRECTION_AWARE: False,
            },
        ),
        (
            "median_rank",
            "expectation-normalised",
            {
                "fixed optimum": False,
                "asymptotic pessimum": True,
                "anti-monotonic": False,
                "size invariant": True,
                DIRECTION_AWARE: False,
            },
        ),
    ],
)
def test_desiderata_match_the_mathematics(name, variant, expected):
    (chosen,) = (candidate for candidate in TABLE1_VARIANTS if variant_name(candidate) == variant)
    assert desiderata(lookup(name).metric, chosen) == expected


def test_table1_lists_the_base_then_every_variant():
    assert (None, *Variant) == TABLE1_VARIANTS
    assert [variant_name(variant) for variant in TABLE1_VARIANTS] == [
        "base",
        "expectation-normalised",
        "adjusted index",
        "z-score",
    ]
    table = table1([lookup("mr").metric, lookup("std").metric])  # std has no derived variants: no rows
    assert table["variant"].tolist() == [variant_name(variant) for variant in TABLE1_VARIANTS]
    assert set(table["key"]) == {"arithmetic_mean_rank"}


def test_write_tables_1_to_3(tmp_path):
    out = tmp_path / "tables"
    settings = '{"table2_reference": {"num_candidates": 1234, "num_ranks": 11}}'
    arguments = ["--out-dir", str(out), "--settings", settings]
    assert main(["paper-tables-1-3", *arguments]) == 0
    tmp_path = out
    assert sorted(path.name for path in tmp_path.iterdir()) == [
        f"table{number}.{suffix}" for number in (1, 2, 3) for suffix in ("md", "tex")
    ]
    rows = [
        [cell.strip() for cell in line.strip("|").split("|")]
        for line in (tmp_path / "table1.md").read_text().splitlines()
    ]
    # AMRI (metric, key, variant, the four desiderata, kgrank's reading): every one holds
    (amri,) = (row for row in rows if row[1:3] == ["arithmetic_mean_rank", "adjusted index"])
    assert amri[3:] == ["✓"] * 5
    # MR: the paper's marks next to the verdicts, the one disagreement flagged with its note
    (mean_rank,) = (row for row in rows if row[1:3] == ["arithmetic_mean_rank", "base"])
    assert mean_rank[3:] == ["✓ (paper ✗) [1]", "✗ (paper ✗)", "✗ (paper ✗)", "✗ (paper ✗)", "✓"]
    text = (tmp_path / "table1.md").read_text()
    assert "[1] MR with every rank 1 is 1" in text and "[2]" not in text
    assert "1,234 candidates" in (tmp_path / "table2.tex").read_text()
    assert markdown_row((tmp_path / "table3.md").read_text(), "geometric")[:2] == ["0", "geometric"]


def test_table1_agrees_with_the_paper_where_it_marks_except_flagged_cells():
    """MRR and every H_k: all four printed verdicts equal the paper's marks; MR differs on
    the fixed optimum only, and every disagreement has its reason."""
    table = table1(default_metrics()).set_index(["key", "variant"])
    flags = [f"disagrees: {name}" for name in PRINTED_DESIDERATA]
    flagged = table[table[flags].any(axis=1)]
    assert list(flagged.index) == [("arithmetic_mean_rank", "base")]
    assert flagged[flags].sum(axis=1).iloc[0] == 1
    for key in ("inverse_harmonic_mean_rank", "hits_at_1", "hits_at_10"):
        row = table.loc[(key, "base")]
        assert [row[f"paper: {name}"] for name in PRINTED_DESIDERATA] == [
            row[name] for name in PRINTED_DESIDERATA
        ]
    _, notes = table1_report(table.reset_index())
    assert len(notes) == 1 and notes[0].startswith("[1] ")


def test_tables_2_and_3_come_from_the_registry():
    metrics = default_metrics()
    definitions = table2(metrics, np.full(11, 100)).set_index("key")
    assert len(definitions) == len(metrics)
    assert definitions.loc["inverse_harmonic_mean_rank", ["f", "mean", "g"]].tolist() == ["1/r", "M_1", "x"]
    assert definitions.loc["geometric_mean_rank", "moments"] == "closed form"
    powers = table3(metrics).set_index("mean")
    assert powers.loc["geometric", "key"] == "geometric_mean_rank"
    assert powers.loc["maximum", "key"] == "power_mean_rank_inf"


def test_figure1_draws_each_values_interval(tmp_path, monkeypatch):
    """Figure 1 had no intervals (issue 47): each bar gets its metric table's ci_low and
    ci_high as an error bar, at the bar's centre."""
    import kgrank.studies.paper.figure1 as figure1

    metrics = _metrics().assign(
        ci_low=lambda frame: frame["value"] - 0.1, ci_high=lambda frame: frame["value"] + 0.2
    )
    captured = []
    monkeypatch.setattr(figure1, "save_figure", lambda figure, pdf, png: captured.append(figure))
    plot_figure1(metrics, _stats(), tmp_path / "f.pdf", tmp_path / "f.png")
    mrr_axis = captured[0].axes[0]
    # 2 datasets x 2 models: one error bar each, from value - 0.1 to value + 0.2
    segments = [collection for collection in mrr_axis.collections if len(collection.get_segments()) == 1]
    spans = sorted((segment[0][0][1], segment[0][1][1]) for segment in (c.get_segments() for c in segments))
    assert len(spans) == 4 and all(
        low == pytest.approx(0.4) and high == pytest.approx(0.7) for low, high in spans
    )
