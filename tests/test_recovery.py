"""Crash recovery and byte-identical outputs: real Snakemake runs of the tiny CI config.

The crash test does what docs/usage.md's "After a crash" section says a user does: the
main command is killed with SIGKILL (its whole process group, as a power cut or the
OOM killer would), then `snakemake --unlock`, then the main command again. Kills are
placed at seeded random moments inside jobs of every stage, and the outputs of the
recovered run must equal those of an uninterrupted one, with no debris left behind.

The command names the outputs the kills fall in (CRASH_TARGETS), as a user who asks for
a figure and a table does: 15 of the tiny DAG's 58 jobs. Recovering the whole DAG killed
no other kind of job and cost CI a second run of the 43 others (about 170 CPU-seconds in
the suite); their outputs are computed twice in CI only where the SLURM cluster's run
makes them (tests/test_cluster.py, which runs as root only), and their seeds are tested
function by function.
"""

from __future__ import annotations

import base64
import os
import random
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import MAIN, TINY_SNAKEMAKE, Streamed, debris, differing, fingerprint, made_by
from conftest import snakemake as tiny_snakemake

pytestmark = pytest.mark.slow

# one step's limit; beside the other end-to-end runs (pytest-xdist) a step takes longer
TIMEOUT = 1200


def snakemake(workdir: Path, *arguments: str) -> subprocess.CompletedProcess:
    return tiny_snakemake(workdir, *arguments, timeout=TIMEOUT)


# The outputs of the jobs the kills fall in (KILL_POINTS), and what they read: data,
# both trainings, ranks, the external systems, metrics, Figure 1, the open-world
# training.
CRASH_TARGETS = (
    "results/figures/figure1.png",
    "results/openworld/family_tree/density-65/complex-d8.tsv",
)
# The main command (`snakemake --cores 2`), naming those outputs.
COMMAND = (*MAIN, *CRASH_TARGETS)


class Run(Streamed):
    """The command on the tiny config, in a process group of its own."""

    def __init__(self, workdir: Path):
        super().__init__([*TINY_SNAKEMAKE, "--directory", str(workdir), *COMMAND])

    def started(self, rule: str) -> bool:
        pattern = re.compile(rf"^(local)?rule {rule}:")
        return any(pattern.match(line) for line in list(self.lines))

    def running_rules(self) -> list[str]:
        """Rules of the jobs that started and did not finish, by Snakemake's log."""
        text = "".join(self.lines)
        started = re.findall(r"^(?:local)?rule (\w+):\n(?:    .*\n)*?    jobid: (\d+)", text, flags=re.M)
        finished = set(re.findall(r"^Finished jobid: (\d+)", text, flags=re.M))
        return sorted({rule for rule, jobid in started if jobid not in finished})

    def kill(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=60)
        self.reader.join(timeout=60)


def incomplete_outputs(workdir: Path) -> set[str]:
    """The outputs Snakemake has marked incomplete: the marks are files in
    .snakemake/incomplete named by the output's path in URL-safe base64."""
    folder = workdir / ".snakemake" / "incomplete"
    names = [path.name for path in folder.iterdir()] if folder.is_dir() else []
    return {base64.urlsafe_b64decode(name).decode() for name in names if not name.startswith("@")}


def _wait_until(condition, run: Run, deadline: float) -> bool:
    """True once ``condition()`` holds; False if the run ended first."""
    while time.monotonic() < deadline:
        if condition():
            return True
        if run.process.poll() is not None:
            return False
        time.sleep(0.05)
    raise AssertionError("the run neither reached the kill point nor ended in time")


# Where the kills fall, in the order of the DAG: a job of each stage and of the studies,
# and the moment just after a job's output appeared but before Snakemake recorded it
# as complete (the case that needs --rerun-incomplete).
KILL_POINTS = [
    ("rule", "prepare_dataset"),
    ("rule", "train"),
    ("output", "results/ranks/nations/transe.parquet"),
    ("rule", "ranks"),
    ("rule", "metrics"),
    ("rule", "openworld_family_tree"),
    ("rule", "paper_figure1"),
]


@dataclass
class CrashRun:
    workdir: Path
    first_output: str  # what the first run printed before its kill
    without_unlock: subprocess.CompletedProcess  # the main command again, before --unlock
    killed_during: list[str]
    final: subprocess.CompletedProcess


@pytest.fixture(scope="module")
def crash_run(tmp_path_factory) -> CrashRun:
    """COMMAND on the tiny config, killed with SIGKILL at KILL_POINTS, each kill followed
    by `snakemake --unlock` and COMMAND again; after the first kill COMMAND is also rerun
    without unlocking. One run for this module's tests: each start of Snakemake parses
    the workflow, and the run computes CRASH_TARGETS' jobs."""
    workdir = tmp_path_factory.mktemp("crash-run")
    rng = random.Random(20261123)
    killed_during: list[str] = []
    first_output, without_unlock = "", None
    for kind, target in KILL_POINTS:
        run = Run(workdir)
        deadline = time.monotonic() + TIMEOUT
        if kind == "rule":
            reached = _wait_until(lambda run=run, rule=target: run.started(rule), run, deadline)
            # somewhere inside the job: loading, computing or writing its outputs
            time.sleep(rng.uniform(0.0, 2.0))
        else:
            reached = _wait_until(lambda path=workdir / target: path.exists(), run, deadline)
        if run.process.poll() is None:
            killed_during.append(f"{target}: {', '.join(run.running_rules()) or 'scheduling'}")
            run.kill()
            if kind == "output":
                # the output is there but marked incomplete: what only --rerun-incomplete
                # (the workflow profile) lets the plain rerun remake
                assert target in incomplete_outputs(workdir), "killed after the job was recorded complete"
        else:
            run.reader.join(timeout=60)
            assert run.process.returncode == 0, "".join(run.lines)[-3000:]
        assert reached or run.process.returncode == 0
        if without_unlock is None:
            first_output = "".join(run.lines)
            without_unlock = snakemake(workdir, *COMMAND)
        # the one documented step after a crash
        unlock = snakemake(workdir, "--unlock")
        assert unlock.returncode == 0, unlock.stderr[-2000:]
    final = snakemake(workdir, *COMMAND)
    return CrashRun(workdir, first_output, without_unlock, killed_during, final)


def test_the_workflow_profile_applies_by_default(crash_run):
    # found relative to the working directory or to the Snakefile, whichever comes first
    pattern = r"Using workflow specific profile \S*profiles/default "
    assert re.search(pattern, crash_run.first_output), crash_run.first_output[-2000:]


def test_without_unlock_the_rerun_names_the_step(crash_run):
    """A stale lock is the one thing the user must clear; Snakemake says how."""
    result = crash_run.without_unlock
    assert result.returncode != 0
    assert "--unlock" in result.stderr + result.stdout


def test_kill_9_at_random_moments_then_the_documented_recovery(request, crash_run):
    """Also a determinism test: the recovered run computes each of its outputs again from
    nothing (the kills only split it into pieces), so it must equal the clean run byte for
    byte. The clean run (conftest.local_run, shared with the cluster test) is asked for
    only at the end, so that under pytest-xdist the two runs go side by side."""
    killed_during = crash_run.killed_during
    assert len(killed_during) >= 5, killed_during
    assert crash_run.final.returncode == 0, crash_run.final.stderr[-3000:]
    assert debris(crash_run.workdir) == [], f"debris after recovery (kills during {killed_during})"
    _, clean = request.getfixturevalue("local_run")
    assert len(clean) > 50  # data, models, ranks, metrics, tables, figures of every study
    found = fingerprint(crash_run.workdir)
    # No output of the 15 jobs can be missing from `found`: the final run exited 0, and
    # Snakemake checks every job's outputs when it ends and remakes a job whose output is
    # gone, so comparing the outputs found is comparing them all.
    expected = made_by(CRASH_TARGETS, clean, found)
    assert any(name.endswith("model.pt") for name in found)
    assert any(name.endswith(".pdf") for name in found) and any(name.endswith(".png") for name in found)
    changed = differing(expected, found)
    assert not changed, f"recovered outputs differ from a clean run: {changed} (kills during {killed_during})"
