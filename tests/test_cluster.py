"""The workflow on a real SLURM cluster: the tiny CI config through the SLURM profile,
25 of its jobs (CLUSTER_TARGETS: every rule the profile gives resources but the further
training runs, which share train's and ranks' entries (test_dry_runs.py checks that), a
job of each stage and of every study).

scripts/slurm/start.sh starts a one-node cluster on this machine (installing SLURM and
munge with apt-get when they are missing); where it cannot (not root, no package
access, another cluster's /etc/slurm/slurm.conf), the tests are skipped with its reason.
The node is declared as large as the profile's largest request (8 CPUs, 64000 MB, one
GPU, which is a count with no device) and its partitions are named as the profile names
them, so the profile's requests reach sbatch as written and SLURM accepts or rejects them
as a cluster would. The cluster has no accounting database: the run adds the flags the
README gives for such a cluster.

What is asserted: every job that is not a light rule went through sbatch and asked SLURM
for its rule's threads, memory, runtime, partition and GPU (read back with `scontrol
show job`, which keeps finished jobs for MinJobAge); the light rules (`localrules`) ran on
the submitting node and never through sbatch; the outputs equal those of the README's
local run; a job cancelled with scancel is finished by rerunning the workflow, and
nothing else is redone or lost.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
from conftest import REPO, TINY_SNAKEMAKE, Streamed, debris, differing, fingerprint, made_by

pytestmark = pytest.mark.slow

SCRIPTS = REPO / "scripts" / "slurm"
PROFILE_DIR = REPO / "workflow" / "profiles" / "slurm"
PROFILE = yaml.safe_load((PROFILE_DIR / "config.yaml").read_text(encoding="utf-8"))
# Every step is bounded: a hung run is killed and its jobs are cancelled by stop.sh.
TIMEOUT = 1200

# A cluster without an accounting database: sacct fails, so the plugin must ask squeue
# (finished jobs stay visible for MinJobAge), and has no account to look up. The first
# status check after 1 s instead of 40.
NO_ACCOUNTING = (
    *("--slurm-status-command", "squeue"),
    "--slurm-no-account",
    *("--slurm-init-seconds-before-status-checks", "1"),
)
# train and ranks with one thread, as in the README's local run that the outputs are
# compared with: training.json records the thread count, and a sum split over 8 threads
# need not round as one over 1 does. A --set-threads on the command line replaces the
# profile's whole table, so the profile's other entries are restated.
THREADS = {**PROFILE["set-threads"], "train": 1, "ranks": 1, "train_run": 1, "ranks_run": 1}
CLUSTER_RUN = [
    *TINY_SNAKEMAKE,
    *("--profile", str(PROFILE_DIR)),
    *NO_ACCOUNTING,
    *("--set-threads", *(f"{rule}={threads}" for rule, threads in THREADS.items())),
]
# The cluster makes these outputs of the tiny DAG, 25 of its jobs: every rule the profile
# gives resources of its own (train_run and ranks_run share train's and ranks'), a job of
# each stage and of every study, remote and light.
# The whole DAG is computed once by the local run, and the crash test computes 15 of its
# jobs again; on the cluster each job also waits for the executor's status checks, and
# the whole DAG took 420 s there against 181 s locally.
CLUSTER_TARGETS = (
    "results/figures/figure1.png",  # paper_figure1 <- metrics <- ranks <- train <- data
    "results/tables/table4.md",
    "results/tables/errata.md",
    "results/moments/nations/moments.tsv",
    "results/moments/nations/montecarlo.tsv",
    "results/tables/openworld_inversions.md",  # <- openworld_family_tree
    "results/tables/ambiguity_table1.md",
    "results/ambiguity/subsets/nations/transe.parquet",
    "results/ir/nations/items/transe.parquet",  # ir_evaluate <- ir_queries
    "results/protocols/ties/nations/transe.tsv",
)


def _largest(resource: str) -> int:
    values = [PROFILE["default-resources"].get(resource, 0)]
    values += [resources.get(resource, 0) for resources in PROFILE["set-resources"].values()]
    return max(values)


# the node the profile as written fits on
NODE = {
    "cpus": max(PROFILE["set-threads"].values()),
    "memory": _largest("mem_mb"),
    "gpus": _largest("gpu"),
}
SCRIPT_TIMEOUT = 300  # installing the packages takes about 10 s; a slow mirror more


@pytest.fixture(scope="module")
def cluster():
    """A one-node cluster for this module, stopped at the end whatever happened."""
    # under /tmp: slurmd's job-step sockets live in the state folder, and a socket path
    # has at most 107 bytes
    state = Path(tempfile.mkdtemp(prefix="kgrank-slurm-"))
    options = [item for key, value in NODE.items() for item in (f"--{key}", str(value))]
    started = time.monotonic()
    start = None
    try:
        start = subprocess.run(
            [str(SCRIPTS / "start.sh"), "--state", str(state), *options],
            capture_output=True,
            text=True,
            check=False,
            timeout=SCRIPT_TIMEOUT,
        )
        if start.returncode == 3:
            pytest.skip(f"no SLURM cluster on this machine: {start.stderr.strip()}")
        assert start.returncode == 0, start.stdout + start.stderr
        print(f"\n{start.stdout.strip()} (start.sh: {time.monotonic() - started:.1f} s)")
        yield state
    finally:
        if start is None or start.returncode != 3:  # 3: nothing was started
            _stop(state)


def _stop(state: Path) -> None:
    """stop.sh, and proof that the daemons it recorded are gone and the link removed."""
    pids = {
        name: (state / f"{name}.pid").read_text().strip()
        for name in ("munged", "slurmctld", "slurmd")
        if (state / f"{name}.pid").exists()
    }
    started = time.monotonic()
    stop = subprocess.run(
        [str(SCRIPTS / "stop.sh"), "--state", str(state)],
        capture_output=True,
        text=True,
        check=False,
        timeout=SCRIPT_TIMEOUT,
    )
    print(f"{stop.stdout.strip()} (stop.sh: {time.monotonic() - started:.1f} s)")
    assert stop.returncode == 0, stop.stderr
    still = [f"{name} {pid}" for name, pid in pids.items() if Path(f"/proc/{pid}").exists()]
    assert not still, f"still running after stop.sh: {still}"
    assert not Path("/etc/slurm/slurm.conf").exists()


@dataclass
class Job:
    """One job of a Snakemake run, as its log announced it."""

    rule: str
    local: bool
    threads: int
    resources: dict[str, str]


@dataclass
class Run:
    output: str
    seconds: float

    def jobs(self) -> dict[str, Job]:
        """Snakemake job id -> the job's rule, place, threads and resources."""
        jobs = {}
        for local, rule, body in re.findall(
            r"^(local)?rule (\w+):\n((?: {4}.*\n)*)", self.output, flags=re.M
        ):
            fields = dict(re.findall(r"^ {4}(\w+): (.*)$", body, flags=re.M))
            resources = dict(item.split("=", 1) for item in fields.get("resources", "").split(", ") if item)
            jobs[fields["jobid"]] = Job(rule, bool(local), int(fields.get("threads", 1)), resources)
        return jobs

    def submissions(self) -> dict[str, str]:
        """Snakemake job id -> SLURM job id, for every job that went through sbatch."""
        return dict(
            re.findall(r"^Job (\d+) has been submitted with SLURM jobid (\d+) ", self.output, flags=re.M)
        )


def snakemake(workdir: Path, *arguments: str) -> Run:
    started = time.monotonic()
    result = subprocess.run(
        [*CLUSTER_RUN, "--directory", str(workdir), *arguments, *CLUSTER_TARGETS],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
        timeout=TIMEOUT,
    )
    run = Run(result.stdout, time.monotonic() - started)
    assert result.returncode == 0, result.stdout[-4000:]
    return run


@pytest.fixture(scope="module")
def cluster_run(cluster, tmp_path_factory) -> tuple[Path, Run, dict[str, str]]:
    workdir = tmp_path_factory.mktemp("cluster-run")
    run = snakemake(workdir)
    print(f"workflow on the cluster: {run.seconds:.1f} s")
    return workdir, run, fingerprint(workdir)


def scontrol(slurm_id: str) -> dict[str, str]:
    """The fields of a job that SLURM still keeps (MinJobAge)."""
    result = subprocess.run(
        ["scontrol", "-o", "show", "job", slurm_id], capture_output=True, text=True, check=True, timeout=30
    )
    return dict(re.findall(r"(?:^|\s)([\w/:]+)=(\S*)", result.stdout))


def megabytes(value: str) -> float:
    """scontrol's memory ('16000M', '62.50G': GiB with two decimals) in MB."""
    number, unit = float(value[:-1]), value[-1]
    return number * {"M": 1, "G": 1024, "T": 1024**2}[unit]


def minutes(value: str) -> int:
    """scontrol's time limit ('01:00:00', '2-00:00:00') in minutes."""
    days, _, clock = value.rpartition("-")
    hours, mins, _ = (int(part) for part in clock.split(":"))
    return int(days or 0) * 1440 + hours * 60 + mins


def declared_localrules() -> set[str]:
    """The `localrules:` entries of the Snakefile and every rule file (also those declared
    inside an `if`, such as the external systems' rules)."""
    names = set()
    for path in [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").rglob("*.smk"))]:
        pattern = r"^([ \t]*)localrules:\n((?:\1[ \t]+\w+,?\n)+)"
        for _, block in re.findall(pattern, path.read_text(), flags=re.M):
            names |= set(re.findall(r"\w+", block))
    return names


def test_every_job_went_through_sbatch_with_its_rules_resources(cluster_run):
    workdir, run, _ = cluster_run
    jobs, submitted = run.jobs(), run.submissions()
    remote = {jobid for jobid, job in jobs.items() if not job.local}
    assert set(submitted) == remote, (
        "jobs that are not light rules but did not go through sbatch, or the reverse"
    )
    assert len(set(submitted.values())) == len(submitted)
    # the stages and every study: data, training, ranks, moments, open world, ambiguity
    assert {
        "prepare_dataset",
        "train",
        "ranks",
        "moments_montecarlo",
        "openworld_family_tree",
        "ambiguity_subsets",
    } <= {jobs[jobid].rule for jobid in remote}
    for jobid, slurm_id in submitted.items():
        job, fields = jobs[jobid], scontrol(slurm_id)
        what = f"{job.rule} (SLURM job {slurm_id}): {fields}"
        assert fields["JobState"] == "COMPLETED", what
        assert fields["WorkDir"] == str(workdir), what
        assert int(fields["NumCPUs"]) == int(fields["CPUs/Task"]) == job.threads, what
        # scontrol prints memory in GiB with two decimals: within 0.005 GiB
        assert abs(megabytes(fields["MinMemoryNode"]) - int(job.resources["mem_mb"])) <= 5.12, what
        assert minutes(fields["TimeLimit"]) == int(job.resources["runtime"]), what
        assert fields["Partition"] == job.resources["slurm_partition"], what
        gpus = int(job.resources.get("gpu", 0))
        assert fields.get("TresPerJob", "") == (f"gres:gpu:{gpus}" if gpus else ""), what
        # what the rule got is what the profile sets for it (threads: the test's own)
        assert job.threads == THREADS.get(job.rule, job.threads), what
        for key, value in PROFILE["set-resources"].get(job.rule, {}).items():
            assert job.resources[key] == str(value), what
    print(f"{len(submitted)} jobs through sbatch, {sum(job.local for job in jobs.values())} local")


# Light rules of each stage and study that the tiny config runs.
LIGHT_RULES_RUN = {
    "metrics",
    "paper_figure1",
    "paper_table4",
    "moments_errata",
    "openworld_inversions",
    "ambiguity_table1",
}


def test_light_rules_ran_on_the_submitting_node(cluster_run):
    _, run, _ = cluster_run
    jobs, submitted = run.jobs(), run.submissions()
    localrules = declared_localrules()
    assert localrules >= LIGHT_RULES_RUN
    ran_locally = {job.rule for job in jobs.values() if job.local}
    ran_remotely = {job.rule for job in jobs.values() if not job.local}
    assert ran_locally <= localrules, ran_locally - localrules
    assert not ran_remotely & localrules, ran_remotely & localrules
    assert not set(submitted) & {jobid for jobid, job in jobs.items() if job.local}
    # those light rules of the tiny config ran, locally
    assert ran_locally >= LIGHT_RULES_RUN


def test_outputs_equal_the_local_run(cluster_run, local_run):
    workdir, _, found = cluster_run
    _, expected = local_run
    assert len(found) > 30  # data, models, ranks, metrics, tables, figures of every study
    expected = made_by(CLUSTER_TARGETS, expected, found)
    assert not differing(expected, found), (
        f"the cluster run differs from the local run: {differing(expected, found)}"
    )
    assert debris(workdir) == []


class Background(Streamed):
    """The cluster run in a process group of its own, its output read as it comes."""

    def __init__(self, workdir: Path, *arguments: str):
        super().__init__([*CLUSTER_RUN, "--directory", str(workdir), *arguments, *CLUSTER_TARGETS])

    def wait(self) -> Run:
        try:
            self.process.wait(timeout=TIMEOUT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            self.reader.join(timeout=60)
        return Run("".join(self.lines), 0.0)


def slurm_state(slurm_id: str) -> str:
    result = subprocess.run(
        ["squeue", "-h", "-t", "all", "-j", slurm_id, "-o", "%T"], capture_output=True, text=True, timeout=30
    )
    return result.stdout.strip()


def test_a_cancelled_job_is_finished_by_rerunning_and_nothing_is_lost(cluster_run, local_run):
    """A moments table (a target that no other job reads) is deleted; the run that
    remakes it loses its job to scancel while it runs (with --retries 0: the profile's one
    retry would resubmit it within the run); the same command again finishes the work."""
    workdir, _, made = cluster_run
    _, expected = local_run
    expected = made_by(CLUSTER_TARGETS, expected, made)
    target = workdir / "results" / "moments" / "nations" / "moments.tsv"
    target.unlink()
    started = time.monotonic()
    # what the deleted file's absence calls for: of the cluster's targets none reads a
    # moments table (in the whole DAG only the scorecard does)
    planned = {"moments_table"}

    background = Background(workdir, "--retries", "0")
    deadline = time.monotonic() + TIMEOUT
    while True:
        output = "".join(background.lines)
        assert time.monotonic() < deadline and background.process.poll() is None, output[-3000:]
        found = re.search(
            r"^Job \d+ has been submitted with SLURM jobid (\d+) \(log: \S*rule_moments_table/",
            output,
            flags=re.M,
        )
        if found and slurm_state(found.group(1)) == "RUNNING":
            break
        time.sleep(0.1)
    slurm_id = found.group(1)
    subprocess.run(["scancel", slurm_id], check=True, timeout=30)
    cancelled = background.wait()
    assert background.process.returncode != 0, cancelled.output[-3000:]
    assert re.search(rf"SLURM-job '{slurm_id}' failed, SLURM status is: 'CANCELLED'", cancelled.output), (
        cancelled.output[-3000:]
    )
    assert scontrol(slurm_id)["JobState"] == "CANCELLED"
    assert {job.rule for job in cancelled.jobs().values()} <= planned
    assert not target.exists()

    rerun = snakemake(workdir)
    print(f"scancel and rerun: {time.monotonic() - started:.1f} s")
    # the rerun remade the deleted file, and nothing else
    assert {job.rule for job in rerun.jobs().values()} == planned, rerun.output[-3000:]
    assert set(rerun.submissions()) == {jobid for jobid, job in rerun.jobs().items() if not job.local}
    assert debris(workdir) == []
    found = fingerprint(workdir)
    assert not differing(expected, found), (
        f"after scancel and rerun, outputs differ: {differing(expected, found)}"
    )
