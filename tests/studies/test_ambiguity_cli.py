"""The ambiguity study's commands on bad input: one error line, exit code 2, nothing
written (the check and the shared helpers: tests/cli_cases.py)."""

from __future__ import annotations

import pytest
from cli_cases import Case, _bad_tsv, _damaged_rank_table, _figure, case_params, check_bad_input

CASES = [
    Case(
        "ambiguity-variants",
        "not-a-rank-table",
        lambda tmp, _: [
            "ambiguity-variants",
            *(
                "--ranks",
                _bad_tsv(tmp),
                "--seed",
                "1",
                "--settings",
                '{"alpha": 0.05}',
                "--out",
                str(tmp / "v.tsv"),
                "--ties",
                str(tmp / "t.tsv"),
            ),
            *("--markdown", str(tmp / "v.md"), "--latex", str(tmp / "v.tex")),
            *("--ties-markdown", str(tmp / "t.md"), "--ties-latex", str(tmp / "t.tex"), *_figure(tmp)),
        ],
        ("bad.tsv", "<dataset>/<model>.parquet"),
    ),
    Case(
        "ambiguity-subsets",
        "missing-model-dir",
        lambda tmp, nations: [
            "ambiguity-subsets",
            *("--dataset-dir", str(nations), "--model-dir", str(tmp / "nomodel")),
            *("--settings", '{"repetitions": 2, "subsets": {"fractions": [0.5, 1.0]}}', "--batch-size", "16"),
            *("--seed", "1", "--out", str(tmp / "s.parquet")),
        ],
        ("nomodel",),
        needs_nations=True,
    ),
    Case(
        "ambiguity-drift",
        "one-candidate",
        lambda tmp, _: [
            "ambiguity-drift",
            *("--ranks", str(tmp / "nations" / "transe.parquet"), "--seed", "1"),
            *("--settings", '{"candidate_sizes": [1, 10], "repetitions": 2, "bootstrap_resamples": 100}'),
            *("--out", str(tmp / "d.tsv"), "--slopes", str(tmp / "s.tsv")),
            *("--markdown", str(tmp / "d.md"), "--latex", str(tmp / "d.tex")),
        ],
        ("argument --settings: key candidate_sizes.0: 1 is less than the minimum of 2",),
    ),
    Case(
        "ambiguity-drift",
        "size-that-keeps-every-candidate",
        lambda tmp, _: [
            "ambiguity-drift",
            # an intact table (no damage named): every task has 5 candidates
            *("--ranks", _damaged_rank_table(tmp, "none"), "--seed", "1"),
            *(
                "--settings",
                '{"candidate_sizes": [2, 5, "all"], "repetitions": 2, "bootstrap_resamples": 100}',
            ),
            *("--out", str(tmp / "d.tsv"), "--slopes", str(tmp / "s.tsv")),
            *("--markdown", str(tmp / "d.md"), "--latex", str(tmp / "d.tex")),
        ],
        ("studies.ambiguity.candidate_sizes: 5 keeps every candidate", "use sizes below 5"),
    ),
    Case(
        "ambiguity-drift-figure",
        "malformed-drift",
        lambda tmp, _: ["ambiguity-drift-figure", "--drift", _bad_tsv(tmp), *_figure(tmp)],
        ("bad.tsv", "missing"),
    ),
    Case(
        "ambiguity-table1",
        "malformed-published",
        lambda tmp, _: [
            "ambiguity-table1",
            *("--published", _bad_tsv(tmp), "--ranks", str(tmp / "nations" / "transe.parquet")),
            *("--settings", '{"alpha": 0.05}', "--out", str(tmp / "t.tsv")),
            *("--markdown", str(tmp / "t.md"), "--latex", str(tmp / "t.tex")),
        ],
        ("bad.tsv", "mean_rank"),
    ),
    Case(
        "ambiguity-pairwise",
        "missing-rank-table",
        lambda tmp, _: [
            "ambiguity-pairwise",
            *("--ranks", str(tmp / "nations" / "transe.parquet"), "--seed", "1"),
            *("--settings", '{"alpha": 0.05, "confidence": 0.95, "bootstrap_resamples": 100}'),
            *("--out", str(tmp / "p.tsv"), "--markdown", str(tmp / "p.md"), "--latex", str(tmp / "p.tex")),
            *_figure(tmp),
        ],
        ("transe.parquet", "no such file"),
    ),
]


@pytest.mark.parametrize("case", case_params(CASES))
def test_bad_input_is_one_line_and_exit_code_2(case, tmp_path, capsys, request):
    check_bad_input(case, tmp_path, capsys, request)
