"""Cost estimates that order the workflow's long jobs (rule ``priority:`` in the Snakefile).

On 2 cores the wall time of a run approaches job-minutes / 2 only if the longest jobs
start first: a long training that starts last runs alone at the end while the other core
idles. Snakemake starts the ready job of highest priority first (greedy and ILP
schedulers alike), so the rule files give each long job a priority from the estimates
here: the classic longest-processing-time-first rule, with a training's estimate raised by
the long jobs that can only start after it (its ranks and the studies' scoring
passes), so that the heads of long chains start first.

The estimates only order jobs; they never change what a job computes. They count
multiply-adds of the arithmetic every job does (scores of every query against every
entity, the loss over that block, a TuckER core or ConvE encoder per query) from what is
known at parse time: the pipeline after the budget (epochs after the cap, batch, dims,
training loop and negatives, inverse triples) and the dataset's sizes. Overheads that are
not arithmetic (the LCWA loss's passes over the score block, L1 distances off BLAS, the IR
pass's run files) enter as per-candidate or per-line constants, each set once from the
measured times of docs/performance.md and the budget comments of config/config.yaml, and
one throughput turns the count into seconds of the 2-core reference machine, so that
trainings and scoring passes compare in one unit. Keep it coarse: a constant that moves a
job past one of similar length changes nothing that matters.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from kgrank.training.hyperparameters import apply_pair_budget, effective_epochs, load_hyperparameters
from kgrank.workflow.config import documented_statistics, pair_budget
from kgrank.workflow.remembered import remembered

# Multiply-add equivalents per second of a job on the reference machine (the slower 2-core
# machine of docs/performance.md, commit f3cc087): not a hardware rate but the one scale
# that turns the counts below into seconds, fitted so that the five trainings whose times
# docs/studies/paper.md and docs/studies/ir.md give (FB15k-237 TuckER 1,176 s, ConvE 691,
# RESCAL 374, DistMult 210; WN18RR TuckER 966) sum to their measured 3,417 s.
MULTIPLY_ADDS_PER_SECOND = 1e11
# A training step's backward pass costs about two forward passes.
TRAINING_PASSES = 3
# An LCWA step of the 1-N step (kgrank.training.step) against its floor, the bare matrix
# products of scores and gradients: the loss over the batch x entities block, batch norms,
# dropouts and gathers. Measured per family by benchmarks/training.py on FB15k-237
# (docs/performance.md, commit f3cc087); ConvE, not measured there, and any other family
# take the middle of that range.
LCWA_STEP_OVER_FLOOR = {
    "transe": 1.22,
    "rotate": 2.05,
    "distmult": 1.06,
    "complex": 1.23,
    "rescal": 3.43,
    "tucker": 4.87,
}
DEFAULT_STEP_OVER_FLOOR = 2.0
# An sLCWA step scores each triple through gathers and elementwise products, which are
# bound by memory, not by arithmetic: per multiply-add of the interaction it costs about
# this many of a matrix product (from the WN18RR epochs measured in config/config.yaml's
# budget comments: ComplEx 6.6 s, RotatE 15 s, TransE 53 s; this gives 6.7, 6.5 and 49).
SLCWA_COST_PER_WIDTH = 500
# Per (query, candidate) when ranking: filtering the known answers and comparing with the
# true score, elementwise passes over the score block (from benchmarks/ranks.py: kgrank's
# DistMult and ComplEx rankings take 3-4x their matrix products; WN18RR ComplEx's measured
# validation, about 5 s, gives the same).
RANKING_PER_CANDIDATE = 500
# L1 distances (TransE with scoring_fct_norm 1) run through torch's cdist, not BLAS: per
# dimension about as slow as this many multiply-adds of a matrix product (the L1 floor of
# benchmarks/training.py against DistMult's).
L1_COST_PER_DIMENSION = 6
# Seconds every job pays to start (Python, torch and PyKEEN imports, reading the dataset).
STARTUP_SECONDS = 10.0


@dataclass(frozen=True)
class DatasetSize:
    """What a cost estimate needs of a dataset: entities and triples per split."""

    entities: int
    train: int
    valid: int
    test: int


@dataclass(frozen=True)
class ScoreWidth:
    """Multiply-adds of one score: ``per_query`` once per (head, relation) query (a TuckER
    core product, a ConvE encoder), ``per_candidate`` per entity scored against it."""

    per_query: float
    per_candidate: float


def dataset_size(name: str, stats_path: str | Path) -> DatasetSize | None:
    """A dataset's sizes before any job: from its prepared ``stats.json``, else from the
    statistics PyKEEN documents for a dataset of that name (no download; a local archive of
    FB15k-237 or WN18RR holds the same splits, and for an estimate a near match will do);
    None where neither is known."""
    stats_path = Path(stats_path)
    if stats_path.is_file():
        stats = json.loads(stats_path.read_text(encoding="utf-8"))
        triples = stats["triples"]
        return DatasetSize(
            int(stats["entities"]), int(triples["train"]), int(triples["valid"]), int(triples["test"])
        )
    sizes = documented_statistics(name)
    try:
        return DatasetSize(sizes["entities"], sizes["training"], sizes["validation"], sizes["testing"])
    except KeyError:
        return None


@lru_cache(maxsize=64)
def triples_file_size(path: str | Path, header: bool = False) -> tuple[int, int]:
    """(rows, distinct entities among the first and third columns) of a tab-separated
    triples file (labels or integer ids), for data that has no ``stats.json``.

    Kept between Snakemake calls (kgrank.workflow.remembered) for the file's size and modification
    time: the family-tree part's priorities read 95,000 lines (0.2-0.4 s) at every parse."""
    file = Path(path).resolve()
    status = file.stat()
    rows, entities = remembered(
        "triples file size",
        [str(file), header, status.st_size, status.st_mtime_ns],
        lambda: list(_count_triples(file, header)),
    )
    return rows, entities


def _count_triples(path: Path, header: bool) -> tuple[int, int]:
    import pandas as pd

    table = pd.read_csv(path, sep="\t", header=0 if header else None, usecols=[0, 2], dtype=str)
    entities = set(table.iloc[:, 0]) | set(table.iloc[:, 1])
    return len(table), len(entities)


def score_width(pipeline: Mapping[str, Any]) -> ScoreWidth:
    """The multiply-adds of one score of the pipeline's model, per query and per candidate.

    Per family: TransE and DistMult take ``dim`` per candidate (L1 distances cost
    :data:`L1_COST_PER_DIMENSION` times more); ComplEx and RotatE hold ``dim`` complex
    numbers, 2 x dim reals; RESCAL multiplies the head by a dim x dim relation matrix per
    query, then takes ``dim`` per candidate; TuckER contracts its dim x relation_dim x dim
    core with the head and relation per query; ConvE runs its convolution and the fully
    connected layer back to ``dim`` per query. Any other model: ``dim`` per candidate.
    """
    model = str(pipeline["model"]).lower()
    kwargs = pipeline.get("model_kwargs") or {}
    dim = int(kwargs.get("embedding_dim", 200))
    if model == "transe":
        norm = kwargs.get("scoring_fct_norm", 1)
        return ScoreWidth(dim, dim * (L1_COST_PER_DIMENSION if norm == 1 else 1))
    if model in ("complex", "rotate"):
        return ScoreWidth(2 * dim, 2 * dim)
    if model == "rescal":
        return ScoreWidth(dim * dim, dim)
    if model == "tucker":
        relation_dim = int(kwargs.get("relation_dim", dim))
        return ScoreWidth(dim * relation_dim * dim + dim * dim, dim)
    if model == "conve":
        # PyKEEN stacks head and relation into a (2 x height) x width image
        height = 2 * int(kwargs.get("embedding_height", 10))
        width = int(kwargs.get("embedding_width", dim // 10))
        kernel_height = int(kwargs.get("kernel_height", 3))
        kernel_width = int(kwargs.get("kernel_width", 3))
        channels = int(kwargs.get("output_channels", 32))
        feature_map = channels * (height - kernel_height + 1) * (width - kernel_width + 1)
        return ScoreWidth(feature_map * kernel_height * kernel_width + feature_map * dim, dim)
    return ScoreWidth(dim, dim)


def _inverse_factor(pipeline: Mapping[str, Any]) -> int:
    # as kgrank.training.train.create_inverse_triples: inverse triples double the training queries
    return 2 if (pipeline.get("dataset_kwargs") or {}).get("create_inverse_triples", False) else 1


def ranking_multiply_adds(width: ScoreWidth, entities: int, queries: int) -> float:
    """Scoring ``queries`` queries against every entity and ranking the true one."""
    return queries * (width.per_query + entities * (width.per_candidate + RANKING_PER_CANDIDATE))


def training_seconds(
    pipeline: Mapping[str, Any],
    size: DatasetSize,
    epochs: int,
    validation_every: int | None = None,
    validation_queries: int | None = None,
) -> float:
    """Estimated seconds of one training: ``epochs`` epochs of the trained ``pipeline``
    (after the budget) on a dataset of ``size``, plus a validation every
    ``validation_every`` epochs (None: none) ranking ``validation_queries`` queries (by
    default both sides of every validation triple).

    An LCWA epoch scores every training query (head, relation; the inverse ones too) against
    every entity and takes the loss over that block; an sLCWA epoch scores each training
    triple and its ``num_negs_per_pos`` negatives, interaction and all.
    """
    width = score_width(pipeline)
    queries = size.train * _inverse_factor(pipeline)
    if pipeline["training_loop"] == "slcwa":
        negatives = int((pipeline.get("negative_sampler_kwargs") or {}).get("num_negs_per_pos", 1))
        scored = queries * (1 + negatives)
        per_epoch = scored * SLCWA_COST_PER_WIDTH * (width.per_query + width.per_candidate)
    else:
        floor = TRAINING_PASSES * (width.per_query + size.entities * width.per_candidate)
        per_epoch = (
            queries
            * floor
            * LCWA_STEP_OVER_FLOOR.get(str(pipeline["model"]).lower(), DEFAULT_STEP_OVER_FLOOR)
        )
    multiply_adds = epochs * per_epoch
    if validation_every:
        validations = max(epochs // validation_every, 1)
        validated = 2 * size.valid if validation_queries is None else validation_queries
        multiply_adds += validations * ranking_multiply_adds(width, size.entities, validated)
    return STARTUP_SECONDS + multiply_adds / MULTIPLY_ADDS_PER_SECOND


def ranking_seconds(
    pipeline: Mapping[str, Any], size: DatasetSize, passes: int = 1, multiply_adds_per_query: float = 0.0
) -> float:
    """Estimated seconds of a job that scores and ranks both sides of every test triple
    ``passes`` times (the ranks job: once), with ``multiply_adds_per_query`` more work per
    query and pass in multiply-add equivalents (a study's hook: what its pass writes)."""
    queries = 2 * size.test
    per_pass = (
        ranking_multiply_adds(score_width(pipeline), size.entities, queries)
        + queries * multiply_adds_per_query
    )
    return STARTUP_SECONDS + passes * per_pass / MULTIPLY_ADDS_PER_SECOND


@dataclass(frozen=True)
class TrainedPair:
    """A (dataset, model) pair as trained: the pipeline after the budget, its epochs after
    the cap and its validation frequency (None without early stopping)."""

    pipeline: dict[str, Any]
    epochs: int
    validation_every: int | None


def trained_pair(
    hyperparameters_path: str | Path, budget: Mapping[str, Any], dataset: str, model: str
) -> TrainedPair:
    """Resolve a pair as ``kgrank train`` will train it: its hyperparameter file with the
    config's budget for the pair applied (as workflow/rules/common.smk passes it)."""
    pipeline = load_hyperparameters(hyperparameters_path)["pipeline"]
    resolved = pair_budget(budget, dataset, model)
    trained = apply_pair_budget(pipeline, resolved)
    epochs = effective_epochs(trained, resolved["max_epochs"])
    stopping = resolved["early_stopping"]
    return TrainedPair(trained, epochs, None if stopping is None else int(stopping["frequency"]))


def pair_training_seconds(pair: TrainedPair, size: DatasetSize) -> float:
    """Estimated seconds of one workflow training."""
    return training_seconds(pair.pipeline, size, pair.epochs, pair.validation_every)


def priority(seconds: float | Sequence[float]) -> int:
    """A rule priority from estimated seconds (summed when several): a positive integer,
    so that every estimated job starts before the unestimated ones at Snakemake's default
    priority 0, and integer steps outweigh the ILP scheduler's core-load term."""
    total = sum(seconds) if isinstance(seconds, Sequence) else seconds
    return max(int(math.ceil(total)), 1)
