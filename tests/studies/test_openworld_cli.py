"""The openworld study's commands on bad input: one error line, exit code 2, nothing
written (the check and the shared helpers: tests/cli_cases.py)."""

from __future__ import annotations

import pytest
from cli_cases import (
    Case,
    _bad_tsv,
    _figure,
    _openworld_family_tree,
    _openworld_simulate,
    case_params,
    check_bad_input,
)

CASES = [
    Case(
        "openworld-simulate",
        "density-above-one",
        lambda tmp, _: _openworld_simulate(tmp, density="1.5", strength=("0.3", "1", "0.1")),
        ("density 1.5", "(0, 1]"),
    ),
    Case(
        "openworld-simulate",
        "backwards-strengths",
        lambda tmp, _: _openworld_simulate(tmp, density="0.5", strength=("0.9", "0.3", "0.1")),
        ("strengths from 0.9 to 0.3", "studies.openworld.simulation.strength"),
    ),
    Case(
        "openworld-inconsistency",
        "no-pair-fits",
        lambda tmp, _: [
            "openworld-inconsistency",
            "--entities",
            "400",
            "--answers",
            "8",
            "--densities",
            "0.5",
            "--seed",
            "1",
            "--weaker-strengths",
            "0.95",
            "--gaps",
            "0.1",
            "--query-counts",
            "10",
            "--montecarlo-replicates",
            "100",
            "--out",
            str(tmp / "i.tsv"),
            "--needed",
            str(tmp / "n.tsv"),
            "--quiet",
        ],
        ("no pair of strengths", "gaps"),
    ),
    Case(
        "openworld-saturation",
        "malformed-grid",
        lambda tmp, _: [
            "openworld-saturation",
            "--grid",
            _bad_tsv(tmp),
            "--inversions",
            _bad_tsv(tmp),
            "--low",
            "0.4",
            "--high",
            "0.9",
            "--half-width",
            "0.1",
            "--comparison-queries",
            "100",
            "--out",
            str(tmp / "s.tsv"),
            "--markdown",
            str(tmp / "s.md"),
            "--latex",
            str(tmp / "s.tex"),
        ],
        ("bad.tsv",),
    ),
    Case(
        "openworld-family-tree",
        "unknown-model",
        lambda tmp, _: _openworld_family_tree(
            tmp,
            folders=f"independent={tmp}",
            configuration="broken",
            pipeline='{"model": "transee", "optimizer": "adam", "training_loop": "lcwa",'
            ' "training_kwargs": {"num_epochs": 1, "batch_size": 8}}',
        ),
        ("studies.openworld.family_tree.configurations.broken", "unknown model 'transee'"),
    ),
    Case(
        "openworld-family-tree",
        "negative-learning-rate",
        lambda tmp, _: _openworld_family_tree(
            tmp,
            folders=f"independent={tmp}",
            configuration="fast",
            pipeline='{"model": "transe", "optimizer": "adam", "optimizer_kwargs": {"lr": -0.1},'
            ' "training_loop": "lcwa", "training_kwargs": {"num_epochs": 1, "batch_size": 8}}',
        ),
        (
            "studies.openworld.family_tree.configurations.fast.optimizer_kwargs.lr: -0.1 is less",
            "lr must be a learning rate > 0",
        ),
    ),
    Case(
        "openworld-family-tree",
        "pipeline-not-json",
        lambda tmp, _: _openworld_family_tree(
            tmp, folders=f"independent={tmp}", configuration="broken", pipeline="{model: transe"
        ),
        ("--pipeline: not JSON",),
    ),
    Case(
        "openworld-family-tree",
        "graph-folder-without-name",
        lambda tmp, _: _openworld_family_tree(
            tmp,
            folders=str(tmp),
            configuration="c",
            pipeline='{"model": "transe", "optimizer": "adam", "training_loop": "lcwa",'
            ' "training_kwargs": {"num_epochs": 1, "batch_size": 8}}',
        ),
        ("--graph-folders", "GRAPH=FOLDER"),
    ),
    Case(
        "openworld-inversions",
        "missing-checkpoints",
        lambda tmp, _: [
            "openworld-inversions",
            "--checkpoints",
            str(tmp / "missing.tsv"),
            "--out",
            str(tmp / "i.tsv"),
            "--markdown",
            str(tmp / "i.md"),
            "--latex",
            str(tmp / "i.tex"),
        ],
        ("missing.tsv",),
    ),
    Case(
        "openworld-figure",
        "kind-without-its-input",
        lambda tmp, _: [
            "openworld-figure",
            "--kind",
            "inconsistency",
            "--inversions",
            str(tmp / "i.tsv"),
            *_figure(tmp),
        ],
        ("--kind inconsistency", "--needed"),
    ),
]


@pytest.mark.parametrize("case", case_params(CASES))
def test_bad_input_is_one_line_and_exit_code_2(case, tmp_path, capsys, request):
    check_bad_input(case, tmp_path, capsys, request)
