"""The `ir` study's settings as the workflow reads them (no torch: the rule file imports it)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from kgrank.errors import KgrankInputError
from kgrank.workflow.parts import RESCORES_MODEL
from kgrank.workflow.scheduling import DatasetSize, ranking_seconds

# The study's hook for systems from outside (kgrank.studies.external_parts): each part, None
# when an external system joins it, else why it does not.
EVERY_PART = "every part"
EXTERNAL_PARTS: dict[str, str | None] = {
    EVERY_PART: RESCORES_MODEL,
}

# The evaluation sets that get TREC files, the registry's micro metrics and a row in the
# systems table: FB-Test-O, FB-Test-S and FB-Test-S-C (the depth sets feed the
# label-sparsity analysis only).
MAIN_EVALUATIONS = ("test", "sample", "pooled")
# Stability and discriminative power: the full test set and the relabelled sample, as in
# the paper; datasets without kgc-sparsity files have their test split only.
ANALYSED_EVALUATIONS = ("test", "pooled")


def exported_evaluations(dataset: str, study_dataset: str) -> tuple[str, ...]:
    """The evaluation sets of ``dataset`` that get TREC files and micro metrics."""
    return MAIN_EVALUATIONS if dataset == study_dataset else ("test",)


def stability_evaluations(dataset: str, study_dataset: str) -> tuple[str, ...]:
    """The evaluation sets of ``dataset`` whose rankings are subsampled and tested."""
    return ANALYSED_EVALUATIONS if dataset == study_dataset else ("test",)


def check_settings(settings: Mapping[str, Any], trained: Iterable[str], data_dir: Path, source: str) -> None:
    """Refuse, before any job runs, settings that name an untrained dataset or a missing folder
    (``data_dir``: the settings' folder as the workflow resolves it)."""
    trained = list(trained)
    for key, names in (("dataset", [settings["dataset"]]), ("other_datasets", settings["other_datasets"])):
        for name in names:
            if name not in trained:
                raise KgrankInputError(
                    f"{source}: key studies.ir.{key}: {name!r} is not a trained dataset of `datasets` "
                    f"({', '.join(trained)}); add it there or name another"
                )
    if settings["dataset"] in settings["other_datasets"]:
        raise KgrankInputError(
            f"{source}: key studies.ir.other_datasets: {settings['dataset']!r} is the study's dataset "
            "already; remove it there"
        )
    folder = Path(data_dir)
    if not (folder / "FB-Test-S-C").is_dir():
        raise KgrankInputError(
            f"{source}: key studies.ir.data_dir: {folder} holds no FB-Test-S-C folder; point it at the "
            "kgc-sparsity folder (../shared/data/kgc-sparsity)"
        )


def dataset_archive(datasets: Mapping[str, Any], dataset: str) -> list[str]:
    """The local archive of ``dataset`` as a rule input (empty for a PyKEEN source)."""
    source = datasets.get(dataset, {})
    return [source["archive"]] if source.get("source") == "archive" else []


def raw_test_argument(datasets: Mapping[str, Any], dataset: str) -> str:
    """The raw test file FB-Test-S was drawn from: the dataset's archive, or PyKEEN's copy."""
    archive = dataset_archive(datasets, dataset)
    return f"--raw-test {archive[0]}" if archive else f"--raw-test pykeen:{dataset}"


def kgc_files(data_dir: str | Path) -> list[str]:
    """Every file of the kgc-sparsity folder, as rule inputs: a changed file remakes the study."""
    return sorted(str(path) for path in Path(data_dir).rglob("*.txt"))


# The filtering protocols of the study, the paper's first (the default everywhere a single
# one is shown). `paper` (Zhou et al. 2022, Section 2): the known triples of every split but
# the one the evaluation sets are drawn from (train, valid) plus the evaluated set's own
# answers, so a test answer that a sparse set (FB-Test-S) lacks stays a candidate: an
# unlabelled negative. `all-known`: every known triple (train, valid, test) for every set,
# kgrank's filter before issue 32, under which those answers are removed instead.
PAPER = "paper"
ALL_KNOWN = "all-known"
PROTOCOLS = (PAPER, ALL_KNOWN)
# The pass, per query: its run file lines (TREC text, run_depth per query and protocol), in
# multiply-add equivalents per line (kgrank.workflow.scheduling's unit). Measured: 280-307 s per
# FB15k-237 system whatever its scoring width and 51-108 s per WN18RR one (commit f3cc087),
# so the lines, not the scores, dominate.
RUN_LINE_COST = 3.4e5


def pass_seconds(pipeline: Mapping[str, Any], size: DatasetSize, run_depth: int) -> float:
    """Estimated seconds of the study's scoring pass over a dataset's test queries (the
    workflow's scheduling hook): every query scored and ranked under both protocols, and
    ``run_depth`` run file lines each."""
    return ranking_seconds(pipeline, size, len(PROTOCOLS), run_depth * RUN_LINE_COST)


def scorecard_made(path: str, datasets: Iterable[str], study_dataset: str) -> bool:
    """Whether the workflow writes ``path`` (under results/ir/) for the study's ``datasets``:
    the sparsity, systems, counts and divergences tables only for the study's own dataset."""
    parts = path.split("/")
    if len(parts) <= 2:
        return True
    if parts[1] not in datasets:
        return False
    own_dataset_only = ("sparsity.tsv", "systems.tsv", "counts.tsv", "divergences.tsv")
    return parts[2] not in own_dataset_only or parts[1] == study_dataset


# the split every evaluation set of the study is drawn from (FB-Test-O, -S, -S-C, depths)
EVALUATED_SPLIT = "test"


def protocol_filter_splits(filter_splits: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The known splits each protocol filters (before the evaluated set's own answers):
    `all-known` the configured ``filter_splits``, `paper` the same without the test split."""
    splits = tuple(filter_splits)
    return {PAPER: tuple(split for split in splits if split != EVALUATED_SPLIT), ALL_KNOWN: splits}
