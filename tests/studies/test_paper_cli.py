"""The paper study's commands on bad input: one error line, exit code 2, nothing
written (the check and the shared helpers: tests/cli_cases.py)."""

from __future__ import annotations

import pytest
from cli_cases import Case, _bad_stats, _bad_tsv, _figure, case_params, check_bad_input

CASES = [
    Case(
        "paper-figure1",
        "missing-metrics",
        lambda tmp, nations: [
            "paper-figure1",
            "--metrics",
            str(tmp / "missing.tsv"),
            "--stats",
            str(nations / "stats.json"),
            *_figure(tmp),
        ],
        ("missing.tsv",),
        needs_nations=True,
    ),
    Case(
        "paper-figure1",
        "malformed-metrics",
        lambda tmp, nations: [
            "paper-figure1",
            "--metrics",
            _bad_tsv(tmp),
            "--stats",
            str(nations / "stats.json"),
            *_figure(tmp),
        ],
        ("bad.tsv",),
        needs_nations=True,
    ),
    Case(
        "paper-learning-curves",
        "malformed-curves",
        lambda tmp, _: ["paper-learning-curves", "--curves", _bad_tsv(tmp), *_figure(tmp)],
        ("bad.tsv", "missing"),
    ),
    Case(
        "paper-table4",
        "malformed-stats",
        lambda tmp, _: [
            "paper-table4",
            "--stats",
            _bad_stats(tmp),
            "--markdown",
            str(tmp / "t.md"),
            "--latex",
            str(tmp / "t.tex"),
        ],
        ("stats.json",),
    ),
    Case(
        "paper-table4",
        "missing-stats",
        lambda tmp, _: [
            "paper-table4",
            "--stats",
            str(tmp / "missing.json"),
            "--markdown",
            str(tmp / "t.md"),
            "--latex",
            str(tmp / "t.tex"),
        ],
        ("missing.json",),
    ),
    Case(
        "paper-tables-1-3",
        "not-an-integer",
        lambda tmp, _: [
            "paper-tables-1-3",
            "--out-dir",
            str(tmp),
            "--table2-candidates",
            "many",
            "--table2-ranks",
            "10",
        ],
        ("--table2-candidates", "invalid int value: 'many'"),
    ),
    Case(
        "paper-tables-1-3",
        "zero-candidates",
        lambda tmp, _: [
            "paper-tables-1-3",
            "--out-dir",
            str(tmp),
            "--table2-candidates",
            "0",
            "--table2-ranks",
            "10",
        ],
        ("table2-candidates",),
    ),
    Case(
        "paper-published",
        "malformed-tsv",
        lambda tmp, _: [
            "paper-published",
            "--published",
            _bad_tsv(tmp),
            "--moments",
            str(tmp / "moments.tsv"),
            "--checks",
            str(tmp / "checks.tsv"),
            "--data-dir",
            str(tmp),
            "--audit",
            str(tmp / "a.tsv"),
            "--markdown",
            str(tmp / "a.md"),
            *_figure(tmp),
        ],
        ("bad.tsv: column(s) ['model', 'dataset'] missing; pass a table of published values",),
    ),
    Case(
        "paper-published",
        "unknown-filter-split",
        lambda tmp, _: [
            "paper-published",
            "--published",
            str(tmp / "p.tsv"),
            "--moments",
            str(tmp / "m.tsv"),
            "--checks",
            str(tmp / "c.tsv"),
            "--data-dir",
            str(tmp),
            "--filter-splits",
            "validation",
            "--audit",
            str(tmp / "a.tsv"),
            "--markdown",
            str(tmp / "a.md"),
            *_figure(tmp),
        ],
        ("--filter-splits", "invalid choice: 'validation'"),
    ),
    Case(
        "paper-figure1-published",
        "missing-audit",
        lambda tmp, nations: [
            "paper-figure1-published",
            "--audit",
            str(tmp / "missing.tsv"),
            "--metrics",
            _bad_tsv(tmp),
            "--stats",
            str(nations / "stats.json"),
            *_figure(tmp),
        ],
        ("missing.tsv",),
        needs_nations=True,
    ),
    Case(
        "paper-compare-published",
        "missing-metrics",
        lambda tmp, _: [
            "paper-compare-published",
            "--metrics",
            str(tmp / "missing.tsv"),
            "--published-results",
            _bad_tsv(tmp),
            "--profile",
            "test",
            "--out",
            str(tmp / "c.tsv"),
            "--markdown",
            str(tmp / "c.md"),
            *_figure(tmp),
        ],
        ("missing.tsv",),
    ),
]


@pytest.mark.parametrize("case", case_params(CASES))
def test_bad_input_is_one_line_and_exit_code_2(case, tmp_path, capsys, request):
    check_bad_input(case, tmp_path, capsys, request)
