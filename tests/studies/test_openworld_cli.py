"""The openworld study's commands on bad input: one error line, exit code 2, nothing
written (the check and the shared helpers: tests/cli_cases.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_cases import Case, _bad_tsv, _figure, case_params, check_bad_input

# a small simulated world (the schema's defaults take minutes)
WORLD = {"entities": 400, "answers": 8}
PIPELINE = {
    "model": "transe",
    "optimizer": "adam",
    "training_loop": "lcwa",
    "training_kwargs": {"num_epochs": 1, "batch_size": 8},
}


def _openworld_simulate(tmp: Path, *, density: float, strength: tuple[float, float, float]) -> list[str]:
    """A small openworld-simulate call with the density and strength grid given."""
    outputs = {"--out": "g.tsv", "--markdown": "a.md", "--latex": "a.tex", "--precision-out": "p.tsv"}
    simulation = {
        **WORLD,
        "densities": [density],
        "strength": dict(zip(("start", "stop", "step"), strength, strict=True)),
        "correlations": [0],
        "queries": 10,
        "precision_queries": 10,
        "precision_step": 0.5,
    }
    return [
        "openworld-simulate",
        *("--settings", json.dumps({"simulation": simulation}), "--seed", "1"),
        *(item for option, name in outputs.items() for item in (option, str(tmp / name))),
        "--quiet",
    ]


def _openworld_family_tree(
    tmp: Path, *, folders: str, configuration: str, pipeline: Any, configurations: dict | None = None
) -> list[str]:
    """An openworld-family-tree call with the graph folders and one configuration given
    (``configurations``: the settings' instead)."""
    family_tree = {"evaluate_every": 1, "configurations": configurations or {configuration: pipeline}}
    return [
        "openworld-family-tree",
        *("--graph-folders", folders, "--density", "65", "--configuration", configuration),
        *("--settings", json.dumps({"family_tree": family_tree})),
        *("--seed", "1", "--out", str(tmp / "c.tsv")),
    ]


CASES = [
    Case(
        "openworld-simulate",
        "density-above-one",
        lambda tmp, _: _openworld_simulate(tmp, density=1.5, strength=(0.3, 1, 0.1)),
        ("argument --settings: key simulation.densities.0: 1.5 is greater than the maximum of 1",),
    ),
    Case(
        "openworld-simulate",
        "backwards-strengths",
        lambda tmp, _: _openworld_simulate(tmp, density=0.5, strength=(0.9, 0.3, 0.1)),
        ("strengths from 0.9 to 0.3", "studies.openworld.simulation.strength"),
    ),
    Case(
        "openworld-simulate",
        "float-entities",
        lambda tmp, _: [
            "openworld-simulate",
            *("--settings", '{"simulation": {"entities": 4e2}}', "--seed", "1"),
            *("--out", str(tmp / "g.tsv"), "--precision-out", str(tmp / "p.tsv")),
            *("--markdown", str(tmp / "a.md"), "--latex", str(tmp / "a.tex")),
        ],
        ("argument --settings: key simulation.entities: 400.0 is not of type 'integer'",),
    ),
    Case(
        "openworld-inconsistency",
        "no-pair-fits",
        lambda tmp, _: [
            "openworld-inconsistency",
            "--settings",
            json.dumps(
                {
                    "simulation": {**WORLD, "densities": [0.5]},
                    "inconsistency": {
                        "weaker_strengths": [0.95],
                        "gaps": [0.1],
                        "query_counts": [10],
                        "montecarlo_replicates": 100,
                    },
                }
            ),
            "--seed",
            "1",
            "--out",
            str(tmp / "i.tsv"),
            "--needed",
            str(tmp / "n.tsv"),
            "--quiet",
        ],
        ("no pair of strengths", "gaps"),
    ),
    Case(
        "openworld-inconsistency",
        "too-few-replicates",
        lambda tmp, _: [
            "openworld-inconsistency",
            *("--settings", '{"inconsistency": {"montecarlo_replicates": 5}}', "--seed", "1"),
            *("--out", str(tmp / "i.tsv"), "--needed", str(tmp / "n.tsv"), "--quiet"),
        ],
        ("argument --settings: key inconsistency.montecarlo_replicates: 5 is less than the minimum of 20",),
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
            "--settings",
            '{"saturation": {"low": 0.4, "high": 0.9, "half_width": 0.1, "comparison_queries": 100}}',
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
        "openworld-saturation",
        "low-above-one",
        lambda tmp, _: [
            "openworld-saturation",
            *("--grid", _bad_tsv(tmp), "--inversions", _bad_tsv(tmp)),
            *("--settings", '{"saturation": {"low": 1.4}}', "--out", str(tmp / "s.tsv")),
            *("--markdown", str(tmp / "s.md"), "--latex", str(tmp / "s.tex")),
        ],
        ("argument --settings: key saturation.low: 1.4 is greater than the maximum of 1",),
    ),
    Case(
        "openworld-family-tree",
        "unknown-model",
        lambda tmp, _: _openworld_family_tree(
            tmp,
            folders=f"independent={tmp}",
            configuration="broken",
            pipeline={**PIPELINE, "model": "transee"},
        ),
        ("--settings: key family_tree.configurations.broken", "unknown model 'transee'"),
    ),
    Case(
        "openworld-family-tree",
        "negative-learning-rate",
        lambda tmp, _: _openworld_family_tree(
            tmp,
            folders=f"independent={tmp}",
            configuration="fast",
            pipeline={**PIPELINE, "optimizer_kwargs": {"lr": -0.1}},
        ),
        (
            "family_tree.configurations.fast.optimizer_kwargs.lr: -0.1 is less",
            "lr must be a learning rate > 0",
        ),
    ),
    Case(
        "openworld-family-tree",
        "pipeline-not-an-object",
        lambda tmp, _: _openworld_family_tree(
            tmp, folders=f"independent={tmp}", configuration="broken", pipeline="transe"
        ),
        ("argument --settings: key family_tree.configurations.broken: 'transe' is not of type 'object'",),
    ),
    Case(
        "openworld-family-tree",
        "configuration-not-in-settings",
        lambda tmp, _: _openworld_family_tree(
            tmp,
            folders=f"independent={tmp}",
            configuration="missing",
            pipeline=None,
            configurations={"transe-d8": PIPELINE},
        ),
        ("--configuration 'missing': no key of family_tree.configurations", "(it has: transe-d8)"),
    ),
    Case(
        "openworld-family-tree",
        "settings-not-json",
        lambda tmp, _: [
            "openworld-family-tree",
            *("--graph-folders", f"independent={tmp}", "--density", "65", "--configuration", "c"),
            *("--settings", "{family_tree: 1", "--seed", "1", "--out", str(tmp / "c.tsv")),
        ],
        ("argument --settings: not JSON",),
    ),
    Case(
        "openworld-family-tree",
        "graph-folder-without-name",
        lambda tmp, _: _openworld_family_tree(
            tmp,
            folders=str(tmp),
            configuration="c",
            pipeline=PIPELINE,
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
