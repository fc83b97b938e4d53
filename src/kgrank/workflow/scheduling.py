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
measured times of docs/performance.md and of the default run of commit 40f75c6, and one
throughput turns the count into seconds of that run's 2-core machine, so that trainings
and scoring passes compare in one unit. Keep it coarse: a constant that moves a
job past one of similar length changes nothing that matters.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

from kgrank.training.hyperparameters import apply_pair_budget, effective_epochs, load_hyperparameters
from kgrank.workflow.config import documented_statistics, pair_budget
from kgrank.workflow.remembered import remembered

# Multiply-add equivalents per second of a job on the reference machine (the 2-core
# machine of 2026-11-29 in docs/performance.md, that of the default run of commit 40f75c6):
# not a hardware rate but the one scale that turns the counts below into seconds, fitted
# so that the six LCWA trainings of that run on FB15k-237 and WN18RR (its
# results/benchmarks/train: TuckER 420 s and 809, ConvE 260, RESCAL 211, ComplEx 198,
# DistMult 105) sum to their measured 2,003 s (the fit: 6.07e10).
MULTIPLY_ADDS_PER_SECOND = 6e10
# A training step's backward pass costs about two forward passes.
TRAINING_PASSES = 3
# An LCWA step of the 1-N step (kgrank.training.step) against its floor, the bare matrix
# products of scores and gradients: the loss over the batch x entities block, batch norms,
# dropouts and gathers. Measured per family by benchmarks/training.py on the reference
# machine (docs/performance.md, commit 80e3f23), the mean of FB15k-237's and WN18RR's;
# ConvE, not measured there, and any other family take the middle of that range.
LCWA_STEP_OVER_FLOOR = {
    "transe": 1.06,
    "rotate": 3.22,
    "distmult": 1.53,
    "complex": 1.84,
    "rescal": 3.44,
    "tucker": 2.95,
}
DEFAULT_STEP_OVER_FLOOR = 2.25
# An sLCWA step scores each triple through gathers and elementwise products (an L1
# distance too: no cdist), which are bound by memory, not by arithmetic: per multiply-add
# of the interaction it costs about this many of a matrix product, fitted so that the
# seven sLCWA trainings of the run of 40f75c6 (FB15k-237 TransE 398 s and RotatE 176,
# WN18RR TransE 284, ComplEx 135 and RotatE 65, Kinships RotatE 194, Nations RotatE 50)
# sum to their measured 1,302 s (the fit: 602).
SLCWA_COST_PER_WIDTH = 600
# Per (query, candidate) when ranking: filtering the known answers and comparing with the
# true score, elementwise passes over the score block (from benchmarks/ranks.py: kgrank's
# DistMult and ComplEx rankings take 3-4x their matrix products; WN18RR ComplEx's
# validations in the run of 40f75c6, 2.2 s each, give about the same: 2.4 s).
RANKING_PER_CANDIDATE = 500
# L1 distances (TransE with scoring_fct_norm 1) run through torch's cdist, not BLAS: per
# dimension about as slow as this many multiply-adds of a matrix product (the L1 floor of
# benchmarks/training.py against DistMult's).
L1_COST_PER_DIMENSION = 6
# Seconds every job pays to start (Python, torch and PyKEEN imports, reading the dataset).
STARTUP_SECONDS = 10.0
# (distinct (head, relation) pairs, distinct (tail, relation) pairs, triples) of training
# splits, for the estimates before a dataset is prepared (a fresh clone reads FB15k-237
# and WN18RR from archives, which PyKEEN's documented statistics stand in for): counted
# with pandas' drop_duplicates in results/data/<dataset>/train.tsv of the default run of
# commit 40f75c6 (kgrank's prepared splits; their triple counts are PyKEEN's). The LCWA
# queries are 0.275 of the doubled triples on FB15k-237 and 0.596 on WN18RR: counted as
# triples, an LCWA epoch would come out 3.6x too long on FB15k-237 and 1.7x on WN18RR.
MEASURED_TRAIN_QUERIES = {
    "fb15k237": (93_372, 56_317, 272_115),
    "wn18rr": (62_547, 40_962, 86_835),
    "nations": (471, 438, 1_592),
    "kinships": (1_689, 1_442, 8_544),
}
# The share of the training triples taken as distinct (head, relation) pairs, and as many
# (tail, relation) pairs, where nothing is counted (the family-tree study's graphs): about
# the median, 0.356, of those four splits and the family-tree study's four training
# graphs, each split's two sides averaged (0.18 on Kinships to 0.60 on WN18RR; the
# family-tree graphs 0.35-0.42).
DEFAULT_QUERY_SHARE = 0.35


@dataclass(frozen=True)
class TrainQueries:
    """The queries of an LCWA epoch on a training split: its distinct (head, relation)
    pairs, and its distinct (tail, relation) pairs, which inverse triples add (PyKEEN's LCWA
    loop and kgrank's 1-N step batch each pair once, with all its answers as labels)."""

    head_relation: int
    tail_relation: int


@dataclass(frozen=True)
class DatasetSize:
    """What a cost estimate needs of a dataset: entities and triples per split, and the
    training split's LCWA queries where they are known (None: not counted; an estimate
    then takes :data:`DEFAULT_QUERY_SHARE` of the training triples)."""

    entities: int
    train: int
    valid: int
    test: int
    train_queries: TrainQueries | None = None

    def lcwa_queries(self, inverse_triples: bool) -> float:
        """The queries of one LCWA epoch, with or without inverse triples."""
        if self.train_queries is None:
            return self.train * DEFAULT_QUERY_SHARE * (2 if inverse_triples else 1)
        queries = self.train_queries
        return queries.head_relation + (queries.tail_relation if inverse_triples else 0)


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
    None where neither is known.

    The LCWA queries come from ``stats.json`` too; one written before it counted them
    has the training split beside it, counted here instead. Before the dataset is prepared
    they follow from the documented training triples for the datasets of
    :data:`MEASURED_TRAIN_QUERIES` (else they are unknown)."""
    stats_path = Path(stats_path)
    if stats_path.is_file():
        stats = json.loads(stats_path.read_text(encoding="utf-8"))
        triples = stats["triples"]
        counted = stats.get("train_queries")
        if counted is not None:
            queries = TrainQueries(int(counted["head_relation"]), int(counted["tail_relation"]))
        else:
            train_file = stats_path.parent / "train.tsv"
            queries = triples_file_queries(str(train_file)) if train_file.is_file() else None
        return DatasetSize(
            int(stats["entities"]),
            int(triples["train"]),
            int(triples["valid"]),
            int(triples["test"]),
            queries,
        )
    sizes = documented_statistics(name)
    try:
        size = DatasetSize(sizes["entities"], sizes["training"], sizes["validation"], sizes["testing"])
    except KeyError:
        return None
    return replace(size, train_queries=documented_queries(name, size.train))


def documented_queries(name: str, train: int) -> TrainQueries | None:
    """The LCWA queries of a dataset not prepared yet, with ``train`` training triples: the
    shares of them counted on its prepared split (:data:`MEASURED_TRAIN_QUERIES`); None
    for a dataset not counted there."""
    key = "".join(character for character in name.lower() if character.isalnum())
    if key not in MEASURED_TRAIN_QUERIES:
        return None
    head_relation, tail_relation, measured_train = MEASURED_TRAIN_QUERIES[key]
    return TrainQueries(
        round(train * head_relation / measured_train), round(train * tail_relation / measured_train)
    )


@lru_cache(maxsize=64)
def triples_file_size(path: str | Path, header: bool = False) -> tuple[int, int]:
    """(rows, distinct entities among the first and third columns) of a tab-separated
    triples file (labels or integer ids), for data that has no ``stats.json``.

    Kept between Snakemake calls (kgrank.workflow.remembered) for the file's size and modification
    time: the family-tree part's priorities read 95,000 lines (0.2-0.4 s) at every parse."""
    rows, entities, _, _ = _file_counts(path, header)
    return rows, entities


def triples_file_queries(path: str | Path, header: bool = False) -> TrainQueries:
    """The LCWA queries of a tab-separated triples file taken as a training split, kept
    as :func:`triples_file_size` keeps its counts (one reading gives both)."""
    _, _, head_relation, tail_relation = _file_counts(path, header)
    return TrainQueries(head_relation, tail_relation)


def _file_counts(path: str | Path, header: bool) -> list[int]:
    file = Path(path).resolve()
    status = file.stat()
    return remembered(
        "triples file counts",
        [str(file), header, status.st_size, status.st_mtime_ns],
        lambda: list(_count_triples(file, header)),
    )


def _count_triples(path: Path, header: bool) -> tuple[int, int, int, int]:
    """Rows, distinct entities, distinct (head, relation) and (tail, relation) pairs of the
    first three columns, counted as stats.json counts them. Read by pandas, not
    read_triples: a family-tree answer file carries a fourth column."""
    import pandas as pd

    from kgrank.data.datasets import entity_count, lcwa_queries

    # every label as written: no quoting, no "NA" read as missing (kgrank's own reader's rules)
    triples = pd.read_csv(
        path,
        sep="\t",
        header=0 if header else None,
        usecols=[0, 1, 2],
        dtype=str,
        quoting=csv.QUOTE_NONE,
        keep_default_na=False,
        na_filter=False,
    ).to_numpy()
    queries = lcwa_queries(triples)
    return len(triples), entity_count(triples), queries["head_relation"], queries["tail_relation"]


def score_width(pipeline: Mapping[str, Any], against_all_entities: bool = True) -> ScoreWidth:
    """The multiply-adds of one score of the pipeline's model, per query and per candidate.

    Per family: TransE and DistMult take ``dim`` per candidate (L1 distances against all
    entities cost :data:`L1_COST_PER_DIMENSION` times more; not so with
    ``against_all_entities`` False, an sLCWA triple's own distance, elementwise like its
    other scores); ComplEx and RotatE hold ``dim`` complex numbers, 2 x dim reals; RESCAL
    multiplies the head by a dim x dim relation matrix per query, then takes ``dim`` per
    candidate; TuckER contracts its dim x relation_dim x dim core with the head and
    relation per query; ConvE runs its convolution and the fully connected layer back to
    ``dim`` per query. Any other model: ``dim`` per candidate.
    """
    model = str(pipeline["model"]).lower()
    kwargs = pipeline.get("model_kwargs") or {}
    dim = int(kwargs.get("embedding_dim", 200))
    if model == "transe":
        norm = kwargs.get("scoring_fct_norm", 1)
        cdist = norm == 1 and against_all_entities
        return ScoreWidth(dim, dim * (L1_COST_PER_DIMENSION if cdist else 1))
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


def _creates_inverse_triples(pipeline: Mapping[str, Any]) -> bool:
    # as kgrank.training.train.create_inverse_triples
    return bool((pipeline.get("dataset_kwargs") or {}).get("create_inverse_triples", False))


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

    An LCWA epoch scores every training query (each distinct head and relation; with
    inverse triples each distinct tail and relation too: :meth:`DatasetSize.lcwa_queries`)
    against every entity and takes the loss over that block; an sLCWA epoch scores each
    training triple (inverse ones too) and its ``num_negs_per_pos`` negatives, interaction
    and all.
    """
    width = score_width(pipeline)
    inverse_triples = _creates_inverse_triples(pipeline)
    if pipeline["training_loop"] == "slcwa":
        negatives = int((pipeline.get("negative_sampler_kwargs") or {}).get("num_negs_per_pos", 1))
        scored = size.train * (2 if inverse_triples else 1) * (1 + negatives)
        own = score_width(pipeline, against_all_entities=False)
        per_epoch = scored * SLCWA_COST_PER_WIDTH * (own.per_query + own.per_candidate)
    else:
        floor = TRAINING_PASSES * (width.per_query + size.entities * width.per_candidate)
        per_epoch = (
            size.lcwa_queries(inverse_triples)
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
