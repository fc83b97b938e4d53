from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import pandas as pd
import pytest
from filelock import FileLock

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

# Set before torch loads OpenMP, here and in every command the tests start: the README's
# test command runs three pytest-xdist workers on two cores beside the Snakemake jobs of the
# end-to-end tests, and OpenMP's default lets a thread waiting at a barrier spin on a core
# another process needs (a trial with two workers and the default took the tiny local run
# from 181 s alone to about 1,000 s). Waiting threads sleep instead; no result changes.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# The answers PyKEEN gives the workflow's parse-time checks (kgrank.workflow.remembered) are kept in
# a folder of this test run's own, for its processes and the commands they start, unless
# KGRANK_ANSWERS names one already. The pytest-xdist workers of one run share it (each
# first question costs a Snakemake parse about 4 CPU-seconds of importing PyKEEN): its
# name is the run's id.
if "KGRANK_ANSWERS" not in os.environ:
    _RUN_ID = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if _RUN_ID:
        _ANSWERS = Path(tempfile.gettempdir()) / f"kgrank-answers-{_RUN_ID}"
        _ANSWERS.mkdir(exist_ok=True)
    else:
        _ANSWERS = Path(tempfile.mkdtemp(prefix="kgrank-answers-"))
    os.environ["KGRANK_ANSWERS"] = str(_ANSWERS)

# The end-to-end modules first: under pytest-xdist (`--dist loadscope
# --no-loadscope-reorder`, the README's test command) each module goes whole to one
# worker in this order, so the long runs of the DAG start at once, side by side, and the
# short tests fill the cores around them. The SLURM cluster's run mostly waits on its
# status checks. Then the longest of the other modules (54, 29, 24 and 18 s of a run),
# so that the suite ends on short modules on both cores: in its alphabetical place
# test_ranks.py ran last, its final 28 s alone on one core.
LONG_MODULES = (
    "test_cluster.py",
    "test_recovery.py",
    "test_workflow.py",
    "test_readme.py",
    "test_dry_runs.py",
    "test_ranks.py",
    "test_ir_evaluation.py",
    "test_cli.py",
    "test_datasets.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    def rank(item: pytest.Item) -> int:
        name = item.path.name
        return LONG_MODULES.index(name) if name in LONG_MODULES else len(LONG_MODULES)

    items.sort(key=rank)  # stable: each module keeps its own order


@pytest.fixture(scope="session")
def nations_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Nations prepared once per test session (it ships inside the pykeen wheel)."""
    from kgrank.data.datasets import prepare_dataset

    out_dir = tmp_path_factory.mktemp("data") / "nations"
    prepare_dataset("nations", {"source": "pykeen"}, out_dir)
    return out_dir


@pytest.fixture(scope="session")
def kinships_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Kinships prepared once per test session (it ships inside the pykeen wheel too)."""
    from kgrank.data.datasets import prepare_dataset

    out_dir = tmp_path_factory.mktemp("data") / "kinships"
    prepare_dataset("kinships", {"source": "pykeen"}, out_dir)
    return out_dir


BENCHMARK_ARCHIVES = {"fb15k237": "fb15k237/FB15k-237.tar.gz", "wn18rr": "wn18rr/WN18RR.tar.gz"}


def _benchmark_dir(name: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from kgrank.data.datasets import prepare_dataset

    archive = SHARED / "data" / BENCHMARK_ARCHIVES[name]
    if not archive.is_file():
        pytest.skip(f"{archive} not present")
    out_dir = tmp_path_factory.mktemp("data") / name
    prepare_dataset(name, {"source": "archive", "archive": str(archive)}, out_dir)
    return out_dir


@pytest.fixture(scope="session")
def fb15k237_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """FB15k-237 prepared once per test session from the shared archive (about 5 s)."""
    return _benchmark_dir("fb15k237", tmp_path_factory)


@pytest.fixture(scope="session")
def wn18rr_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """WN18RR prepared once per test session from the shared archive (about 3 s)."""
    return _benchmark_dir("wn18rr", tmp_path_factory)


def markdown_row(markdown: str, label: str) -> list[str]:
    """The cells of the first Markdown table row that mentions ``label``."""
    line = next(line for line in markdown.splitlines() if label in line)
    return [cell.strip() for cell in line.strip("|").split("|")]


# -- the tiny CI config run end to end, and what its outputs must equal ------------------

# Snakemake on the tiny CI config (.test/config.yaml); add `--directory DIR` and options.
TINY_SNAKEMAKE = [
    sys.executable,
    *("-m", "snakemake", "-s", str(REPO / "Snakefile")),
    *("--configfile", str(REPO / ".test" / "config.yaml")),
]
# The README's main command (`snakemake --cores 2`), run on the tiny config.
MAIN = ("--cores", "2")


def snakemake(
    workdir: Path, *arguments: str, timeout: float | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """Snakemake on the tiny config in ``workdir``, its output captured."""
    command = [*TINY_SNAKEMAKE, "--directory", str(workdir), *arguments]
    return subprocess.run(command, capture_output=True, text=True, check=False, timeout=timeout, env=env)


def planned_jobs(result: subprocess.CompletedProcess) -> dict[str, int]:
    """The rule -> count table of a dry run ('Job stats')."""
    assert result.returncode == 0, result.stderr[-3000:]
    lines = result.stdout.splitlines()
    if not any(line.startswith("Job stats:") for line in lines):
        return {}
    start = next(index for index, line in enumerate(lines) if line.startswith("Job stats:")) + 3
    jobs = {}
    for line in lines[start:]:
        parts = line.split()
        if len(parts) != 2 or parts[0] == "total":
            break
        jobs[parts[0]] = int(parts[1])
    return jobs


# Outputs that record measured time. They are compared without it: the seconds a
# training took are a measurement, not a result.
TIMED_JSON_KEYS = {"training.json": "seconds"}
TIMED_TABLE_COLUMNS = {"learning_curve.tsv": "seconds"}
# The learning-curve figure plots validation MRR against those seconds.
TIMED_FIGURES = {"learning_curves.pdf", "learning_curves.png"}


def _content(path: Path) -> bytes:
    if path.name in TIMED_JSON_KEYS:
        record = json.loads(path.read_text(encoding="utf-8"))
        record.pop(TIMED_JSON_KEYS[path.name])
        return json.dumps(record, sort_keys=True).encode()
    if path.name in TIMED_TABLE_COLUMNS:
        table = pd.read_csv(path, sep="\t").drop(columns=TIMED_TABLE_COLUMNS[path.name])
        return table.to_csv(sep="\t", index=False).encode()
    return path.read_bytes()


def fingerprint(workdir: Path) -> dict[str, str]:
    """sha256 of every file under results/ except logs, benchmark timings and the
    learning-curve figure; files with a timing field are hashed without it."""
    results = workdir / "results"
    hashes = {}
    for path in sorted(results.rglob("*")):
        relative = path.relative_to(results)
        if not path.is_file() or relative.parts[0] in {"logs", "benchmarks"} or path.name in TIMED_FIGURES:
            continue
        hashes[str(relative)] = hashlib.sha256(_content(path)).hexdigest()
    return hashes


def differing(expected: dict[str, str], found: dict[str, str]) -> list[str]:
    """Names of the outputs missing from one fingerprint or hashed differently."""
    return sorted(name for name in expected.keys() | found.keys() if expected.get(name) != found.get(name))


def made_by(targets: tuple[str, ...], expected: dict[str, str], found: dict[str, str]) -> dict[str, str]:
    """The fingerprint ``expected`` (the local run's) of the outputs ``found`` holds, after
    checking that a run asked for ``targets`` made them and nothing the local run did not."""
    assert {target.removeprefix("results/") for target in targets} <= set(found)
    assert set(found) <= set(expected), set(found) - set(expected)
    return {name: expected[name] for name in found}


def debris(workdir: Path) -> list[str]:
    """Partial files of killed steps, and Snakemake's marks of incomplete outputs."""
    from kgrank.data.io import PARTIAL_SUFFIX

    partial = [str(path) for path in (workdir / "results").rglob(f"*{PARTIAL_SUFFIX}")]
    incomplete = workdir / ".snakemake" / "incomplete"
    marks = [str(path) for path in incomplete.iterdir()] if incomplete.is_dir() else []
    return partial + marks


# tests/figure_audit/sitecustomize.py, on the main run's PYTHONPATH: each figure the run
# saves also leaves its texts and legends in this folder beside the run (test_figures.py)
FIGURE_AUDIT = REPO / "tests" / "figure_audit"


def figure_audit_dir(workdir: Path) -> Path:
    return workdir.parent / f"{workdir.name}-figures"


def _run_tiny_dag(workdir: Path) -> dict[str, str]:
    env = {
        **os.environ,
        "KGRANK_FIGURE_AUDIT": str(figure_audit_dir(workdir)),
        "PYTHONPATH": os.pathsep.join(filter(None, [str(FIGURE_AUDIT), os.environ.get("PYTHONPATH")])),
    }
    # alone it takes about 3 minutes on 2 cores; beside the other end-to-end runs more
    result = snakemake(workdir, *MAIN, timeout=1800, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    return fingerprint(workdir)


@pytest.fixture(scope="session")
def local_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The README's main command on the tiny config, once per test run, and the
    fingerprint of its outputs: what a crashed-and-recovered run (test_recovery.py) and a
    cluster run (test_cluster.py) must reproduce. Nothing may write into its folder.

    Under pytest-xdist the workers share one run: the first worker to ask makes it under a
    file lock in the folder all workers' temporary folders sit in, the others wait for it
    and read its fingerprint."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        workdir = tmp_path_factory.mktemp("local-run")
        return workdir, _run_tiny_dag(workdir)
    shared = tmp_path_factory.getbasetemp().parent
    record = shared / "local-run.json"
    with FileLock(str(shared / "local-run.lock")):
        if not record.is_file():
            workdir = shared / "local-run"
            # a worker whose run failed leaves a partial folder: start over
            shutil.rmtree(workdir, ignore_errors=True)
            shutil.rmtree(figure_audit_dir(workdir), ignore_errors=True)
            workdir.mkdir()
            found = _run_tiny_dag(workdir)
            record.write_text(json.dumps({"workdir": str(workdir), "fingerprint": found}), encoding="utf-8")
        shared_run = json.loads(record.read_text(encoding="utf-8"))
    return Path(shared_run["workdir"]), shared_run["fingerprint"]


class Streamed:
    """A command in a process group of its own (so that killpg reaches its jobs), its
    output read line by line as it comes."""

    def __init__(self, argv: list[str]):
        self.process = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
        )
        self.lines: list[str] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.append(line)


def protocol_runs(runs: pd.DataFrame, protocol: str, evaluation: str) -> pd.DataFrame:
    """The IR pass's run lists of one protocol and evaluation (trec.RUN_COLUMNS): the
    protocol's own, or the first protocol's where the pass left them out as equal to it."""
    from kgrank.studies.ir import trec

    chosen = runs[(runs["evaluation"] == evaluation) & (runs["protocol"] == protocol)]
    if chosen.empty and len(runs):
        chosen = runs[(runs["evaluation"] == evaluation) & (runs["protocol"] == runs["protocol"].iloc[0])]
    return chosen[list(trec.RUN_COLUMNS)].reset_index(drop=True)
