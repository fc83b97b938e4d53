"""Probe the entry points a user feeds their own files: `kgrank evaluate`, `kgrank compare`
and the Python API (kgrank.evaluate, kgrank.compare, kgrank.load_system, kgrank.lookup).

Each case damages one thing of a good input (a rank file of Nations' test split, a score
matrix with its query index, a PyKEEN-like folder, an option value) and runs it in this
process. Grades, as the other probes give them (probe_bad_tables.grade for the command
line):

- good: exit code 2 (the API: a KgrankInputError), one line naming the file, option or
  argument, nothing written;
- weak: refused, but with several lines, without the name, or something written; or
  accepted with a warning on stderr where refusing would stop real data;
- bad: a traceback (another exception), another exit code, or the damage accepted
  without a word.

Usage (from the repository root): PYTHONPATH=src python scripts/probe_bad_entry_points.py
[--only SUBSTRING] [--json FILE]. It prints one line per case and the counts.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import sys
import tempfile
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from probe_bad_tables import captured, grade, run_case  # noqa: E402


@dataclass
class Context:
    nations: Path  # a prepared Nations folder
    work: Path
    tasks: pd.DataFrame  # head, relation, tail (labels), side, num_candidates, rank = 1

    def rank_file(self, name: str, frame: pd.DataFrame | None = None, text: str | None = None) -> str:
        path = self.work / name
        if text is not None:
            path.write_text(text, encoding="utf-8")
        else:
            frame = self.tasks.drop(columns="num_candidates") if frame is None else frame
            separator = "\t" if path.suffix in (".tsv", ".txt") else ","
            frame.to_csv(path, sep=separator, index=False)
        return str(path)


@dataclass
class Case:
    name: str
    make: Callable[[Context], list[str] | Callable[[], object]]
    named: str  # what the one line must name (a file name, an option, an argument)
    keep: bool = False  # data to keep with a note (exit 0 and at most one line per note)


def _cli(*arguments: str) -> Callable[[Context], list[str]]:
    return lambda context: ["evaluate", "--dataset", str(context.nations), *arguments]


def _ranks(name: str, change: Callable[[pd.DataFrame], pd.DataFrame] | None = None, **options: str):
    def make(context: Context) -> list[str]:
        frame = context.tasks.drop(columns="num_candidates")
        path = context.rank_file(name, change(frame) if change else frame)
        extra = [item for pair in options.items() for item in (f"--{pair[0].replace('_', '-')}", pair[1])]
        return ["evaluate", "--dataset", str(context.nations), "--ranks", path, *extra]

    return make


def _text(name: str, text: str) -> Callable[[Context], list[str]]:
    def make(context: Context) -> list[str]:
        return ["evaluate", "--dataset", str(context.nations), "--ranks", context.rank_file(name, text=text)]

    return make


def _with(frame: pd.DataFrame, index: int, column: str, value: object) -> pd.DataFrame:
    frame = frame.copy()
    frame[column] = frame[column].astype(object)
    frame.loc[frame.index[index], column] = value
    return frame


def _scores(rows: int | None = None, columns: int = 14, fill: float | None = None, queries_change=None):
    def make(context: Context) -> list[str]:
        queries = context.tasks[["head", "relation", "tail", "side"]]
        queries = queries_change(queries) if queries_change else queries
        matrix = np.random.default_rng(0).random((len(queries) if rows is None else rows, columns))
        if fill is not None:
            matrix[0, 0] = fill
        np.save(context.work / "scores.npy", matrix)
        queries.to_csv(context.work / "queries.tsv", sep="\t", index=False)
        return [
            *("evaluate", "--dataset", str(context.nations)),
            *("--scores", str(context.work / "scores.npy"), "--queries", str(context.work / "queries.tsv")),
        ]

    return make


def _compare(*arguments: str, systems: tuple[str, ...] = ("a=ranks.csv", "b=ranks.csv")):
    def make(context: Context) -> list[str]:
        context.rank_file("ranks.csv")
        entries = [entry.replace("=", f"={context.work}/", 1) for entry in systems]
        return ["compare", "--dataset", str(context.nations), "--systems", *entries, *arguments]

    return make


def _api(call: Callable[[Context], object]) -> Callable[[Context], Callable[[], object]]:
    return lambda context: lambda: call(context)


def _drop(column: str) -> Callable[[pd.DataFrame], pd.DataFrame]:
    return lambda frame: frame.drop(columns=column)


CASES = [
    # --- rank files: values
    Case("rank-nan", _ranks("r.csv", lambda f: _with(f, 3, "rank", np.nan)), "r.csv"),
    Case("rank-inf", _ranks("r.csv", lambda f: _with(f, 3, "rank", "inf")), "r.csv"),
    Case("rank-zero", _ranks("r.csv", lambda f: _with(f, 0, "rank", 0)), "r.csv"),
    Case("rank-negative", _ranks("r.csv", lambda f: _with(f, 0, "rank", -3)), "r.csv"),
    # a realistic rank is the mean of the optimistic and pessimistic ones: halves are ranks
    Case("rank-half", _ranks("r.csv", lambda f: _with(f, 0, "rank", 1.5)), "", keep=True),
    Case("rank-above-candidates", _ranks("r.csv", lambda f: _with(f, 0, "rank", 10_000)), "r.csv"),
    Case("rank-text", _ranks("r.csv", lambda f: _with(f, 0, "rank", "first")), "r.csv"),
    Case("rank-huge", _ranks("r.csv", lambda f: _with(f, 0, "rank", "1e400")), "r.csv"),
    # --- rank files: keys
    Case("unknown-head-label", _ranks("r.csv", lambda f: _with(f, 0, "head", "atlantis")), "r.csv"),
    Case("unknown-relation", _ranks("r.csv", lambda f: _with(f, 0, "relation", "befriends")), "r.csv"),
    Case("triple-not-in-test", _ranks("r.csv", lambda f: _with(f, 0, "tail", f["head"].iloc[0])), "r.csv"),
    Case("side-unknown", _ranks("r.csv", lambda f: _with(f, 0, "side", "middle")), "r.csv"),
    Case("side-empty", _ranks("r.csv", lambda f: _with(f, 0, "side", "")), "r.csv"),
    Case("duplicate-task", _ranks("r.csv", lambda f: pd.concat([f, f.iloc[:1]])), "r.csv"),
    Case("missing-tasks", _ranks("r.csv", lambda f: f.iloc[:-5]), "r.csv"),
    Case("no-rank-column", _ranks("r.csv", _drop("rank")), "r.csv"),
    Case("no-side-column", _ranks("r.csv", _drop("side")), "r.csv"),
    Case("no-head-column", _ranks("r.csv", _drop("head")), "r.csv"),
    Case("ids-out-of-range", _ranks("r.csv", lambda f: _with(f, 0, "head", 60_000)), "r.csv"),
    Case("negative-id", _ranks("r.csv", lambda f: _with(f, 0, "head", -1)), "r.csv"),
    Case("num-candidates-wrong", _ranks("r.csv", lambda f: f.assign(num_candidates=3)), "r.csv"),
    Case("num-candidates-zero", _ranks("r.csv", lambda f: f.assign(num_candidates=0)), "r.csv"),
    Case("wide-rank-nan", _ranks("w.csv", lambda f: _wide(f, nan=True)), "w.csv"),
    Case("wide-missing-tail-rank", _ranks("w.csv", lambda f: _wide(f).drop(columns="tail_rank")), "w.csv"),
    # --- rank files: the file itself
    Case("empty-file", _text("empty.csv", ""), "empty.csv"),
    Case("header-only", _text("header.csv", "head,relation,tail,side,rank\n"), "header.csv"),
    Case("binary-garbage", _text("garbage.csv", "\x00\x01\x02" * 100), "garbage.csv"),
    Case("one-column", _text("one.csv", "rank\n1\n2\n"), "one.csv"),
    Case("ragged-lines", _text("ragged.csv", "head,relation,tail,side,rank\nbrazil,x\n"), "ragged.csv"),
    Case("unknown-suffix", _ranks("r.xlsx"), "r.xlsx"),
    Case("missing-file", _cli("--ranks", "/nonexistent/ranks.csv"), "ranks.csv"),
    Case("directory-as-file", lambda c: _cli("--ranks", _folder(c, {}, "rankfolder"))(c), "rankfolder"),
    Case("broken-symlink", lambda c: _symlink(c), "dangling.csv"),
    Case("fifo", lambda c: _fifo(c), "fifo.csv"),
    Case("parquet-garbage", _text("r.parquet", "not parquet"), "r.parquet"),
    Case("npy-positional-wrong-length", lambda c: _positional(c, 10), "ranks.npy"),
    Case("npy-positional-nan", lambda c: _positional(c, None, nan=True), "ranks.npy"),
    Case("npy-without-order", lambda c: _positional(c, None, order=False), "--order"),
    # --- score matrices
    Case("scores-rows-mismatch", _scores(rows=5), "scores.npy"),
    Case("scores-columns-mismatch", _scores(columns=9), "scores.npy"),
    Case("scores-nan", _scores(fill=np.nan), "scores.npy"),
    # -inf is an entity that cannot be the answer, +inf one ranked first: both are scores
    Case("scores-inf", _scores(fill=np.inf), "", keep=True),
    Case(
        "queries-unknown-relation",
        _scores(queries_change=lambda q: _with(q, 0, "relation", "x")),
        "queries.tsv",
    ),
    Case("queries-bad-side", _scores(queries_change=lambda q: _with(q, 0, "side", "up")), "queries.tsv"),
    Case("queries-missing-column", _scores(queries_change=lambda q: q.drop(columns="side")), "queries.tsv"),
    Case("scores-without-queries", lambda c: _cli("--scores", _save_matrix(c))(c), "--queries"),
    Case("column-labels-short", lambda c: [*_scores()(c), "--column-labels", _labels(c, 13)], "labels.tsv"),
    Case(
        "column-labels-unknown",
        lambda c: [*_scores()(c), "--column-labels", _labels(c, 14, bad=True)],
        "labels.tsv",
    ),
    # --- PyKEEN folders
    Case("model-folder-empty", lambda c: _cli("--model", _folder(c, {}))(c), "model"),
    Case(
        "model-untrusted-pickle",
        lambda c: _cli("--model", _folder(c, {"trained_model.pkl": b"x"}))(c),
        "--trust-pickle",
    ),
    Case(
        "model-damaged-pickle",
        lambda c: _cli("--model", _folder(c, {"trained_model.pkl": b"\x80\x04garbage"}), "--trust-pickle")(c),
        "trained_model.pkl",
    ),
    # --- options
    Case("unknown-metric", _cli("--ranks", "RANKS", "--metrics", "mrrr"), "mrrr"),
    Case("metric-without-weights", _cli("--ranks", "RANKS", "--metrics", "wgmr"), "--weights"),
    Case("tolerance-misspelt", _cli("--ranks", "RANKS", "--tie-tolerance", "loose"), "loose"),
    Case("tolerance-negative", _cli("--ranks", "RANKS", "--tie-tolerance", "absolute:-1"), "absolute:-1"),
    Case("tolerance-nan", _cli("--ranks", "RANKS", "--tie-tolerance", "relative:nan"), "nan"),
    Case(
        "tolerance-on-ranks", _cli("--ranks", "RANKS", "--tie-tolerance", "absolute:0.1"), "--tie-tolerance"
    ),
    Case("sampled-zero", _cli("--ranks", "RANKS", "--sampled", "0"), "--sampled"),
    Case("sampled-text", _cli("--ranks", "RANKS", "--sampled", "many"), "--sampled"),
    Case("sampled-out-without-sampled", _cli("--ranks", "RANKS", "--sampled-out", "s.tsv"), "--sampled"),
    Case("by-out-without-by", _cli("--ranks", "RANKS", "--by-out", "b.tsv"), "--by"),
    Case("confidence-one", _cli("--ranks", "RANKS", "--confidence", "1"), "--confidence"),
    Case("confidence-nan", _cli("--ranks", "RANKS", "--confidence", "nan"), "--confidence"),
    Case("seed-negative", _cli("--ranks", "RANKS", "--seed", "-1"), "--seed"),
    Case("seed-huge", _cli("--ranks", "RANKS", "--seed", str(2**70)), "--seed"),
    Case("batch-size-zero", _cli("--ranks", "RANKS", "--batch-size", "0"), "--batch-size"),
    Case("device-unknown", _cli("--ranks", "RANKS", "--device", "tpu"), "tpu"),
    Case("threads-zero", _cli("--ranks", "RANKS", "--threads", "0"), "--threads"),
    Case("out-is-a-folder", lambda c: _cli("--ranks", "RANKS", "--out", str(c.work))(c), "--out"),
    Case(
        "out-in-missing-folder-file",
        lambda c: _cli("--ranks", "RANKS", "--out", f"{_file(c)}/x.tsv")(c),
        "x.tsv",
    ),
    Case("id-maps-is-a-file", lambda c: _cli("--ranks", "RANKS", "--id-maps", _file(c))(c), "--id-maps"),
    Case("dataset-unknown", lambda c: ["evaluate", "--dataset", "atlantis", "--ranks", "x.csv"], "atlantis"),
    Case(
        "dataset-empty-folder",
        lambda c: ["evaluate", "--dataset", _folder(c, {}), "--ranks", "x.csv"],
        "train",
    ),
    # the name labels the outputs' rows; it names no file
    Case("name-with-slash", _cli("--ranks", "RANKS", "--name", "../escape"), "", keep=True),
    # --- compare
    Case("compare-one-system", _compare(systems=("a=ranks.csv",)), "two systems"),
    Case("compare-same-run-twice", _compare(systems=("a=ranks.csv", "a=ranks.csv")), "a="),
    Case("compare-alpha-zero", _compare("--alpha", "0"), "--alpha"),
    Case("compare-resamples-zero", _compare("--bootstrap-resamples", "0"), "--bootstrap-resamples"),
    Case("compare-median", _compare("--metrics", "median_rank"), "median"),
    Case("compare-missing-file", _compare(systems=("a=ranks.csv", "b=missing.csv")), "missing.csv"),
    Case("compare-no-name", _compare(systems=("a=ranks.csv", "=other.csv")), "NAME=PATH"),
    Case("compare-out-dir-is-file", lambda c: [*_compare()(c), "--out-dir", _file(c)], "plain-file"),
    Case("compare-nan-rank", lambda c: _compare_with(c, lambda f: _with(f, 0, "rank", np.nan)), "bad.csv"),
    Case("compare-fewer-tasks", lambda c: _compare_with(c, lambda f: f.iloc[:-4]), "bad.csv"),
    # a wide file read (its layout note held) before the refused one: the refusal alone
    Case(
        "compare-note-then-refusal", lambda c: _compare_with(c, lambda f: f.iloc[:-4], wide=True), "bad.csv"
    ),
    # --- the Python API
    Case("api-evaluate-nan", _api(lambda c: _kgrank().evaluate([1, np.nan], num_candidates=5)), "rank"),
    Case(
        "api-evaluate-rank-above",
        _api(lambda c: _kgrank().evaluate([1, 9], num_candidates=5)),
        "candidate count",
    ),
    Case("api-evaluate-no-candidates", _api(lambda c: _kgrank().evaluate([1, 2])), "num_candidates"),
    Case(
        "api-evaluate-candidates-short",
        _api(lambda c: _kgrank().evaluate([1, 2, 3], num_candidates=[5, 5])),
        "num_candidates",
    ),
    Case(
        "api-evaluate-unknown-metric",
        _api(lambda c: _kgrank().evaluate([1, 2], num_candidates=5, metrics=["x"])),
        "'x'",
    ),
    Case("api-evaluate-folder-no-dataset", _api(lambda c: _kgrank().evaluate(str(c.work))), "dataset"),
    Case(
        "api-evaluate-missing-file",
        _api(lambda c: _kgrank().evaluate("/none.csv", dataset=str(c.nations))),
        "none.csv",
    ),
    Case(
        "api-evaluate-untrusted",
        _api(lambda c: _kgrank().evaluate(_folder(c, {"trained_model.pkl": b"x"}), dataset=str(c.nations))),
        "trusted",
    ),
    Case(
        "api-load-system-bad-kind",
        _api(lambda c: _kgrank().load_system(c.rank_file("k.csv"), c.nations, kind="magic")),
        "magic",
    ),
    Case("api-lookup-unknown", _api(lambda c: _kgrank().lookup("mrrr")), "mrrr"),
    Case("api-lookup-bad-cutoff", _api(lambda c: _kgrank().lookup("hits@0")), "hits@0"),
    Case("api-compare-not-a-frame", _api(lambda c: _kgrank().compare([1, 2, 3])), "DataFrame"),
    Case("api-compare-alpha", _api(lambda c: _kgrank().compare(_frame(), alpha=2.0)), "alpha"),
    Case(
        "api-compare-bad-source", _api(lambda c: _kgrank().compare({str(c.nations): {"a": 3, "b": 4}})), "'a'"
    ),
    Case("api-compare-seed-gaps", _api(lambda c: _kgrank().compare(_frame(gap=True))), "seed"),
]


def _kgrank():
    import kgrank

    return kgrank


def _frame(gap: bool = False) -> pd.DataFrame:
    rows = [
        {"system": system, "seed": seed, "task": task, "rank": 1 + (task + seed) % 3, "num_candidates": 5}
        for system in ("a", "b")
        for seed in (0, 1)
        for task in range(6)
    ]
    frame = pd.DataFrame(rows)
    return frame.iloc[:-1] if gap else frame


def _wide(frame: pd.DataFrame, nan: bool = False) -> pd.DataFrame:
    head = frame[frame["side"] == "head"].reset_index(drop=True)
    tail = frame[frame["side"] == "tail"].reset_index(drop=True)
    wide = head[["head", "relation", "tail"]].assign(head_rank=head["rank"], tail_rank=tail["rank"])
    return _with(wide, 0, "head_rank", np.nan) if nan else wide


def _symlink(context: Context) -> list[str]:
    link = context.work / "dangling.csv"
    link.unlink(missing_ok=True)
    link.symlink_to(context.work / "nowhere.csv")
    return ["evaluate", "--dataset", str(context.nations), "--ranks", str(link)]


def _fifo(context: Context) -> list[str]:
    fifo = context.work / "fifo.csv"
    if not fifo.exists():
        os.mkfifo(fifo)
    return ["evaluate", "--dataset", str(context.nations), "--ranks", str(fifo)]


def _positional(context: Context, length: int | None, nan: bool = False, order: bool = True) -> list[str]:
    test = context.tasks[context.tasks["side"] == "head"]
    array = np.ones((len(test) if length is None else length, 2))
    if nan:
        array[0, 0] = np.nan
    np.save(context.work / "ranks.npy", array)
    argv = ["evaluate", "--dataset", str(context.nations), "--ranks", str(context.work / "ranks.npy")]
    return [*argv, "--order", "test"] if order else argv


def _save_matrix(context: Context) -> str:
    np.save(context.work / "alone.npy", np.zeros((3, 14)))
    return str(context.work / "alone.npy")


def _labels(context: Context, count: int, bad: bool = False) -> str:
    from kgrank.data.datasets import load_factories

    labels = sorted(load_factories(context.nations).training.entity_to_id)[:count]
    if bad:
        labels[0] = "atlantis"
    path = context.work / "labels.tsv"
    path.write_text("\n".join(labels) + "\n", encoding="utf-8")
    return str(path)


def _folder(context: Context, files: dict[str, bytes], prefix: str = "folder") -> str:
    folder = Path(tempfile.mkdtemp(dir=context.work, prefix=prefix))
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return str(folder)


def _file(context: Context) -> str:
    path = context.work / "plain-file"
    path.write_text("x", encoding="utf-8")
    return str(path)


def _compare_with(
    context: Context, change: Callable[[pd.DataFrame], pd.DataFrame], wide: bool = False
) -> list[str]:
    context.rank_file("ranks.csv", _wide(context.tasks.drop(columns="num_candidates")) if wide else None)
    bad = context.rank_file("bad.csv", change(context.tasks.drop(columns="num_candidates")))
    return [
        *("compare", "--dataset", str(context.nations)),
        *("--systems", f"a={context.work}/ranks.csv", f"b={bad}"),
    ]


def prepare(work: Path) -> Context:
    from kgrank.data.datasets import prepare_dataset
    from kgrank.systems import load_system

    nations = work / "nations"
    prepare_dataset("nations", {"source": "pykeen"}, nations)
    test = pd.read_csv(nations / "test.tsv", sep="\t", header=None, names=["head", "relation", "tail"])
    tasks = pd.concat([test.assign(side="head"), test.assign(side="tail")], ignore_index=True).assign(rank=1)
    probe = work / "probe.csv"
    tasks.to_csv(probe, index=False)
    table = load_system(probe, nations)
    counts = table.set_index(["triple_id", "side"])["num_candidates"]
    tasks["num_candidates"] = [
        counts[(index % len(test), side)] for index, side in zip(tasks.index, tasks["side"], strict=True)
    ]
    return Context(nations, work, tasks)


def run_api(call: Callable[[], object]) -> tuple[int | str, str]:
    from kgrank.errors import KgrankInputError

    err = io.StringIO()
    with captured(err):
        try:
            call()
            return 0, err.getvalue()
        except KgrankInputError as error:
            return 2, f"{err.getvalue()}{error}\n"
        except Exception:  # noqa: BLE001 - a traceback is what the probe looks for
            traceback.print_exc(file=err)
            return "traceback", err.getvalue()


def grade_kept(code: int | str, err: str) -> tuple[str, str]:
    """Data to keep: accepted (exit 0) with at most one note, no traceback."""
    lines = [line for line in err.strip().splitlines() if line.strip()]
    if code == "traceback" or "Traceback" in err:
        return "bad", f"traceback: {(lines[-1] if lines else '')[:160]}"
    if code != 0:
        return "weak", f"refused (exit {code}): {(lines[-1] if lines else '')[:160]}"
    return ("good", "kept") if len(lines) <= 1 else ("weak", f"kept with {len(lines)} lines")


def run_cases(scratch: Path, only: str = "") -> list[dict[str, str]]:
    """Every case whose name holds ``only``, in ``scratch``: its grade and detail."""
    context = prepare(scratch)
    good_ranks = context.rank_file("good.csv")
    outcomes = []
    for case in (case for case in CASES if only in case.name):
        out = Path(tempfile.mkdtemp(dir=scratch, prefix="out-"))
        made = case.make(context)
        if callable(made):
            code, err = run_api(made)
        else:
            argv = [good_ranks if item == "RANKS" else item for item in made]
            with contextlib.chdir(out):
                code, err = run_case(argv)
        verdict, detail = grade_kept(code, err) if case.keep else grade(code, err, out, case.named)
        outcomes.append({"case": case.name, "grade": verdict, "detail": detail})
    return outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="run the cases whose name holds this")
    parser.add_argument("--json", help="write every case's outcome here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        outcomes = run_cases(Path(scratch), args.only)
    for outcome in outcomes:
        print(f"{outcome['grade']:5} {outcome['case']}: {outcome['detail']}")
    counts = {
        grade_: sum(outcome["grade"] == grade_ for outcome in outcomes) for grade_ in ("good", "weak", "bad")
    }
    print(f"{len(outcomes)} cases: {counts['good']} good, {counts['weak']} weak, {counts['bad']} bad")
    if args.json:
        Path(args.json).write_text(json.dumps(outcomes, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
