"""The entity-alignment protocol transferred to link prediction.

In Berrendorf et al.'s entity-alignment experiment the candidates of a test alignment
are only the entities that occur in the evaluated test alignments, so a smaller test
set also means fewer candidates. Here: a random share of the test triples (seeded), and
for each of its tasks the candidates are the entities occurring as head or tail in that
share, filtered as usual (the other known answers leave, the true one stays; it always
occurs in its own triple).

Every test triple is scored once against all entities; every subset's counts then come
from the same scores through one product with the subsets' entity masks, so the cost is
one pass of the rank stage whatever the number of fractions and seeds.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import torch

from kgrank.data.rank_table import SIDES
from kgrank.engine.candidates import KnownAnswers
from kgrank.engine.score_pass import ScoreBlock, score_pass
from kgrank.evaluation.stats import seed_stream
from kgrank.studies.ambiguity.inputs import SUBSET_COLUMNS


@dataclass(frozen=True)
class Subset:
    """One random share of the test triples and the entities occurring in it."""

    fraction: float
    replicate: int
    rows: np.ndarray  # indices into the test triples, sorted
    entities: np.ndarray  # boolean mask over all entities


def subset_plan(
    test_triples: np.ndarray,
    num_entities: int,
    fractions: Sequence[float],
    repetitions: int,
    seed: int | Sequence[int],
) -> list[Subset]:
    """``repetitions`` random subsets per fraction (one for the whole test set)."""
    test_triples = np.asarray(test_triples, dtype=np.int64)
    total = len(test_triples)
    plan = []
    for fraction in fractions:
        size = max(1, round(fraction * total))
        for replicate in range(repetitions if size < total else 1):
            generator = seed_stream(seed, round(fraction * 10_000), replicate)
            rows = np.sort(generator.choice(total, size=size, replace=False))
            entities = np.zeros(num_entities, dtype=bool)
            entities[test_triples[rows][:, [0, 2]].ravel()] = True
            plan.append(Subset(float(fraction), replicate, rows, entities))
    return plan


def restricted_counts(
    filtered_scores: torch.Tensor, true_entities: torch.Tensor, masks: torch.Tensor
) -> dict[str, torch.Tensor]:
    """(batch, subsets) counts of candidates above, at and admissible to each row's true
    score among each subset's entities. ``filtered_scores`` has NaN at filtered
    candidates (they compare false with everything); ``masks`` is (entities, subsets)."""
    rows = torch.arange(len(true_entities))
    true_scores = filtered_scores[rows, true_entities].unsqueeze(1)
    masks = masks.to(filtered_scores.dtype)
    # float32 sums of 0/1 are exact up to 2**24 entities
    return {
        "above": ((filtered_scores > true_scores).to(masks.dtype) @ masks).round().long(),
        "at_or_above": ((filtered_scores >= true_scores).to(masks.dtype) @ masks).round().long(),
        "admissible": ((~torch.isnan(filtered_scores)).to(masks.dtype) @ masks).round().long(),
    }


def subset_rank_table(
    model: Any,
    test_triples: np.ndarray,
    known: KnownAnswers,
    plan: Sequence[Subset],
    *,
    batch_size: int = 256,
    progress: bool = False,
) -> pd.DataFrame:
    """Ranks of every task of every subset with the candidates restricted to the
    subset's entities (``SUBSET_COLUMNS``), from one :func:`kgrank.engine.score_pass.score_pass`
    of ``model`` (a PyKEEN model, or any score function ``(triples, side) -> scores``)
    over the test triples, filtered by ``known`` as the rank engine filters."""
    test_triples = np.asarray(test_triples, dtype=np.int64)
    masks = torch.as_tensor(np.stack([subset.entities for subset in plan], axis=1))
    counts: dict[str, dict[str, list[torch.Tensor]]] = {side: {} for side in SIDES}

    def count(block: ScoreBlock) -> None:
        scores, _ = block.filtered()
        for name, values in restricted_counts(scores, block.true_entities, masks).items():
            counts[block.side].setdefault(name, []).append(values)

    score_pass(
        model,
        test_triples,
        [count],
        known=known,
        batch_size=batch_size,
        progress=progress,
        description="scoring test subsets",
    )
    frames = []
    for side in SIDES:
        above, at_or_above, admissible = (
            torch.cat(counts[side][name]).numpy() for name in ("above", "at_or_above", "admissible")
        )
        for column, subset in enumerate(plan):
            rows = subset.rows
            frames.append(
                pd.DataFrame(
                    {
                        "fraction": subset.fraction,
                        "replicate": subset.replicate,
                        "triple_id": rows,
                        "side": side,
                        "optimistic": above[rows, column] + 1,
                        "pessimistic": at_or_above[rows, column],
                        "num_candidates": admissible[rows, column],
                    }
                )
            )
    return pd.concat(frames, ignore_index=True)[list(SUBSET_COLUMNS)]
