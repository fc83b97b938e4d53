"""Probe every `kgrank` command that reads an intermediate table with damaged copies of it.

Each table a command reads is replaced, one at a time, by a damaged copy of the real one
from a finished run: empty (0 bytes), header only, a NaN in a required column, a required
column renamed, an infinite value. The other inputs stay intact. Two dataset cases are
added: `ranks` on an empty test split and `train` on an empty validation split. Every case
runs `kgrank.cli.main.main` in this process, its outputs in a fresh folder, and is graded:

- good: exit code 2, one line on stderr naming the damaged file, nothing written;
- weak: exit code 2 with something written, more than one line or the file not named,
  or exit code 0 (the damage accepted without a word);
- bad: a traceback (an exception the CLI does not turn into one line) or another exit code.

Usage (a finished run of the tiny config, e.g. `snakemake --cores 2` in a scratch folder):

    PYTHONPATH=src python scripts/probe_bad_tables.py --results /path/to/results [--only metrics]

It prints one line per case and the counts; ``--json FILE`` writes every case's outcome.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import logging
import shutil
import sys
import tempfile
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
DAMAGES = ("empty", "header-only", "nan", "wrong-column", "inf")


@dataclass
class Slot:
    """One table input of one command: the fixture it takes (relative to the results
    folder), a required column to put NaN in, a numeric column to put inf in, and the
    argv builder (``argv(inputs, out)``; ``inputs`` maps fixture names to paths)."""

    command: str
    slot: str
    nan_column: str
    inf_column: str
    argv: Callable[[dict[str, str], Path], list[str]]


def _fig(out: Path) -> list[str]:
    return ["--pdf", str(out / "f.pdf"), "--png", str(out / "f.png")]


def _tables(out: Path, *, latex: bool = True) -> list[str]:
    return ["--markdown", str(out / "t.md"), *(["--latex", str(out / "t.tex")] if latex else [])]


R = {
    "ranks": "ranks/nations/transe.parquet",
    "ranks2": "ranks/nations/complex.parquet",
    "subsets": "ambiguity/subsets/nations/transe.parquet",
    "metrics": "metrics/nations/transe.tsv",
    "curve": "models/nations/transe/learning_curve.tsv",
    "moments": "moments/nations/moments.tsv",
    "checks": "moments/nations/montecarlo.tsv",
    "drift": "ambiguity/drift.tsv",
    "grid": "openworld/simulation.tsv",
    "inversions": "openworld/inversions.tsv",
    "needed": "openworld/queries_needed.tsv",
    "saturation": "openworld/saturation.tsv",
    "checkpoints": "openworld/family_tree/density-65/complex-d8.tsv",
    "evaluations": "ir/nations/evaluations.parquet",
    "items": "ir/nations/items/transe.parquet",
    "items2": "ir/nations/items/complex.parquet",
    "micro": "ir/nations/micro/transe.tsv",
    "relations": "ir/nations/relations.tsv",
    "summary": "ir/nations/stability_summary.tsv",
    "audit": "published/audit.tsv",  # made by the probe's setup (paper-published)
    "weighted": "protocols/weighted.tsv",
    "sampled": "protocols/sampled.tsv",
    "ties": "protocols/ties.tsv",
}


def _pair_paths(inputs: dict[str, str], out: Path, key: str, folder: str) -> str:
    """The table at ``<out>/<folder>/nations/<model>.parquet`` (ambiguity reads the pair from the path)."""
    source = Path(inputs[key])
    target = (
        out.parent / "pairs" / folder / "nations" / ("transe" if key in ("ranks", "subsets") else "complex")
    )
    target = target.with_suffix(".parquet")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return str(target)


def _ranks_pair(inputs: dict[str, str], out: Path) -> list[str]:
    return [_pair_paths(inputs, out, "ranks", "ranks"), _pair_paths(inputs, out, "ranks2", "ranks")]


SLOTS = [
    Slot(
        "metrics",
        "ranks",
        "num_candidates",
        "realistic",
        lambda i, o: [
            *("metrics", "--ranks", i["ranks"], "--model-dir", i["model_dir"]),
            *("--dataset", "nations", "--model", "transe", "--out", str(o / "m.tsv"), "--seed", "7"),
        ],
    ),
    Slot(
        "paper-figure1",
        "metrics",
        "rank_type",
        "value",
        lambda i, o: ["paper-figure1", "--metrics", i["metrics"], "--stats", i["stats"], *_fig(o)],
    ),
    Slot(
        "paper-learning-curves",
        "curves",
        "loss",
        "seconds",
        lambda i, o: ["paper-learning-curves", "--curves", i["curve"], *_fig(o)],
    ),
    *(
        Slot(
            "paper-published",
            slot,
            nan_column,
            inf_column,
            lambda i, o: [
                *("paper-published", "--published", i["published_values"], "--moments", i["moments"]),
                *("--checks", i["checks"], "--data-dir", i["data_dir"], "--audit", str(o / "audit.tsv")),
                *_tables(o, latex=False),
                *_fig(o),
            ],
        )
        for slot, nan_column, inf_column in (
            ("moments", "metric", "variance"),
            ("checks", "simulated_mean", "simulated_variance"),
        )
    ),
    *(
        Slot(
            "paper-figure1-published",
            slot,
            nan_column,
            inf_column,
            lambda i, o: [
                *("paper-figure1-published", "--audit", i["audit"], "--metrics", i["metrics"]),
                *("--stats", i["stats"], *_fig(o)),
            ],
        )
        for slot, nan_column, inf_column in (
            ("audit", "recomputed", "recomputed"),
            ("metrics", "rank_type", "value"),
        )
    ),
    Slot(
        "paper-compare-published",
        "metrics",
        "rank_type",
        "value",
        lambda i, o: [
            *("paper-compare-published", "--metrics", i["metrics"]),
            *("--published-results", i["published_results"], "--profile", "tiny", "--out", str(o / "c.tsv")),
            *_tables(o, latex=False),
            *_fig(o),
        ],
    ),
    Slot(
        "moments-montecarlo-figure",
        "checks",
        "critical_z",
        "z_variance",
        lambda i, o: ["moments-montecarlo-figure", "--checks", i["checks"], *_fig(o)],
    ),
    *(
        Slot(
            "openworld-saturation",
            slot,
            nan_column,
            inf_column,
            lambda i, o: [
                *("openworld-saturation", "--grid", i["grid"], "--inversions", i["inversions"]),
                "--settings",
                '{"saturation": {"low": 0.4, "high": 0.9, "half_width": 0.1, "comparison_queries": 10}}',
                *("--out", str(o / "s.tsv"), *_tables(o)),
            ],
        )
        for slot, nan_column, inf_column in (
            ("grid", "mean", "standard_error"),
            ("inversions", "inversion_probability", "gap"),
        )
    ),
    Slot(
        "openworld-inversions",
        "checkpoints",
        "value",
        "value",
        lambda i, o: [
            "openworld-inversions",
            "--checkpoints",
            i["checkpoints"],
            "--out",
            str(o / "i.tsv"),
            *_tables(o),
        ],
    ),
    *(
        Slot(
            "openworld-figure",
            f"{kind}:{slot}",
            nan_column,
            inf_column,
            lambda i, o, kind=kind, options=options: [
                *("openworld-figure", "--kind", kind),
                *(item for option in options for item in (f"--{option}", i[option])),
                *_fig(o),
            ],
        )
        for kind, options, slot, nan_column, inf_column in (
            ("simulation", ("grid",), "grid", "mean", "standard_error"),
            ("inconsistency", ("inversions", "needed"), "inversions", "inversion_probability", "gap"),
            ("inconsistency", ("inversions", "needed"), "needed", "metric", "gap"),
            ("metrics", ("grid", "saturation"), "grid", "mean", "strength"),
            ("metrics", ("grid", "saturation"), "saturation", "label", "slope_ratio"),
            ("family-tree", ("checkpoints",), "checkpoints", "value", "value"),
        )
    ),
    *(
        Slot(
            command,
            "ranks",
            "num_candidates",
            "realistic",
            lambda i, o, extra=extra: [extra[0], "--ranks", *_ranks_pair(i, o), *extra[1](i, o)],
        )
        for command, extra in (
            (
                "ambiguity-variants",
                (
                    "ambiguity-variants",
                    lambda i, o: [
                        *(
                            "--seed",
                            "1",
                            "--settings",
                            '{"alpha": 0.05}',
                            "--out",
                            str(o / "v.tsv"),
                            "--ties",
                            str(o / "t.tsv"),
                        ),
                        *_tables(o),
                        *("--ties-markdown", str(o / "tt.md"), "--ties-latex", str(o / "tt.tex")),
                        *_fig(o),
                    ],
                ),
            ),
            (
                "ambiguity-drift",
                (
                    "ambiguity-drift",
                    lambda i, o: [
                        *("--seed", "1", "--settings"),
                        '{"candidate_sizes": [3, "all"], "repetitions": 1, "confidence": 0.9, '
                        '"bootstrap_resamples": 100, "alpha": 0.05}',
                        *("--out", str(o / "d.tsv"), "--slopes", str(o / "s.tsv"), *_tables(o)),
                    ],
                ),
            ),
            (
                "ambiguity-table1",
                (
                    "ambiguity-table1",
                    lambda i, o: [
                        *("--stats", i["stats"], "--settings", '{"alpha": 0.05}'),
                        *("--out", str(o / "t1.tsv"), *_tables(o)),
                    ],
                ),
            ),
            (
                "ambiguity-pairwise",
                (
                    "ambiguity-pairwise",
                    lambda i, o: [
                        *("--seed", "1", "--settings"),
                        '{"alpha": 0.05, "confidence": 0.9, "bootstrap_resamples": 100}',
                        *("--out", str(o / "p.tsv"), *_tables(o), *_fig(o)),
                    ],
                ),
            ),
        )
    ),
    Slot(
        "ambiguity-drift",
        "subsets",
        "num_candidates",
        "optimistic",
        lambda i, o: [
            *("ambiguity-drift", "--ranks", *_ranks_pair(i, o)),
            *("--subsets", _pair_paths(i, o, "subsets", "subsets")),
            *("--seed", "1", "--settings"),
            '{"candidate_sizes": [3, "all"], "repetitions": 1, "confidence": 0.9, '
            '"bootstrap_resamples": 100, "alpha": 0.05}',
            *("--out", str(o / "d.tsv"), "--slopes", str(o / "s.tsv"), *_tables(o)),
        ],
    ),
    Slot(
        "ambiguity-drift-figure",
        "drift",
        "mean_candidates",
        "mean_candidates",
        lambda i, o: ["ambiguity-drift-figure", "--drift", i["drift"], *_fig(o)],
    ),
    Slot(
        "ir-evaluate",
        "evaluations",
        "head",
        "tail",
        lambda i, o: [
            *("ir-evaluate", "--model-dir", i["model_dir"], "--dataset-dir", i["data_dir"] + "/nations"),
            *("--dataset", "nations", "--model", "transe", "--evaluations", i["evaluations"]),
            *("--filter-splits", "train", "valid", "test", "--hits", "1", "3", "5", "10"),
            *("--settings", '{"run_depth": 20}', "--seed", "1", "--quiet"),
            *(
                "--items",
                str(o / "items.parquet"),
                "--metrics",
                str(o / "m.tsv"),
                "--runs-dir",
                str(o / "runs"),
            ),
        ],
    ),
    *(
        Slot(
            command,
            "items",
            "num_candidates",
            "weight",
            lambda i, o, command=command, extra=extra: [
                command,
                "--items",
                i["items"],
                i["items2"],
                *extra(i, o),
            ],
        )
        for command, extra in (
            (
                "ir-montecarlo",
                lambda i, o: [
                    *("--pairs", "nations/transe", "nations/complex", "--evaluations", "nations:test"),
                    *("--hits", "1", "3", "5", "10", "--seed", "1"),
                    *("--settings", '{"montecarlo_replicates": 100, "montecarlo_alpha": 0.05}'),
                    *("--quiet", "--out", str(o / "mc.tsv"), *_tables(o)),
                ],
            ),
            (
                "ir-systems",
                lambda i, o: [
                    *("--systems", "transe", "complex", "--micro-metrics", i["micro"]),
                    *("--out", str(o / "s.tsv"), *_tables(o), *_fig(o)),
                    *(
                        "--gap",
                        str(o / "g.tsv"),
                        "--gap-markdown",
                        str(o / "g.md"),
                        "--gap-latex",
                        str(o / "g.tex"),
                    ),
                ],
            ),
            (
                "ir-sparsity",
                lambda i, o: [
                    *("--systems", "transe", "complex", "--relations", i["relations"]),
                    *("--out", str(o / "s.tsv"), "--values", str(o / "v.tsv"), *_tables(o), *_fig(o)),
                    *("--values-pdf", str(o / "v.pdf"), "--values-png", str(o / "v.png")),
                    *(
                        "--tau",
                        str(o / "t.tsv"),
                        "--tau-markdown",
                        str(o / "t.md"),
                        "--tau-latex",
                        str(o / "t.tex"),
                    ),
                ],
            ),
            (
                "ir-stability",
                lambda i, o: [
                    *("--systems", "transe", "complex", "--dataset", "nations", "--evaluations", "test"),
                    *("--settings", '{"stability": {"fractions": [0.5], "repetitions": 2}}', "--seed", "1"),
                    *("--out", str(o / "s.tsv"), "--summary", str(o / "ss.tsv")),
                ],
            ),
            (
                "ir-discrimination",
                lambda i, o: [
                    *("--pairs", "nations/transe", "nations/complex", "--evaluations", "nations:test"),
                    *("--settings", '{"alpha": 0.05}'),
                    *("--out", str(o / "d.tsv"), "--summary", str(o / "ds.tsv")),
                    *_tables(o),
                    *_fig(o),
                ],
            ),
        )
    ),
    Slot(
        "ir-systems",
        "micro-metrics",
        "model",
        "value",
        lambda i, o: [
            *("ir-systems", "--items", i["items"], i["items2"], "--systems", "transe", "complex"),
            *("--micro-metrics", i["micro"], "--out", str(o / "s.tsv"), *_tables(o), *_fig(o)),
            *("--gap", str(o / "g.tsv"), "--gap-markdown", str(o / "g.md"), "--gap-latex", str(o / "g.tex")),
        ],
    ),
    Slot(
        "ir-sparsity",
        "relations",
        "category",
        "relation",
        lambda i, o: [
            *("ir-sparsity", "--items", i["items"], i["items2"], "--systems", "transe", "complex"),
            *("--relations", i["relations"], "--out", str(o / "s.tsv"), "--values", str(o / "v.tsv")),
            *_tables(o),
            *_fig(o),
            *("--values-pdf", str(o / "v.pdf"), "--values-png", str(o / "v.png")),
            *("--tau", str(o / "t.tsv"), "--tau-markdown", str(o / "t.md"), "--tau-latex", str(o / "t.tex")),
        ],
    ),
    Slot(
        "ir-stability-figure",
        "summaries",
        "fraction",
        "fraction",
        lambda i, o: ["ir-stability-figure", "--summaries", i["summary"], *_fig(o)],
    ),
    Slot(
        "protocols-weighted",
        "ranks",
        "num_candidates",
        "realistic",
        lambda i, o: [
            *("protocols-weighted", "--ranks", i["ranks"]),
            *("--settings", '{"weighted": {"schemes": ["negatives", "uniform"]}}'),
            *("--out", str(o / "w.tsv"), *_tables(o)),
        ],
    ),
    Slot(
        "protocols-weighted-check",
        "ranks",
        "num_candidates",
        "realistic",
        lambda i, o: [
            *("protocols-weighted-check", "--ranks", i["ranks"], "--seed", "1", "--settings"),
            '{"weighted": {"schemes": ["negatives", "uniform"], "montecarlo_replicates": 20, "alpha": 0.01}}',
            *("--out", str(o / "c.tsv"), *_tables(o)),
        ],
    ),
    Slot(
        "protocols-weighted-figure",
        "weighted",
        "metric",
        "expectation",
        lambda i, o: ["protocols-weighted-figure", "--weighted", i["weighted"], *_fig(o)],
    ),
    Slot(
        "protocols-sampled",
        "ranks",
        "num_candidates",
        "optimistic",
        lambda i, o: [
            *("protocols-sampled", "--ranks", i["ranks"], "--seed", "1", "--settings"),
            '{"sampled": {"num_samples": [3], "estimators": ["naive"], "regularisation": 0.1, '
            '"corrected_max_k": null, "replicates": 3}}',
            *("--profile", "probe", "--out", str(o / "s.tsv"), "--agreement", str(o / "a.tsv"), *_tables(o)),
        ],
    ),
    Slot(
        "protocols-sampled-figure",
        "sampled",
        "estimator",
        "bias",
        lambda i, o: ["protocols-sampled-figure", "--estimates", i["sampled"], *_fig(o)],
    ),
    Slot(
        "protocols-ties",
        "ranks",
        "side",
        "pessimistic",
        lambda i, o: [
            *("protocols-ties", "--ranks", i["ranks"], "--pairs", i["ties"], "--profile", "probe"),
            *("--out", str(o / "t.tsv"), "--widths", str(o / "w.tsv"), *_tables(o)),
        ],
    ),
    Slot(
        "protocols-ties",
        "ties",
        "statistic",
        "value",
        lambda i, o: [
            *("protocols-ties", "--ranks", i["ranks"], "--pairs", i["ties"], "--profile", "probe"),
            *("--out", str(o / "t.tsv"), "--widths", str(o / "w.tsv"), *_tables(o)),
        ],
    ),
    Slot(
        "protocols-ties-figure",
        "ties",
        "statistic",
        "value",
        lambda i, o: ["protocols-ties-figure", "--ties", i["ties"], *_fig(o)],
    ),
]

# which fixture each slot damages
SLOT_FIXTURE = {
    "ranks": "ranks",
    "metrics": "metrics",
    "curves": "curve",
    "moments": "moments",
    "checks": "checks",
    "audit": "audit",
    "grid": "grid",
    "inversions": "inversions",
    "needed": "needed",
    "saturation": "saturation",
    "checkpoints": "checkpoints",
    "subsets": "subsets",
    "drift": "drift",
    "evaluations": "evaluations",
    "items": "items",
    "micro-metrics": "micro",
    "relations": "relations",
    "summaries": "summary",
    "weighted": "weighted",
    "sampled": "sampled",
    "ties": "ties",
}


def _read(path: Path) -> pd.DataFrame:
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, sep="\t")


def _write(frame: pd.DataFrame, path: Path) -> None:
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, sep="\t", index=False)


def damage(source: Path, target: Path, kind: str, nan_column: str, inf_column: str) -> None:
    """Write a copy of ``source`` at ``target`` damaged in one way."""
    frame = _read(source)
    if kind == "empty":
        target.write_bytes(b"")
        return
    if kind == "header-only":
        frame = frame.iloc[:0]
    elif kind == "nan":
        frame = frame.copy()
        row = len(frame) // 2
        if frame[nan_column].dtype.kind in "iub":
            frame[nan_column] = frame[nan_column].astype(
                float if frame[nan_column].dtype.kind != "b" else object
            )
        frame.loc[frame.index[row], nan_column] = np.nan if frame[nan_column].dtype.kind == "f" else None
    elif kind == "wrong-column":
        frame = frame.rename(columns={nan_column: f"{nan_column}_renamed"})
    elif kind == "inf":
        frame = frame.copy()
        frame[inf_column] = frame[inf_column].astype(float)
        frame.loc[frame.index[len(frame) // 2], inf_column] = np.inf
    _write(frame, target)


@contextlib.contextmanager
def captured(err: io.StringIO) -> Iterator[None]:
    """stderr, and the log records a command emits (PyKEEN warns through logging, whose
    handlers may hold the real stderr), into ``err``; stdout dropped."""
    handler = logging.StreamHandler(err)
    handler.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            yield
    finally:
        root.removeHandler(handler)


def run_case(argv: list[str]) -> tuple[int | str, str]:
    """Exit code (or 'traceback') and stderr of ``kgrank argv`` in this process."""
    from kgrank.cli.main import main

    err = io.StringIO()
    with captured(err):
        try:
            code: int | str = main(argv)
        except SystemExit as exit:
            code = exit.code if isinstance(exit.code, int) else 1
        except Exception:  # noqa: BLE001 - a traceback is what the probe looks for
            traceback.print_exc(file=err)
            code = "traceback"
    return code, err.getvalue()


def grade(code: int | str, err: str, out: Path, named: str) -> tuple[str, str]:
    written = sorted(str(path.relative_to(out)) for path in out.rglob("*") if path.is_file())
    lines = [line for line in err.strip().splitlines() if line.strip()]
    if code == "traceback" or "Traceback" in err:
        last = lines[-1] if lines else ""
        return "bad", f"traceback: {last[:160]}"
    if code == 0:
        return "weak", "accepted (exit 0)" + (f", wrote {len(written)} file(s)" if written else "")
    if code != 2:
        return "bad", f"exit {code}: {(lines[-1] if lines else '')[:160]}"
    problems = []
    if written:
        problems.append(f"left {written[:3]}")
    if len(lines) != 1:
        problems.append(f"{len(lines)} lines")
    if lines and named not in lines[-1]:
        problems.append("file not named")
    message = lines[-1][:200] if lines else ""
    return ("weak" if problems else "good"), ("; ".join(problems) + " | " if problems else "") + message


def setup(results: Path, work: Path) -> dict[str, str]:
    """The intact inputs: the run's tables, and the audit that paper-published writes."""
    inputs = {key: str(results / relative) for key, relative in R.items() if key != "audit"}
    inputs |= {
        "model_dir": str(results / "models/nations/transe"),
        "data_dir": str(results / "data"),
        "stats": str(results / "data/nations/stats.json"),
        "published_values": str(SHARED / "reference/published_figure1.tsv"),
        "published_results": str(SHARED / "reference/published_results.tsv"),
    }
    audit = work / "setup" / "audit.tsv"
    audit.parent.mkdir(parents=True)
    # the tiny run has Nations alone: the published values of Nations
    published = pd.read_csv(inputs["published_values"], sep="\t")
    inputs["published_values"] = str(work / "setup" / "published_nations.tsv")
    published[published["dataset"] == "nations"].to_csv(inputs["published_values"], sep="\t", index=False)
    code, err = run_case(
        [
            *("paper-published", "--published", inputs["published_values"], "--moments", inputs["moments"]),
            *("--checks", inputs["checks"], "--data-dir", inputs["data_dir"], "--audit", str(audit)),
            *("--markdown", str(work / "setup/a.md"), *_fig(work / "setup")),
        ]
    )
    if code != 0:
        sys.exit(f"setup: paper-published on the intact tables failed ({code}):\n{err}")
    inputs["audit"] = str(audit)
    return inputs


def dataset_cases(inputs: dict[str, str], work: Path) -> list[tuple[str, str, list[str], Path, str]]:
    """`ranks` on an empty test split, `train` on an empty validation split."""
    cases = []
    for command, split in (("ranks", "test"), ("train", "valid")):
        folder = work / f"dataset-{split}" / "nations"
        shutil.copytree(inputs["data_dir"] + "/nations", folder)
        (folder / f"{split}.tsv").write_text("", encoding="utf-8")
        out = work / f"dataset-{split}" / "out"
        out.mkdir()
        if command == "ranks":
            argv = [
                *("ranks", "--dataset-dir", str(folder), "--model-dir", inputs["model_dir"]),
                *("--out", str(out / "r.parquet"), "--seed", "1", "--quiet"),
            ]
        else:
            argv = [
                *("train", "--dataset-dir", str(folder), "--hyperparameters"),
                *(str(REPO / "config/hyperparameters/nations/transe.yaml"), "--out-dir", str(out / "model")),
                *("--seed", "1", "--max-epochs", "1", "--quiet"),
            ]
        cases.append((command, f"{split}-split:empty", argv, out, f"{split}.tsv"))
    return cases


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", required=True, type=Path, help="results/ of a finished tiny run")
    parser.add_argument("--only", nargs="*", help="probe only these commands")
    parser.add_argument("--json", type=Path, help="write every case's outcome here")
    parser.add_argument(
        "--intact",
        action="store_true",
        help="first run every command once on the intact tables: each must pass (no false alarm)",
    )
    args = parser.parse_args()

    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    counts = {"good": 0, "weak": 0, "bad": 0}
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="probe-") as scratch:
        work = Path(scratch)
        inputs = setup(args.results, work)
        if args.intact:
            failed = 0
            for number, slot in enumerate(SLOTS):
                if args.only and slot.command not in args.only:
                    continue
                out = work / f"intact{number}" / "out"
                out.mkdir(parents=True)
                code, err = run_case(slot.argv(inputs, out))
                lines = err.strip().splitlines()
                failed += code != 0
                print(
                    f"{'ok' if code == 0 else 'FAIL':4}  {slot.command:26} {slot.slot:28} intact", flush=True
                )
                if code != 0:
                    print("      " + (lines[-1] if lines else str(code)), flush=True)
            print(f"intact inputs: {failed} command(s) failed\n", flush=True)
        cases = []
        for number, slot in enumerate(SLOTS):
            if args.only and slot.command not in args.only:
                continue
            fixture = SLOT_FIXTURE[slot.slot.rpartition(":")[2]]
            for kind in DAMAGES:
                case_dir = work / f"case{number}-{kind}"
                out = case_dir / "out"
                out.mkdir(parents=True)
                source = Path(inputs[fixture])
                target = case_dir / "bad" / source.name
                target.parent.mkdir()
                damage(source, target, kind, slot.nan_column, slot.inf_column)
                damaged = dict(inputs, **{fixture: str(target)})
                cases.append((slot.command, f"{slot.slot}:{kind}", slot.argv(damaged, out), out, source.name))
        if not args.only or "ranks" in args.only or "train" in args.only:
            cases += [case for case in dataset_cases(inputs, work) if not args.only or case[0] in args.only]
        for command, what, argv, out, named in cases:
            code, err = run_case(argv)
            verdict, detail = grade(code, err, out, named)
            counts[verdict] += 1
            outcomes.append({"command": command, "case": what, "verdict": verdict, "detail": detail})
            print(f"{verdict:4}  {command:26} {what:28} {detail}", flush=True)
    print(f"\n{len(outcomes)} cases: {counts['good']} good, {counts['weak']} weak, {counts['bad']} bad")
    if args.json:
        args.json.write_text(json.dumps({"counts": counts, "cases": outcomes}, indent=2) + "\n")


if __name__ == "__main__":
    main()
