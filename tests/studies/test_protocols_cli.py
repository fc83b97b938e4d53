"""The protocols study's commands on bad input: one error line, exit code 2, nothing
written (the check and the shared helpers: tests/cli_cases.py)."""

from __future__ import annotations

import json

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


def _settings(part: str, **values) -> tuple[str, str]:
    """``--settings`` with ``values`` as studies.protocols.<part>."""
    return ("--settings", json.dumps({part: values}))


# part 1's and part 2's settings, small
SAMPLED = dict(num_samples=[3], estimators=["naive"], regularisation=0.1, corrected_max_k=None, replicates=3)
TIES = dict(
    scorers=["model"],
    decimals=2,
    tolerances=["exact"],
    max_test_triples=None,
    depth=20,
    measures=["nDCG@20"],
    renamings=2,
    max_queries=None,
    max_run_rows=1000,
)

CASES = [
    Case(
        "protocols-weighted",
        "unknown-scheme",
        lambda tmp, _: [
            *("protocols-weighted", "--ranks", _damaged_rank_table(tmp, "none")),
            *_settings("weighted", schemes=["negative", "uniform"]),
            *("--out", str(tmp / "w.tsv"), "--markdown", str(tmp / "w.md"), "--latex", str(tmp / "w.tex")),
        ],
        ("argument --settings: key weighted.schemes.0: 'negative' is not one of",),
    ),
    Case(
        "protocols-weighted",
        "rank-above-candidates",
        lambda tmp, _: [
            *("protocols-weighted", "--ranks", _damaged_rank_table(tmp, "rank-above-candidates")),
            *_settings("weighted", schemes=["negatives", "uniform"]),
            *("--out", str(tmp / "w.tsv")),
            *("--markdown", str(tmp / "w.md"), "--latex", str(tmp / "w.tex")),
        ],
        ("ranks.parquet", "realistic 9.0"),
    ),
    Case(
        "protocols-weighted-check",
        "one-replicate",
        lambda tmp, _: [
            *("protocols-weighted-check", "--ranks", _damaged_rank_table(tmp, "none")),
            *_settings("weighted", schemes=["negatives", "uniform"], montecarlo_replicates=1, alpha=0.01),
            *("--seed", "1", "--out", str(tmp / "c.tsv")),
            *("--markdown", str(tmp / "c.md"), "--latex", str(tmp / "c.tex")),
        ],
        ("argument --settings: key weighted.montecarlo_replicates: 1 is less than the minimum of 2",),
    ),
    Case(
        "protocols-weighted-check",
        "two-tables-of-a-dataset",
        lambda tmp, _: [
            "protocols-weighted-check",
            *("--ranks", *_two_rank_tables_of_one_dataset(tmp)),
            *_settings("weighted", schemes=["negatives", "uniform"], montecarlo_replicates=20, alpha=0.01),
            *("--seed", "1", "--out", str(tmp / "c.tsv")),
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
            *("--fixed-set", _damaged_rank_table(tmp, "none"), *_settings("sampled", **SAMPLED)),
            *("--seed", "1", "--profile", "p", "--out", str(tmp / "s.tsv")),
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
            *("protocols-sampled", "--ranks", _damaged_rank_table(tmp, "none")),
            *_settings("sampled", **{**SAMPLED, "regularisation": 2}),
            *("--seed", "1", "--profile", "p", "--out", str(tmp / "s.tsv")),
            *(
                "--agreement",
                str(tmp / "a.tsv"),
                "--markdown",
                str(tmp / "s.md"),
                "--latex",
                str(tmp / "s.tex"),
            ),
        ],
        ("argument --settings: key sampled.regularisation: 2 is greater than the maximum of 1",),
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
            *_settings("ties", **{**TIES, "tolerances": ["loose"]}),
            *("--seed", "1", "--profile", "p", "--batch-size", "16", "--out", str(tmp / "t.tsv")),
        ],
        ("argument --settings: key ties.tolerances.0: 'loose' does not match",),
        needs_nations=True,
    ),
    Case(
        "protocols-ties-pair",
        "tolerance-not-positive",
        lambda tmp, nations: [
            *("protocols-ties-pair", "--dataset", "nations", "--model", "transe"),
            *("--dataset-dir", str(nations), "--model-dir", str(tmp / "nomodel")),
            *_settings("ties", **{**TIES, "tolerances": ["exact", "relative:0"]}),
            *("--seed", "1", "--profile", "p", "--batch-size", "16", "--out", str(tmp / "t.tsv")),
        ],
        ("relative:0", "relative:<r> with a positive number"),
        needs_nations=True,
    ),
    Case(
        "protocols-ties-pair",
        "missing-model-dir",
        lambda tmp, nations: [
            *("protocols-ties-pair", "--dataset", "nations", "--model", "transe"),
            *("--dataset-dir", str(nations), "--model-dir", str(tmp / "nomodel")),
            *_settings("ties", **TIES),
            *("--seed", "1", "--profile", "p", "--batch-size", "16", "--out", str(tmp / "t.tsv")),
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
