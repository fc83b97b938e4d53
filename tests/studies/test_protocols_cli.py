"""The protocols study's commands on bad input: one error line, exit code 2, nothing
written (the check and the shared helpers: tests/cli_cases.py)."""

from __future__ import annotations

import pytest
from cli_cases import (
    Case,
    _bad_tsv,
    _damaged_rank_table,
    _figure,
    _two_rank_tables_of_one_dataset,
    case_params,
    check_bad_input,
)

CASES = [
    Case(
        "protocols-weighted",
        "unknown-scheme",
        lambda tmp, _: [
            *("protocols-weighted", "--ranks", _damaged_rank_table(tmp, "none"), "--schemes", "negative"),
            *("--out", str(tmp / "w.tsv"), "--markdown", str(tmp / "w.md"), "--latex", str(tmp / "w.tex")),
        ],
        ("--schemes", "invalid choice: 'negative'"),
    ),
    Case(
        "protocols-weighted",
        "rank-above-candidates",
        lambda tmp, _: [
            *("protocols-weighted", "--ranks", _damaged_rank_table(tmp, "rank-above-candidates")),
            *("--schemes", "negatives", "uniform", "--out", str(tmp / "w.tsv")),
            *("--markdown", str(tmp / "w.md"), "--latex", str(tmp / "w.tex")),
        ],
        ("ranks.parquet", "realistic 9.0"),
    ),
    Case(
        "protocols-weighted-check",
        "one-replicate",
        lambda tmp, _: [
            *("protocols-weighted-check", "--ranks", _damaged_rank_table(tmp, "none")),
            *("--schemes", "negatives", "uniform", "--montecarlo-replicates", "1", "--seed", "1"),
            *("--alpha", "0.01", "--out", str(tmp / "c.tsv")),
            *("--markdown", str(tmp / "c.md"), "--latex", str(tmp / "c.tex")),
        ],
        ("--montecarlo-replicates", "give at least 2"),
    ),
    Case(
        "protocols-weighted-check",
        "two-tables-of-a-dataset",
        lambda tmp, _: [
            "protocols-weighted-check",
            *("--ranks", *_two_rank_tables_of_one_dataset(tmp)),
            *("--schemes", "negatives", "uniform", "--montecarlo-replicates", "20", "--seed", "1"),
            *("--alpha", "0.01", "--out", str(tmp / "c.tsv")),
            *("--markdown", str(tmp / "c.md"), "--latex", str(tmp / "c.tex")),
        ],
        ("two rank tables of dataset nations", "pass one per dataset"),
    ),
    Case(
        "protocols-weighted-figure",
        "malformed-weighted",
        lambda tmp, _: ["protocols-weighted-figure", "--weighted", _bad_tsv(tmp), *_figure(tmp)],
        ("bad.tsv", "missing"),
    ),
    Case(
        "protocols-sampled",
        "fixed-set-not-a-sampled-table",
        lambda tmp, _: [
            *("protocols-sampled", "--ranks", _damaged_rank_table(tmp, "none")),
            *("--fixed-set", _damaged_rank_table(tmp, "none"), "--num-samples", "3"),
            *("--estimators", "naive", "--regularisation", "0.1", "--corrected-max-k", "none"),
            *("--replicates", "3", "--seed", "1", "--profile", "p", "--out", str(tmp / "s.tsv")),
            *(
                "--agreement",
                str(tmp / "a.tsv"),
                "--markdown",
                str(tmp / "s.md"),
                "--latex",
                str(tmp / "s.tex"),
            ),
        ],
        ("ranks.parquet", "sampled-<k>.parquet"),
    ),
    Case(
        "protocols-sampled",
        "regularisation-above-one",
        lambda tmp, _: [
            *("protocols-sampled", "--ranks", _damaged_rank_table(tmp, "none"), "--num-samples", "3"),
            *("--estimators", "naive", "--regularisation", "2", "--corrected-max-k", "none"),
            *("--replicates", "3", "--seed", "1", "--profile", "p", "--out", str(tmp / "s.tsv")),
            *(
                "--agreement",
                str(tmp / "a.tsv"),
                "--markdown",
                str(tmp / "s.md"),
                "--latex",
                str(tmp / "s.tex"),
            ),
        ],
        ("--regularisation", "not a number in [0, 1]"),
    ),
    Case(
        "protocols-sampled-figure",
        "malformed-estimates",
        lambda tmp, _: ["protocols-sampled-figure", "--estimates", _bad_tsv(tmp), *_figure(tmp)],
        ("bad.tsv", "missing"),
    ),
    Case(
        "protocols-ties-pair",
        "tolerance-not-understood",
        lambda tmp, nations: [
            *("protocols-ties-pair", "--dataset", "nations", "--model", "transe"),
            *("--dataset-dir", str(nations), "--model-dir", str(tmp / "nomodel")),
            *("--scorers", "model", "--decimals", "2", "--tolerances", "loose"),
            *("--max-test-triples", "none", "--depth", "20", "--measures", "nDCG@20"),
            *("--renamings", "2", "--max-queries", "none", "--max-run-rows", "1000", "--seed", "1"),
            *("--profile", "p", "--batch-size", "16", "--out", str(tmp / "t.tsv")),
        ],
        ("--tolerances", "loose", "relative:<r>"),
        needs_nations=True,
    ),
    Case(
        "protocols-ties-pair",
        "missing-model-dir",
        lambda tmp, nations: [
            *("protocols-ties-pair", "--dataset", "nations", "--model", "transe"),
            *("--dataset-dir", str(nations), "--model-dir", str(tmp / "nomodel")),
            *("--scorers", "model", "--decimals", "2", "--tolerances", "exact"),
            *("--max-test-triples", "none", "--depth", "20", "--measures", "nDCG@20"),
            *("--renamings", "2", "--max-queries", "none", "--max-run-rows", "1000", "--seed", "1"),
            *("--profile", "p", "--batch-size", "16", "--out", str(tmp / "t.tsv")),
        ],
        ("nomodel",),
        needs_nations=True,
    ),
    Case(
        "protocols-ties",
        "malformed-pairs",
        lambda tmp, _: [
            *("protocols-ties", "--ranks", _damaged_rank_table(tmp, "none"), "--pairs", _bad_tsv(tmp)),
            *("--profile", "p", "--out", str(tmp / "t.tsv"), "--widths", str(tmp / "w.tsv")),
            *("--markdown", str(tmp / "t.md"), "--latex", str(tmp / "t.tex")),
        ],
        ("bad.tsv", "missing"),
    ),
    Case(
        "protocols-ties-figure",
        "malformed-ties",
        lambda tmp, _: ["protocols-ties-figure", "--ties", _bad_tsv(tmp), *_figure(tmp)],
        ("bad.tsv", "missing"),
    ),
]


@pytest.mark.parametrize("case", case_params(CASES))
def test_bad_input_is_one_line_and_exit_code_2(case, tmp_path, capsys, request):
    check_bad_input(case, tmp_path, capsys, request)
