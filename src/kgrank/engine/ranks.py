"""Per-triple filtered ranks of the true entity, on both sides, in every rank variant.

optimistic  = 1 + #{candidates scoring strictly higher}
pessimistic = #{candidates scoring at least as high}, the true entity included
realistic   = (optimistic + pessimistic) / 2
random      = a seeded uniform position inside the tie block [optimistic, pessimistic]
num_candidates = candidates left after filtering, the true entity included.
"""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import torch

from kgrank.data.rank_table import RANK_TABLE_COLUMNS, SIDES
from kgrank.engine.candidates import KnownAnswers
from kgrank.engine.score_pass import ScoreBlock, filter_scores, refuse_nan, score_pass
from kgrank.engine.scoring import nonzero_entries
from kgrank.errors import KgrankInputError

if TYPE_CHECKING:
    from kgrank.engine.scoring import NearTies
    from kgrank.engine.ties import Tolerance


# what every rank function here returns, per row of a score block
_RANK_COUNTS = ("optimistic", "pessimistic", "num_candidates")


def ranks_from_scores(
    scores: torch.Tensor, true_entities: torch.Tensor, filter_rows: Any = None, filter_cols: Any = None
) -> dict[str, np.ndarray]:
    """Optimistic and pessimistic ranks and candidate counts from a (batch, entities) score block.

    Filtered candidates are set to NaN in place (the true entity is kept), so they
    compare false with everything and drop out of every count.
    """
    refuse_nan(scores)
    num_candidates = filter_scores(scores, true_entities, filter_rows, filter_cols)
    counted = _counted_ranks(scores, true_entities, num_candidates)
    return {name: values.cpu().numpy() for name, values in counted.items()}


def block_ranks(block: ScoreBlock) -> dict[str, torch.Tensor]:
    """:func:`ranks_from_scores` of a block of :func:`kgrank.engine.score_pass.score_pass` (which
    has refused NaN scores already), filtered by the block's known answers; counted on the
    block's device and left there (the engine moves all of them to the CPU at the end, so
    that a GPU never waits for the CPU between blocks). Near-ties are rescored only in the
    rows that hold one (:func:`_window_ranks`)."""
    scores, num_candidates = block.filtered(on_device=True, settled=False)
    if block.near_ties is None:
        return _counted_ranks(scores, block.true_entities, num_candidates)
    return _window_ranks(scores, block.near_ties, num_candidates)


# relation -> (numpy's comparison, torch's)
_COMPARISONS = {
    ">": (np.greater, torch.gt),
    ">=": (np.greater_equal, torch.ge),
    "<=": (np.less_equal, torch.le),
    "==": (np.equal, torch.eq),
}


def compared(scores: torch.Tensor, thresholds: torch.Tensor, relation: str) -> torch.Tensor:
    """The mask ``scores <relation> thresholds`` (``thresholds``: (rows, 1), one per row).
    On the CPU numpy compares: its broadcast comparison of a (256, 14,541) block with a
    column takes 0.68 ms against torch's 1.24 ms at two threads (torch 2.13; a comparison
    has no rounding, so the mask is the same). A strided block (a view, as the real parts
    of a complex block are) stays with torch, which compares it in 2.0 ms against numpy's
    3.5."""
    numpy_compare, torch_compare = _COMPARISONS[relation]
    if scores.device.type == "cpu" and scores.is_contiguous():
        return torch.from_numpy(numpy_compare(scores.numpy(), thresholds.numpy()))
    return torch_compare(scores, thresholds)


def count_above(scores: torch.Tensor, thresholds: torch.Tensor, inclusive: bool = False) -> torch.Tensor:
    """Per row, how many scores lie above (or at, ``inclusive``) the row's threshold
    (:func:`compared`). The masks are summed as int32: a bool sum to int64 first widens the
    whole block (0.7 ms against 2.7 ms); no count passes 2^31."""
    mask = compared(scores, thresholds, ">=" if inclusive else ">")
    return mask.sum(dim=1, dtype=torch.int32).long()


def _counted_ranks(
    scores: torch.Tensor, true_entities: torch.Tensor, num_candidates: torch.Tensor
) -> dict[str, torch.Tensor]:
    true_entities = torch.as_tensor(true_entities).to(scores.device, torch.int64)
    true_column = scores.gather(1, true_entities.unsqueeze(1))
    optimistic = count_above(scores, true_column) + 1
    pessimistic = count_above(scores, true_column, inclusive=True)
    return {"optimistic": optimistic, "pessimistic": pessimistic, "num_candidates": num_candidates}


def _flags_rows(device: torch.device) -> bool:
    """Whether :func:`_window_ranks` rescores only the rows whose window holds a candidate
    besides the true entity (on the CPU), or every row (on a GPU)."""
    return device.type == "cpu"


def _window_ranks(
    scores: torch.Tensor, near_ties: NearTies, num_candidates: torch.Tensor
) -> dict[str, torch.Tensor]:
    """The ranks of a filtered block of product-form scores whose near-ties are unsettled,
    equal to those of the block settled (:meth:`kgrank.engine.scoring.NearTies.settle`)
    and counted, at the cost of rescoring only the rows that need it.

    Settling rescores the candidates within each row's window around its true score,
    because only those can order otherwise than PyKEEN against it; every candidate above
    the window is above the true entity, every one below it below. So a row whose window
    (:meth:`~kgrank.engine.scoring.NearTies.bounds`, which holds every candidate settling
    rescores) holds its true entity alone ranks it 1 + #{above the window}, both
    optimistic and pessimistic: the two counts that rank any block, taken against the
    window's ends instead of the true score. Only the other rows are rescored: every
    entry of their window, the true entity's included
    (:meth:`~kgrank.engine.scoring.NearTies.exact_scores`), each compared with the true
    entity's exact score in the exact scores' precision. A row whose window does not hold its true
    score (or has a NaN end) gets the whole line as its window (every candidate rescored)."""
    true_entities = near_ties.true_entities.to(scores.device, torch.int64)
    true_scores = scores.gather(1, true_entities.unsqueeze(1))
    low, high = near_ties.bounds()
    # false for a NaN bound as for a window that misses its own true score
    sound = (low <= true_scores) & (true_scores <= high)
    low = torch.where(sound, low, float("-inf"))
    high = torch.where(sound, high, float("inf"))
    above = count_above(scores, high)
    optimistic = above + 1
    pessimistic = optimistic.clone()
    if _flags_rows(scores.device):
        within = count_above(scores, low, inclusive=True) - above
        flagged = (within > 1).nonzero().squeeze(1)
        if not len(flagged):
            return {"optimistic": optimistic, "pessimistic": pessimistic, "num_candidates": num_candidates}
        rows_scores, low, high = scores.index_select(0, flagged), low[flagged], high[flagged]
    else:
        # every row on a GPU: finding the flagged ones would make the host wait for the
        # device once more per block, and a row whose window holds its true entity alone
        # adds nothing to its counts
        flagged, rows_scores = torch.arange(len(scores), device=scores.device), scores
    window = compared(rows_scores, low, ">=") & compared(rows_scores, high, "<=")
    flagged_true = true_entities[flagged]
    window.scatter_(1, flagged_true.unsqueeze(1), True)
    entry_rows, entry_columns = nonzero_entries(window)
    # exact scores compared in their own precision (float64 under that tie rule); sums
    # and comparisons instead of masks and bincount, which wait for a GPU
    exact = near_ties.exact_scores(flagged, entry_rows, entry_columns)
    is_true = entry_columns == flagged_true[entry_rows]
    # each row holds its true entity once: its exact score plus zeros
    true_exact = torch.zeros(len(flagged), dtype=exact.dtype, device=exact.device)
    true_exact.index_add_(0, entry_rows, torch.where(is_true, exact, torch.zeros_like(exact)))
    reference = true_exact[entry_rows]
    # per flagged row, the other entries above the true entity and at least as high
    # (the true entity is never above itself)
    better = torch.zeros(len(flagged), dtype=torch.int64, device=exact.device)
    at_least = torch.zeros_like(better)
    better.index_add_(0, entry_rows, (exact > reference).to(torch.int64))
    at_least.index_add_(0, entry_rows, ((exact >= reference) & ~is_true).to(torch.int64))
    optimistic.index_add_(0, flagged, better)
    pessimistic.index_add_(0, flagged, at_least)
    return {"optimistic": optimistic, "pessimistic": pessimistic, "num_candidates": num_candidates}


def random_tie_ranks(optimistic: np.ndarray, pessimistic: np.ndarray, seed: int) -> np.ndarray:
    """A uniform position in each tie block, drawn once per row in table order (seeded)."""
    generator = np.random.default_rng(seed)
    return generator.integers(optimistic, pessimistic, endpoint=True).astype(np.int64)


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
    columns: dict[str, list[int]] = {name: [] for name in _RANK_COUNTS}
    for row, (true_entity, triple_id) in enumerate(
        zip(true_entities.tolist(), triple_ids.tolist(), strict=True)
    ):
        generator = np.random.default_rng([seed, side_index, triple_id])
        # up to num_samples distinct admissible columns, the true entity excluded, uniformly
        admissible[row, true_entity] = False
        chosen = np.flatnonzero(admissible[row])
        if len(chosen) > num_samples:
            chosen = generator.choice(chosen, size=num_samples, replace=False)
        true_score = score_array[row, true_entity]
        others = score_array[row, chosen]
        columns["optimistic"].append(1 + int((others > true_score).sum()))
        columns["pessimistic"].append(1 + int((others >= true_score).sum()))
        columns["num_candidates"].append(1 + len(chosen))
    return {name: np.asarray(values, dtype=np.int64) for name, values in columns.items()}


class _RankColumns:
    """The rank engine's consumer: each block's ranks (full, or against sampled candidates,
    or with a tie tolerance)."""

    def __init__(self, sampled_candidates: int | None, seed: int, tolerance: Tolerance | None = None):
        self.sampled_candidates, self.seed = sampled_candidates, seed
        self.tolerant_ranks = None
        if tolerance is not None:
            from kgrank.engine.ties import ranks_with_tolerance

            self.tolerant_ranks = partial(
                ranks_with_tolerance, absolute=tolerance.absolute, relative=tolerance.relative
            )
        self.columns: dict[str, list[np.ndarray | torch.Tensor]] = {name: [] for name in _RANK_COUNTS}

    def __call__(self, block: ScoreBlock) -> None:
        if self.tolerant_ranks is not None:
            ranks = self.tolerant_ranks(
                block.scores, block.true_entities, block.filter_rows, block.filter_cols
            )
        elif self.sampled_candidates is None:
            ranks = block_ranks(block)
        else:
            block.filtered()  # the known answers out, the near-ties settled
            ranks = sampled_ranks(
                block.scores,
                block.true_entities,
                block.positions,
                block.side,
                self.sampled_candidates,
                self.seed,
            )
        for name, values in ranks.items():
            self.columns[name].append(values)

    def column(self, name: str) -> np.ndarray:
        """One count of every block, in order, on the CPU."""
        parts = [torch.as_tensor(part).cpu().numpy() for part in self.columns[name]]
        return np.concatenate(parts).astype(np.int64)


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
    tolerance: Tolerance | None = None,
    tie_rule: str | None = None,
) -> pd.DataFrame:
    """Rank every test triple on both sides; see the module docstring for the rank variants.

    One :func:`kgrank.engine.score_pass.score_pass`, side by side, whose blocks this engine
    ranks; ``fast=False`` scores through ``model.predict`` only (:class:`kgrank.engine.scoring.Scorer`).
    With ``sampled_candidates`` = k each true entity is ranked against k random candidates
    that are not known answers (``num_candidates`` = k + 1) instead of against every
    entity; a task with fewer than k such candidates keeps them all, and a k of at least
    N - 1 (N entities), with which every task would, is refused.
    With a ``tolerance`` (:func:`kgrank.engine.ties.parse_tolerance`: absolute or relative) a
    candidate whose score lies that close to the true one ties with it
    (:func:`kgrank.engine.ties.ranks_with_tolerance`); ``exact`` or None: equality.
    ``tie_rule`` decides near-ties (:data:`kgrank.engine.scoring.TIE_RULES`; by default
    PyKEEN's arithmetic, float64 on a CUDA GPU).
    """
    if tolerance is not None and tolerance.exact:
        tolerance = None
    if tolerance is not None and sampled_candidates is not None:
        raise KgrankInputError(
            "a tie tolerance with sampled candidates: rank against all candidates with a tolerance, or "
            "against sampled ones exactly"
        )
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
    mapped = np.asarray(test_triples, dtype=np.int64)
    consumer = _RankColumns(sampled_candidates, seed, tolerance)
    score_pass(
        model,
        mapped,
        [consumer],
        known=known,
        batch_size=batch_size,
        fast=fast,
        tie_rule=tie_rule,
        progress=progress,
        description="ranking",
    )
    optimistic, pessimistic, num_candidates = (consumer.column(name) for name in _RANK_COUNTS)
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
