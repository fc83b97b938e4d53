"""Per-triple filtered ranks of the true entity, on both sides, in every rank variant.

optimistic  = 1 + #{candidates scoring strictly higher}
pessimistic = #{candidates scoring at least as high}, the true entity included
realistic   = (optimistic + pessimistic) / 2
random      = a seeded uniform position inside the tie block [optimistic, pessimistic]
num_candidates = candidates left after filtering, the true entity included.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import torch
from tqdm.auto import tqdm

from kgrank.candidates import KnownAnswers
from kgrank.errors import KgrankInputError
from kgrank.rank_table import RANK_TABLE_COLUMNS, SIDES


def _check_ids(batch: np.ndarray, num_entities: int, num_relations: int) -> None:
    bad_entity = (batch[:, [0, 2]] < 0) | (batch[:, [0, 2]] >= num_entities)
    bad_relation = (batch[:, 1] < 0) | (batch[:, 1] >= num_relations)
    if bad_entity.any() or bad_relation.any():
        row = int(np.flatnonzero(bad_entity.any(axis=1) | bad_relation)[0])
        raise KgrankInputError(
            f"test triple {row} has ids {batch[row].tolist()} outside the model's "
            f"{num_entities} entities / {num_relations} relations; rebuild the dataset and retrain"
        )


def ranks_from_scores(
    scores: torch.Tensor, true_entities: torch.Tensor, filter_rows: Any = None, filter_cols: Any = None
) -> dict[str, np.ndarray]:
    """Optimistic and pessimistic ranks and candidate counts from a (batch, entities) score block.

    Filtered candidates are set to NaN in place (the true entity is kept), so they
    compare false with everything and drop out of every count.
    """
    # A row holding a NaN sums to NaN: one pass, no mask allocated; the mask is built only
    # then (a row with both +inf and -inf also sums to NaN, and is no error).
    if torch.isnan(scores.sum(dim=1)).any() and torch.isnan(scores).any():
        row = int(torch.isnan(scores).any(dim=1).nonzero()[0])
        raise KgrankInputError(
            f"the model scored NaN for batch row {row}; it has diverged or its file is corrupt: retrain it"
        )
    batch_size, num_entities = scores.shape
    row_index = torch.arange(batch_size)
    true_scores = scores[row_index, true_entities].clone()
    num_candidates = torch.full((batch_size,), num_entities, dtype=torch.int64)
    if filter_rows is not None and len(filter_rows):
        rows, columns = torch.as_tensor(filter_rows), torch.as_tensor(filter_cols)
        scores[rows, columns] = float("nan")
        scores[row_index, true_entities] = true_scores
        # every known answer but the true entity itself leaves the candidate list
        removed = columns != true_entities[rows]
        num_candidates -= torch.bincount(rows[removed], minlength=batch_size)
    true_column = true_scores.unsqueeze(1)
    optimistic = (scores > true_column).sum(dim=1) + 1
    pessimistic = (scores >= true_column).sum(dim=1)
    return {
        "optimistic": optimistic.numpy(),
        "pessimistic": pessimistic.numpy(),
        "num_candidates": num_candidates.numpy(),
    }


def random_tie_ranks(optimistic: np.ndarray, pessimistic: np.ndarray, seed: int) -> np.ndarray:
    """A uniform position in each tie block, drawn once per row in table order (seeded)."""
    generator = np.random.default_rng(seed)
    return generator.integers(optimistic, pessimistic, endpoint=True).astype(np.int64)


def _is_out_of_memory(error: BaseException) -> bool:
    message = str(error)
    return isinstance(error, (MemoryError, torch.OutOfMemoryError)) or (
        isinstance(error, RuntimeError) and ("out of memory" in message or "can't allocate memory" in message)
    )


def _sampled_columns(
    allowed: np.ndarray, true_entity: int, num_samples: int, generator: np.random.Generator
) -> np.ndarray:
    """Up to ``num_samples`` distinct columns among ``allowed`` (true entity excluded), uniformly."""
    allowed[true_entity] = False
    candidates = np.flatnonzero(allowed)
    if len(candidates) <= num_samples:
        return candidates
    return generator.choice(candidates, size=num_samples, replace=False)


def sampled_ranks(
    scores: torch.Tensor,
    true_entities: torch.Tensor,
    triple_ids: np.ndarray,
    side: str,
    num_samples: int,
    seed: int,
) -> dict[str, np.ndarray]:
    """Ranks against ``num_samples`` random unfiltered candidates per row (scores already filtered).

    Each row draws from its own generator seeded by (seed, side, triple id), so the
    candidates do not depend on the batch size or on the order of the batches. A query
    with fewer than ``num_samples`` admissible candidates keeps them all.
    """
    score_array = scores.numpy()
    admissible = ~np.isnan(score_array)
    side_index = SIDES.index(side)
    columns: dict[str, list[int]] = {"optimistic": [], "pessimistic": [], "num_candidates": []}
    for row, (true_entity, triple_id) in enumerate(
        zip(true_entities.tolist(), triple_ids.tolist(), strict=True)
    ):
        generator = np.random.default_rng([seed, side_index, triple_id])
        chosen = _sampled_columns(admissible[row], true_entity, num_samples, generator)
        true_score = score_array[row, true_entity]
        others = score_array[row, chosen]
        columns["optimistic"].append(1 + int((others > true_score).sum()))
        columns["pessimistic"].append(1 + int((others >= true_score).sum()))
        columns["num_candidates"].append(1 + len(chosen))
    return {name: np.asarray(values, dtype=np.int64) for name, values in columns.items()}


@torch.inference_mode()
def compute_ranks(
    model: Any,
    test_triples: torch.Tensor,
    known: KnownAnswers,
    *,
    batch_size: int = 256,
    seed: int = 0,
    progress: bool = True,
    fast: bool = True,
    sampled_candidates: int | None = None,
) -> pd.DataFrame:
    """Rank every test triple on both sides; see the module docstring for the rank variants.

    Scores come from :class:`kgrank.scoring.Scorer` (a product form for the common model
    families, ``model.predict`` otherwise, or always with ``fast=False``). A batch that
    runs out of memory is retried at half the size. With ``sampled_candidates`` = k each
    true entity is ranked against k random candidates that are not known answers
    (``num_candidates`` = k + 1) instead of against every entity; a task with fewer than k
    such candidates keeps them all, and a k of at least N - 1 (N entities), with which
    every task would, is refused.
    """
    from kgrank.scoring import Scorer

    if batch_size <= 0:
        raise KgrankInputError(f"batch size must be positive, got {batch_size}; pass --batch-size 1 or more")
    if sampled_candidates is not None and sampled_candidates <= 0:
        raise KgrankInputError(
            f"sampled candidates must be positive, got {sampled_candidates}; "
            "pass --sampled-candidates 1 or more"
        )
    if sampled_candidates is not None and sampled_candidates >= known.num_entities - 1:
        # every task would keep all its candidates: the full ranking under another name
        raise KgrankInputError(
            f"sampled candidates {sampled_candidates}: the dataset has {known.num_entities} entities, so no "
            f"task has more than {known.num_entities - 1} candidates besides its true entity and every one "
            f"would keep all of them (the full ranking); pass --sampled-candidates below "
            f"{known.num_entities - 1}"
        )
    model.eval()  # dropout off, batch norm frozen
    mapped = np.asarray(test_triples, dtype=np.int64)
    _check_ids(mapped, known.num_entities, known.num_relations)
    scorer = Scorer(model, fast=fast)
    device = next(model.parameters()).device
    columns: dict[str, list[np.ndarray]] = {"optimistic": [], "pessimistic": [], "num_candidates": []}
    bar = tqdm(
        total=len(SIDES) * len(mapped), desc=f"ranking ({scorer.family})", unit="triple", disable=not progress
    )
    for side in SIDES:
        start = 0
        while start < len(mapped):
            batch = mapped[start : start + batch_size]
            try:
                scores = scorer(torch.as_tensor(batch, device=device), side).cpu()
            except (RuntimeError, MemoryError) as error:
                if not _is_out_of_memory(error) or batch_size == 1:
                    raise
                batch_size = max(1, batch_size // 2)
                bar.write(f"out of memory: retrying with batch size {batch_size}")
                continue
            true_entities = torch.as_tensor(batch[:, 0] if side == "head" else batch[:, 2])
            filter_rows, filter_cols = known.answers(side, batch)
            ranks = ranks_from_scores(scores, true_entities, filter_rows, filter_cols)
            if sampled_candidates is not None:
                triple_ids = np.arange(start, start + len(batch))
                ranks = sampled_ranks(scores, true_entities, triple_ids, side, sampled_candidates, seed)
            for name, values in ranks.items():
                columns[name].append(values)
            start += len(batch)
            bar.update(len(batch))
    bar.close()
    optimistic, pessimistic, num_candidates = (
        np.concatenate(columns[name]).astype(np.int64)
        for name in ("optimistic", "pessimistic", "num_candidates")
    )
    table = pd.DataFrame(
        {
            "triple_id": np.tile(np.arange(len(mapped)), len(SIDES)),
            "head": np.tile(mapped[:, 0], len(SIDES)),
            "relation": np.tile(mapped[:, 1], len(SIDES)),
            "tail": np.tile(mapped[:, 2], len(SIDES)),
            "side": np.repeat(np.array(SIDES), len(mapped)),
            "optimistic": optimistic,
            "realistic": (optimistic + pessimistic) / 2.0,
            "pessimistic": pessimistic,
            "random": random_tie_ranks(optimistic, pessimistic, seed),
            "num_candidates": num_candidates,
        }
    )
    return table[list(RANK_TABLE_COLUMNS)]
