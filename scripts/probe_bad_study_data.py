"""Probe the readers of the studies' own data with damaged copies (issue 29, item 4).

Each case writes a small damaged input into a fresh folder and runs one `kgrank` command
(or a Snakemake dry run) on it as a subprocess, with a memory limit and a time limit, so
that a reader that sizes a table by a stray id or loops over a stray depth is caught
rather than left to run. The family tree gets a hand-made graph of 20 entities; the
kgc-sparsity cases damage a copy of the Nations fixture (tests/data/kgc-sparsity-nations)
read through Nations prepared once; the dataset case is a folder source. Grades:

- good: a refusal with exit code 2, one line on stderr naming the file (and the line
  where there is one), nothing written; a case of data to keep (clean files, unknown
  labels to drop) exits 0, says so in at most one line per note without a Python warning
  or a source path, and counts and names what it dropped;
- weak: the right exit code but more than one line, the wrong file or no line number, or
  something written; for data to keep: no name, or a Python warning;
- bad: a traceback or another exit code, a time-out or memory stop, or damage accepted
  without a word.

Usage (from the repository root; ``--src`` picks the source tree the commands import,
``--workflow`` the checkout whose Snakefile the dry run plans with):

    python scripts/probe_bad_study_data.py [--src /work/main/src --workflow /work/main] [--only ft-]

It prints one line per case and the counts.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "data" / "kgc-sparsity-nations"
# what a command may use before it counts as stopped for memory, and for time
MEMORY_BYTES = 6 * 2**30
TIME_LIMIT_S = 120

PIPELINE = {
    "model": "transe",
    "model_kwargs": {"embedding_dim": 4},
    "loss": "crossentropy",
    "optimizer": "adam",
    "optimizer_kwargs": {"lr": 0.01},
    "training_loop": "lcwa",
    "training_kwargs": {"num_epochs": 1, "batch_size": 64},
}
ANSWERS_HEADER = "head\trelation\ttail\tin_sparse_test\n"
# What Snakemake itself prints before a parse-time error (as tests/test_workflow.py allows).
SNAKEMAKE_INFO = ("Using workflow specific profile", "Config file ")


@dataclass
class Case:
    """One damaged input: ``setup(folder)`` writes it and returns the command (its outputs
    under ``folder / 'out'``); ``expect`` is ``refuse`` (exit 2), ``keep`` (exit 0 and the
    notes) or ``clean`` (exit 0, no warning); ``names`` must be in the message (the file,
    and ``file:line:`` where a line is to be named)."""

    name: str
    setup: Callable[[Path, dict], list[str]]
    expect: str
    names: tuple[str, ...] = ()


# --- the family tree -------------------------------------------------------------------


def _tree_train() -> str:
    rows = [(head, head % 3, (head * 7 + 3) % 20) for head in range(20)]
    rows += [(head, (head + 1) % 3, (head + 5) % 20) for head in range(20)]
    return "".join(f"{h}\t{r}\t{t}\n" for h, r, t in rows)


def _tree_answers() -> str:
    rows = [(0, 0, 11, 1), (0, 0, 12, 0), (1, 1, 13, 1), (2, 2, 14, 1), (2, 2, 15, 0)]
    return ANSWERS_HEADER + "".join(f"{h}\t{r}\t{t}\t{s}\n" for h, r, t, s in rows)


def _family_tree(train: str | None = None, answers: str | None = None) -> Callable[[Path, dict], list[str]]:
    def setup(folder: Path, context: dict) -> list[str]:
        graph = folder / "independent"
        graph.mkdir()
        (graph / "train.tsv").write_text(_tree_train() if train is None else train)
        (graph / "test_answers.tsv").write_text(_tree_answers() if answers is None else answers)
        return [
            "kgrank",
            "openworld-family-tree",
            "--graph-folders",
            f"independent={graph}",
            "--density",
            "65",
            "--configuration",
            "probe",
            "--settings",
            json.dumps({"family_tree": {"evaluate_every": 1, "configurations": {"probe": PIPELINE}}}),
            "--seed",
            "0",
            "--quiet",
            "--out",
            str(folder / "out" / "checkpoints.tsv"),
        ]

    return setup


# --- kgc-sparsity ----------------------------------------------------------------------


def _kgc(changes: dict[str, Callable[[list[str]], list[str]]]) -> Callable[[Path, dict], list[str]]:
    def setup(folder: Path, context: dict) -> list[str]:
        kgc = folder / "kgc"
        shutil.copytree(FIXTURE, kgc)
        for file, change in changes.items():
            lines = (kgc / file).read_text().splitlines(keepends=True)
            (kgc / file).write_text("".join(change(lines)))
        out = folder / "out"
        return [
            "kgrank",
            "ir-queries",
            "--dataset-dir",
            str(context["nations"]),
            "--kgc-dir",
            str(kgc),
            "--raw-test",
            "pykeen:nations",
            "--out",
            str(out / "evaluations.parquet"),
            "--counts",
            str(out / "counts.tsv"),
            "--relations",
            str(out / "relations.tsv"),
            "--divergences",
            str(out / "divergences.tsv"),
            "--qrels-dir",
            str(out / "qrels"),
            "--export",
            "test",
            "--markdown",
            str(out / "counts.md"),
            "--latex",
            str(out / "counts.tex"),
        ]

    return setup


def _line(number: int, text: str) -> Callable[[list[str]], list[str]]:
    def change(lines: list[str]) -> list[str]:
        return [*lines[: number - 1], text, *lines[number:]]

    return change


def _append(text: str) -> Callable[[list[str]], list[str]]:
    return lambda lines: [*lines, text]


def _empty(lines: list[str]) -> list[str]:
    return []


SAMPLE_INDICES = "FB-Test-S/sample_idxs.txt"
POOLING = "FB-Test-S-C/supplementary/pooling_depth.txt"
FILTERED = "FB-Test-S-C/supplementary/filtered.txt"


# --- datasets and the plan -------------------------------------------------------------


def _huge_label(folder: Path, context: dict) -> list[str]:
    source = folder / "graph"
    source.mkdir()
    lines = [f"e{i}\tr\te{i + 1}\n" for i in range(2000)]
    lines[5] = "e5\tr\t" + "x" * 5_000_000 + "\n"
    (source / "train.tsv").write_text("".join(lines))
    (source / "valid.tsv").write_text("e1\tr\te2\n")
    (source / "test.tsv").write_text("e2\tr\te3\n")
    return [
        "kgrank",
        "prepare-dataset",
        "--name",
        "graph",
        "--folder",
        str(source),
        "--out-dir",
        str(folder / "out"),
    ]


def _sampled_size(folder: Path, context: dict) -> list[str]:
    config = yaml.safe_load((REPO / ".test" / "config.yaml").read_text())
    config["ranks"]["sampled_candidates"] = [5, 13]  # Nations has 14 entities
    path = folder / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(context["workflow"] / "Snakefile"),
        "--directory",
        str(folder / "out"),
        "-n",
        "--configfile",
        str(path),
    ]


CASES = [
    Case("ft-clean", _family_tree(), "clean"),
    Case("ft-id-60000", _family_tree(train=_tree_train() + "60000\t0\t1\n"), "refuse", ("train.tsv:41:",)),
    Case(
        "ft-id-10-digits",
        _family_tree(answers=_tree_answers() + "0\t0\t9999999999\t1\n"),
        "refuse",
        ("test_answers.tsv:7:",),
    ),
    Case("ft-relation-id", _family_tree(train=_tree_train() + "0\t900\t1\n"), "refuse", ("train.tsv:41:",)),
    Case("ft-empty-train", _family_tree(train=""), "refuse", ("train.tsv",)),
    Case("ft-empty-answers", _family_tree(answers=""), "refuse", ("test_answers.tsv",)),
    Case("ft-header-only", _family_tree(answers=ANSWERS_HEADER), "refuse", ("test_answers.tsv",)),
    Case(
        "ft-4-fields-first", _family_tree(train="0\t0\t1\t1\n" + _tree_train()), "refuse", ("train.tsv:1:",)
    ),
    Case("ft-4-fields", _family_tree(train=_tree_train() + "0\t0\t1\t1\n"), "refuse", ("train.tsv:41:",)),
    Case(
        "ft-in-sparse-2",
        _family_tree(answers=_tree_answers() + "0\t0\t16\t2\n"),
        "refuse",
        ("test_answers.tsv:7:",),
    ),
    Case("ft-not-an-id", _family_tree(train=_tree_train() + "0\tx\t1\n"), "refuse", ("train.tsv:41:",)),
    Case("kgc-clean", _kgc({}), "clean"),
    Case(
        "kgc-unknown-entity",
        _kgc({FILTERED: _append("atlantis\taccusation\tusa\tN\n")}),
        "keep",
        ("atlantis",),
    ),
    Case(
        "kgc-unknown-relation",
        _kgc({FILTERED: _append("usa\tinvades\tbrazil\tN\n")}),
        "keep",
        ("invades",),
    ),
    Case(
        "kgc-sample-idxs-value", _kgc({SAMPLE_INDICES: _line(3, "0\n")}), "refuse", (f"{SAMPLE_INDICES}:3:",)
    ),
    Case(
        "kgc-sample-idxs-word",
        _kgc({SAMPLE_INDICES: _line(3, "seven\n")}),
        "refuse",
        (f"{SAMPLE_INDICES}:3:",),
    ),
    Case("kgc-sample-idxs-short", _kgc({SAMPLE_INDICES: _line(3, "")}), "refuse", (f"{SAMPLE_INDICES}:3:",)),
    Case(
        "kgc-depth-deep",
        _kgc({POOLING: _line(3, "ussr\trelintergovorgs\tegypt\tdeep\n")}),
        "refuse",
        (f"{POOLING}:3:",),
    ),
    Case(
        "kgc-depth-zero",
        _kgc({POOLING: _line(3, "ussr\trelintergovorgs\tegypt\t0\n")}),
        "refuse",
        (f"{POOLING}:3:",),
    ),
    Case(
        "kgc-depth-huge",
        _kgc({POOLING: _line(3, "ussr\trelintergovorgs\tegypt\t999999999999\n")}),
        "refuse",
        (f"{POOLING}:3:",),
    ),
    Case("kgc-empty-test", _kgc({"FB-Test-S-C/test.txt": _empty}), "refuse", ("FB-Test-S-C/test.txt",)),
    Case("data-huge-label", _huge_label, "refuse", ("train.tsv:6:",)),
    Case("plan-sampled-size", _sampled_size, "refuse", ("ranks.sampled_candidates",)),
]


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))


def _named(name: str, message: str) -> bool:
    """Whether ``message`` names ``name``; a line ``file:7:`` may also be written
    ``file: line 7:`` or ``file, line 7:``."""
    match = re.fullmatch(r"(.+):(\d+):", name)
    if match is None:
        return name in message
    file, line = match.groups()
    return any(f"{file}{joint}{line}:" in message for joint in (":", ": line ", ", line "))


def run_case(case: Case, context: dict, env: dict) -> tuple[str, str]:
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        (folder / "out").mkdir()
        argv = case.setup(folder, context)
        try:
            result = subprocess.run(
                argv,
                capture_output=True,
                text=True,
                env=env,
                timeout=TIME_LIMIT_S,
                preexec_fn=_limit_memory,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return "bad", f"no answer in {TIME_LIMIT_S} s"
        # Snakemake's own lines about the profile and the config file come before ours
        lines = [
            line
            for line in result.stderr.splitlines()
            if line.strip() and not line.startswith(SNAKEMAKE_INFO)
        ]
        written = sorted(str(path.relative_to(folder / "out")) for path in (folder / "out").rglob("*"))
        written = [path for path in written if not path.startswith(".snakemake")]
        last = lines[-1][:160] if lines else ""
        if "Traceback" in result.stderr or result.returncode not in (0, 1, 2):
            return "bad", f"exit {result.returncode}, traceback: {last}"
        warned = any("Warning" in line or ".py:" in line for line in lines)
        if case.expect == "clean":
            if result.returncode != 0:
                return "bad", f"exit {result.returncode}: {last}"
            return ("weak", f"a Python warning: {last}") if warned else ("good", "exit 0, no warning")
        if case.expect == "keep":
            if result.returncode != 0:
                return "bad", f"exit {result.returncode}: {last}"
            counts = (folder / "out" / "counts.tsv").read_text()
            notes = [line for line in lines if all(name in line for name in case.names)]
            named = all(name in counts for name in case.names)
            if named and len(notes) == 1 and not warned:
                return "good", f"exit 0, counted and named: {notes[0][:120]}"
            if named or notes:
                return "weak", f"named in the table {named}, {len(notes)} note line(s), warning {warned}"
            return "bad", "dropped without a word"
        if result.returncode == 0:
            return "bad", "accepted: exit 0"
        message = lines[0] if lines else ""
        problems = []
        if result.returncode != 2:
            problems.append(f"exit {result.returncode}")
        if len(lines) != 1:
            problems.append(f"{len(lines)} lines")
        missing = [name for name in case.names if not _named(name, message)]
        if missing:
            problems.append(f"does not name {', '.join(missing)}")
        if written:
            problems.append(f"wrote {', '.join(written)}")
        return ("weak", "; ".join(problems) + f": {message[:160]}") if problems else ("good", message[:160])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", default=str(REPO / "src"), help="the source tree the commands import")
    parser.add_argument("--only", default="", help="run the cases whose name starts with this")
    parser.add_argument(
        "--workflow", default=str(REPO), help="the checkout whose Snakefile the dry-run cases plan with"
    )
    args = parser.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": args.src}
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
    grades = {"good": 0, "weak": 0, "bad": 0}
    with tempfile.TemporaryDirectory() as scratch:
        context = {"nations": Path(scratch) / "nations", "workflow": Path(args.workflow)}
        cases = [case for case in CASES if case.name.startswith(args.only)]
        if any(case.name.startswith("kgc-") for case in cases):
            subprocess.run(
                ["kgrank", "prepare-dataset", "--name", "nations", "--out-dir", str(context["nations"])],
                env=env,
                check=True,
                capture_output=True,
            )
        for case in cases:
            grade, detail = run_case(case, context, env)
            grades[grade] += 1
            print(f"{grade:5} {case.name:24} {detail}", flush=True)
    print(f"good {grades['good']}, weak {grades['weak']}, bad {grades['bad']} of {sum(grades.values())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
