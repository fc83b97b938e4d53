"""The ir study's commands on bad input: one error line, exit code 2, nothing
written (the check and the shared helpers: tests/cli_cases.py)."""

from __future__ import annotations

import pytest
from cli_cases import Case, _bad_tsv, _figure, case_params, check_bad_input
from conftest import REPO

CASES = [
    Case(
        "ir-queries",
        "missing-raw-test",
        lambda tmp, nations: [
            "ir-queries",
            *("--dataset-dir", str(nations), "--kgc-dir", str(REPO / "tests/data/kgc-sparsity-nations")),
            *("--raw-test", str(tmp / "missing.txt"), "--out", str(tmp / "e.parquet")),
            *(
                "--counts",
                str(tmp / "c.tsv"),
                "--relations",
                str(tmp / "r.tsv"),
                "--divergences",
                str(tmp / "d.tsv"),
                "--qrels-dir",
                str(tmp / "q"),
            ),
            *("--markdown", str(tmp / "c.md"), "--latex", str(tmp / "c.tex")),
        ],
        ("missing.txt", "not found"),
        needs_nations=True,
    ),
    Case(
        "ir-evaluate",
        "evaluations-not-parquet",
        lambda tmp, nations: [
            "ir-evaluate",
            *("--model-dir", str(tmp / "nomodel"), "--dataset-dir", str(nations)),
            *("--dataset", "nations", "--model", "transe", "--evaluations", _bad_tsv(tmp), "--seed", "1"),
            *(
                "--filter-splits",
                "train",
                "valid",
                "test",
                "--hits",
                "1",
                "10",
                "--settings",
                '{"run_depth": 20}',
            ),
            *(
                "--items",
                str(tmp / "i.parquet"),
                "--metrics",
                str(tmp / "m.tsv"),
                "--runs-dir",
                str(tmp / "r"),
            ),
        ],
        ("bad.tsv",),
        needs_nations=True,
    ),
    Case(
        "ir-systems",
        "missing-items",
        lambda tmp, _: [
            "ir-systems",
            *("--items", str(tmp / "transe.parquet"), "--systems", "transe"),
            *("--micro-metrics", _bad_tsv(tmp), "--out", str(tmp / "s.tsv")),
            *("--markdown", str(tmp / "s.md"), "--latex", str(tmp / "s.tex"), *_figure(tmp)),
            *(
                "--gap",
                str(tmp / "g.tsv"),
                "--gap-markdown",
                str(tmp / "g.md"),
                "--gap-latex",
                str(tmp / "g.tex"),
            ),
        ],
        ("transe.parquet",),
    ),
    Case(
        "ir-sparsity",
        "a-system-too-few",
        lambda tmp, _: [
            "ir-sparsity",
            *("--items", str(tmp / "a.parquet"), str(tmp / "b.parquet"), "--systems", "transe"),
            *("--relations", _bad_tsv(tmp), "--out", str(tmp / "s.tsv"), "--values", str(tmp / "v.tsv")),
            *("--markdown", str(tmp / "s.md"), "--latex", str(tmp / "s.tex"), *_figure(tmp)),
            *("--values-pdf", str(tmp / "v.pdf"), "--values-png", str(tmp / "v.png")),
            *(
                "--tau",
                str(tmp / "t.tsv"),
                "--tau-markdown",
                str(tmp / "t.md"),
                "--tau-latex",
                str(tmp / "t.tex"),
            ),
        ],
        ("2 item tables but 1 --systems",),
    ),
    Case(
        "ir-stability",
        "fraction-zero",
        lambda tmp, _: [
            "ir-stability",
            *("--items", str(tmp / "a.parquet"), "--systems", "transe", "--dataset", "nations"),
            *("--evaluations", "test", "--seed", "1"),
            *("--settings", '{"stability": {"fractions": [0], "repetitions": 3}}'),
            *("--out", str(tmp / "s.tsv"), "--summary", str(tmp / "m.tsv")),
        ],
        ("argument --settings: key stability.fractions.0: 0 is less than or equal to the minimum of 0",),
    ),
    Case(
        "ir-stability-figure",
        "malformed-summary",
        lambda tmp, _: ["ir-stability-figure", "--summaries", _bad_tsv(tmp), *_figure(tmp)],
        ("bad.tsv", "mean_tau"),
    ),
    Case(
        "ir-discrimination",
        "pair-without-model",
        lambda tmp, _: [
            "ir-discrimination",
            *("--items", str(tmp / "a.parquet"), "--pairs", "nations", "--evaluations", "nations:test"),
            *("--settings", '{"alpha": 0.05}', "--out", str(tmp / "d.tsv"), "--summary", str(tmp / "s.tsv")),
            *("--markdown", str(tmp / "d.md"), "--latex", str(tmp / "d.tex"), *_figure(tmp)),
        ],
        ("--pairs nations", "dataset/model"),
    ),
    Case(
        "ir-montecarlo",
        "a-pair-too-many",
        lambda tmp, _: [
            "ir-montecarlo",
            *("--items", str(tmp / "a.parquet"), "--pairs", "nations/transe", "nations/complex"),
            *("--evaluations", "nations:test", "--hits", "1"),
            *("--settings", '{"montecarlo_replicates": 100, "montecarlo_alpha": 0.01}'),
            *("--seed", "1", "--out", str(tmp / "m.tsv")),
            *("--markdown", str(tmp / "m.md"), "--latex", str(tmp / "m.tex")),
        ],
        ("1 item tables but 2 --pairs",),
    ),
]


@pytest.mark.parametrize("case", case_params(CASES))
def test_bad_input_is_one_line_and_exit_code_2(case, tmp_path, capsys, request):
    check_bad_input(case, tmp_path, capsys, request)
