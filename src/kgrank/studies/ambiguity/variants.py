"""Rank definitions: how often optimistic, realistic, pessimistic and non-deterministic
ranks differ, how large the tie blocks are, and what every definition does to the
metrics of trained models and of two scorers that need no training.

The constant scorer gives every candidate the same score, so each task is one tie block
of all N_i candidates: optimistic 1, pessimistic N_i, realistic (N_i + 1)/2, and the
non-deterministic rank a uniform draw from 1..N_i. The uniformly random scorer has no
ties (continuous scores): its rank is uniform on 1..N_i under every definition. Both are
computed from a dataset's test candidate counts N_i alone.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from kgrank.data.rank_table import RANK_COLUMNS
from kgrank.evaluation.metrics import Metric, evaluate_rank_table, hits_at, lookup
from kgrank.evaluation.stats import seed_stream

CONSTANT_SCORER = "constant"
RANDOM_SCORER = "random"


def study_metrics(hits: Sequence[int] = (1, 10)) -> list[Metric]:
    """The metrics the study reports, each with a closed-form expectation and variance:
    MR, MRR and Hits@k (their adjusted indices AMRI, AMRR, AH@k and z-scores follow)."""
    return [
        lookup("arithmetic_mean_rank").metric,
        lookup("inverse_harmonic_mean_rank").metric,
        *(hits_at(k) for k in hits),
    ]


def _scorer_ranks(table: pd.DataFrame, optimistic, realistic, pessimistic, random) -> pd.DataFrame:
    """A rank table with these ranks on the tasks of ``table`` (its side and num_candidates)."""
    return pd.DataFrame(
        {
            "side": table["side"].to_numpy(),
            "optimistic": optimistic,
            "realistic": realistic,
            "pessimistic": pessimistic,
            "random": random,
            "num_candidates": table["num_candidates"].to_numpy(dtype=np.int64),
        }
    )


def constant_scorer_ranks(table: pd.DataFrame, generator: np.random.Generator) -> pd.DataFrame:
    """A rank table of the constant scorer on the tasks of ``table`` (its side and
    num_candidates): every candidate ties with the true one; ``generator`` draws the
    non-deterministic rank."""
    n = table["num_candidates"].to_numpy(dtype=np.int64)
    # random: a uniform position in the one tie block, as kgrank.engine.ranks.random_tie_ranks draws it
    return _scorer_ranks(table, np.ones_like(n), (n + 1) / 2.0, n, generator.integers(1, n, endpoint=True))


def random_scorer_ranks(table: pd.DataFrame, generator: np.random.Generator) -> pd.DataFrame:
    """A rank table of a uniformly random scorer (drawn from ``generator``) on the tasks
    of ``table``: the true entity's position among N_i distinct scores is uniform on
    1..N_i, and with no ties every rank definition gives that position."""
    rank = generator.integers(1, table["num_candidates"].to_numpy(dtype=np.int64), endpoint=True)
    return _scorer_ranks(table, rank, rank.astype(float), rank, rank)


def tie_summary(table: pd.DataFrame) -> dict[str, float]:
    """How often and how far the rank definitions differ on one rank table.

    A task is tied when some other candidate scores exactly as the true one
    (optimistic < pessimistic); then optimistic, realistic and pessimistic all differ,
    and the non-deterministic rank may or may not land on one of them.
    """
    optimistic = table["optimistic"].to_numpy()
    pessimistic = table["pessimistic"].to_numpy()
    realistic = table["realistic"].to_numpy()
    random = table["random"].to_numpy()
    block = pessimistic - optimistic + 1  # candidates in the true one's tie block
    tied = block > 1
    shares = block[tied] / table["num_candidates"].to_numpy()[tied]
    return {
        "tasks": len(table),
        "share_tied": float(tied.mean()),
        "share_random_differs_from_realistic": float((random != realistic).mean()),
        "mean_tie_block": float(block[tied].mean()) if tied.any() else 1.0,
        "median_tie_block": float(np.median(block[tied])) if tied.any() else 1.0,
        "max_tie_block": int(block.max()),
        "mean_block_share_of_candidates": float(shares.mean()) if tied.any() else 0.0,
    }


def evaluate_scorer(ranks: pd.DataFrame, metrics: Sequence[Metric]) -> pd.DataFrame:
    """Every metric and its adjusted variants under each rank definition (tidy: side,
    rank_type, metric, value, expectation, variance, method)."""
    frame = evaluate_rank_table(ranks[["side", *RANK_COLUMNS, "num_candidates"]], metrics)
    return frame[frame["rank_type"].isin(RANK_COLUMNS)]


def variants_table(
    rank_tables: dict[tuple[str, str], pd.DataFrame], metrics: Sequence[Metric], seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(metrics, ties) for every (dataset, model), in the order given, then the two
    baseline scorers on each dataset's test tasks (the tasks of the dataset's first rank
    table: candidate counts are a property of the dataset, not of the model)."""
    metric_frames, tie_rows = [], []
    baselines: dict[str, pd.DataFrame] = {}
    scorers: list[tuple[str, str, pd.DataFrame]] = []
    for (dataset, model), table in rank_tables.items():
        scorers.append((dataset, model, table))
        baselines.setdefault(dataset, table)
    for dataset, table in baselines.items():
        # one stream per dataset, from the config's seed and the dataset's name, so that
        # adding a dataset does not change the draws of another
        scorers.append((dataset, CONSTANT_SCORER, constant_scorer_ranks(table, seed_stream(seed, dataset))))
        scorers.append((dataset, RANDOM_SCORER, random_scorer_ranks(table, seed_stream(seed, dataset, 1))))
    for dataset, scorer, ranks in scorers:
        frame = evaluate_scorer(ranks, metrics)
        frame.insert(0, "scorer", scorer)
        frame.insert(0, "dataset", dataset)
        metric_frames.append(frame)
        tie_rows.append({"dataset": dataset, "scorer": scorer, **tie_summary(ranks)})
    return pd.concat(metric_frames, ignore_index=True), pd.DataFrame(tie_rows)
