"""The one scoring loop: score every test triple's candidates, block by block, and hand each
block to consumers.

Every part of kgrank that scores a model (the rank engine, the ambiguity study's test
subsets, the protocols study's tie tolerances, the open-world study's family trees, the
IR study's items and run lists) goes
through :func:`score_pass`, which owns what they would otherwise each restate: the
model's evaluation mode and torch's inference mode, the id checks, the device, batching
(by side, or by batch with both sides together), the retry at half the batch size when
memory runs out, NaN scores refused, and the progress bar. A consumer is a callable that
takes a :class:`ScoreBlock`. Consumers of one pass share the block: one that asks for the
filtered scores (:meth:`ScoreBlock.filtered`, done once, in place, whoever asks first)
changes what a later one reads, so a consumer that needs the raw scores comes first, and
one that changes the scores any other way (its own filter, a stress transform) works on a
copy or is the pass's only consumer.

PyKEEN's ``Evaluator`` hands score blocks to evaluators the same way; the loop is written
here because kgrank's scores come from :class:`kgrank.engine.scoring.Scorer` (product forms with
PyKEEN's arithmetic at near-ties) and its blocks carry kgrank's filter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
from tqdm.auto import tqdm

from kgrank.data.rank_table import SIDES
from kgrank.engine.candidates import KnownAnswers
from kgrank.errors import KgrankInputError

if TYPE_CHECKING:
    from kgrank.engine.scoring import NearTies

# (test triples (n, 3) on the model's device, side) -> (n, entities) scores
ScoreBatch = Callable[[torch.Tensor, str], torch.Tensor]


@dataclass
class ScoreBlock:
    """One block of a pass: the scores of every entity for one side of some test triples.

    ``positions`` are the block's rows among the triples given to :func:`score_pass`;
    ``device_scores`` (rows x entities, float) are the model's, on the model's device,
    until a consumer asks for :meth:`filtered`, which filters them in place;
    :attr:`scores` are the same on the CPU; ``true_entities``, ``filter_rows`` and
    ``filter_cols`` (on the CPU) list each row's true entity and its known answers (the
    filter; empty without one). ``near_ties``, where the scores are a product form's, are
    rescored through ``model.predict`` (:meth:`kgrank.engine.scoring.NearTies.settle`)
    before a consumer first sees the scores, unless it asks for them unsettled (the rank
    engine, which rescores only the rows that hold a near-tie)."""

    side: str
    positions: np.ndarray
    triples: np.ndarray
    device_scores: torch.Tensor
    true_entities: torch.Tensor
    filter_rows: torch.Tensor
    filter_cols: torch.Tensor
    near_ties: NearTies | None = None
    # (true entities, filter rows, filter columns) on the scores' device, off the CPU
    device_filter: tuple[torch.Tensor, torch.Tensor, torch.Tensor] | None = field(default=None, repr=False)
    _num_candidates: torch.Tensor | None = field(default=None, repr=False)

    def _settle(self) -> None:
        if self.near_ties is not None:
            self.near_ties.settle(self.device_scores)
            self.near_ties = None

    @property
    def scores(self) -> torch.Tensor:
        """The scores on the CPU, near-ties settled; on a GPU the block moves there once, for
        good, so that every consumer after it reads (and filters) the same tensor."""
        self._settle()
        if self.device_scores.device.type != "cpu":
            self.device_scores = self.device_scores.cpu()
        return self.device_scores

    def filtered(self, on_device: bool = False, settled: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
        """(scores, candidate counts): the scores with every known answer but the row's
        true entity set to NaN (in place, once), and each row's candidates left, the true
        entity included; on the CPU, or with ``on_device`` where the scores are now (the
        rank engine counts there, so that a GPU's block never crosses to the CPU). With
        ``settled=False`` the near-ties stay in :attr:`near_ties` for the caller (a
        consumer after it would see them settled on the filtered block)."""
        if settled:
            self._settle()
        scores = self.device_scores if on_device else self.scores
        if self._num_candidates is None:
            index = (self.true_entities, self.filter_rows, self.filter_cols)
            if self.device_filter is not None and self.device_filter[0].device == scores.device:
                index = self.device_filter
            self._num_candidates = filter_scores(scores, *index)
        return scores, self._num_candidates.to(scores.device)


def refuse_nan(scores: torch.Tensor, where: Callable[[int], str] = "batch row {}".format) -> None:
    """One line naming the first row of a score block that holds a NaN (``where(row)``
    says which), if any. A row holding a NaN sums to NaN: one pass, no mask allocated; the
    mask is built only then (a row with both +inf and -inf also sums to NaN, and is no
    error)."""
    if torch.isnan(scores.sum(dim=1)).any() and torch.isnan(scores).any():
        row = int(torch.isnan(scores).any(dim=1).nonzero()[0])
        raise KgrankInputError(
            f"the model scored NaN for {where(row)}; it has diverged or its file is corrupt: retrain it"
        )


def filter_scores(
    scores: torch.Tensor, true_entities: torch.Tensor, filter_rows: Any = None, filter_cols: Any = None
) -> torch.Tensor:
    """Set every known answer of a (rows, entities) score block but each row's true entity
    to NaN, in place, so that it compares false with everything and drops out of every
    count; return each row's number of candidates left, the true entity included."""
    batch_size, num_entities = scores.shape
    device = scores.device
    num_candidates = torch.full((batch_size,), num_entities, dtype=torch.int64, device=device)
    if filter_rows is not None and len(filter_rows):
        true_entities = torch.as_tensor(true_entities).to(device, torch.int64).unsqueeze(1)
        rows = torch.as_tensor(filter_rows).to(device, torch.int64)
        columns = torch.as_tensor(filter_cols).to(device, torch.int64)
        # gather, index_fill_, scatter_ and index_add_: on a GPU none of them waits for the
        # device, as indexing with tensors (index_put_), a mask or bincount do
        true_scores = scores.gather(1, true_entities)
        if scores.is_contiguous():
            scores.view(-1).index_fill_(0, rows * num_entities + columns, float("nan"))
        else:
            scores[rows, columns] = float("nan")
        scores.scatter_(1, true_entities, true_scores)
        # every known answer but the true entity itself leaves the candidate list
        removed = columns != true_entities.squeeze(1)[rows]
        num_candidates.index_add_(0, rows, -removed.to(torch.int64))
    return num_candidates


Consumer = Callable[[ScoreBlock], None]


def check_ids(triples: np.ndarray, num_entities: int, num_relations: int) -> None:
    """Every id inside the model's entities and relations, or one line naming the first triple that is not."""
    bad_entity = (triples[:, [0, 2]] < 0) | (triples[:, [0, 2]] >= num_entities)
    bad_relation = (triples[:, 1] < 0) | (triples[:, 1] >= num_relations)
    if bad_entity.any() or bad_relation.any():
        row = int(np.flatnonzero(bad_entity.any(axis=1) | bad_relation)[0])
        raise KgrankInputError(
            f"test triple {row} has ids {triples[row].tolist()} outside the model's "
            f"{num_entities} entities / {num_relations} relations; rebuild the dataset and retrain"
        )


def is_out_of_memory(error: BaseException) -> bool:
    message = str(error)
    return isinstance(error, (MemoryError, torch.OutOfMemoryError)) or (
        isinstance(error, RuntimeError) and ("out of memory" in message or "can't allocate memory" in message)
    )


def _scorer(
    model: Any, fast: bool, tie_rule: str | None = None
) -> tuple[ScoreBatch, torch.device, str, Callable[[], None]]:
    """The score function, its device, its name for the progress bar and how to restore
    the model's mode: a PyKEEN model is scored by :class:`kgrank.engine.scoring.Scorer` in
    evaluation mode (dropout off, batch norm frozen), near-ties decided by ``tie_rule``;
    any other callable as it is."""
    if isinstance(model, torch.nn.Module):
        from kgrank.engine.scoring import Scorer

        was_training = model.training
        model.eval()
        scorer = Scorer(model, fast=fast, tie_rule=tie_rule)
        device = next(model.parameters()).device
        return scorer, device, scorer.family, lambda: model.train(was_training)
    return model, torch.device("cpu"), "scores", lambda: None


@torch.inference_mode()
def score_pass(
    model: Any,
    triples: np.ndarray,
    consumers: Sequence[Consumer],
    *,
    known: KnownAnswers | None = None,
    sides: Sequence[str] = SIDES,
    batch_size: int = 256,
    fast: bool = True,
    tie_rule: str | None = None,
    by_batch: bool = False,
    progress: bool = False,
    description: str = "scoring",
) -> None:
    """Score every entity for each side of each of ``triples`` (n, 3) ids and hand every
    block to each consumer, in order.

    ``model``: a PyKEEN model (scored by :class:`kgrank.engine.scoring.Scorer`, ``fast`` or
    through ``model.predict``, on the device of its parameters, near-ties decided by
    ``tie_rule``, by default the device's: :data:`kgrank.engine.scoring.TIE_RULES`) or any
    score function ``(triples, side) -> (n, entities) scores``. ``known``: the filter, whose answers each
    block carries, and whose entity and relation counts check the ids. Blocks go side by
    side (every batch of the head side, then of the tail side), or with ``by_batch`` batch
    by batch (head and tail of a batch, then the next batch). A block that runs out of
    memory is retried at half the size, down to one row, and the pass goes on at that size
    (batch by batch, inside rounds of the size asked for)."""
    if batch_size <= 0:
        raise KgrankInputError(f"batch size must be positive, got {batch_size}; pass --batch-size 1 or more")
    # a writable array: torch warns (UserWarning, once per process) on a read-only one, as
    # the family tree's graphs are
    triples = np.array(triples, dtype=np.int64)
    if known is not None:
        check_ids(triples, known.num_entities, known.num_relations)
    score, device, name, restore = _scorer(model, fast, tie_rule)
    bar = tqdm(
        total=len(sides) * len(triples), desc=f"{description} ({name})", unit="triple", disable=not progress
    )
    # batch by batch: rounds of the batch size asked for, each side in turn, so that a
    # block retried at a smaller size splits only its side's part of the round, and the
    # order of the (side, triple) pairs the consumers see never depends on memory
    round_size = batch_size if by_batch else max(1, len(triples))
    try:
        for round_start in range(0, len(triples), round_size):
            round_end = min(round_start + round_size, len(triples))
            for side in sides:
                start = round_start
                while start < round_end:
                    block, batch_size = _scored_block(
                        score, triples, side, (start, round_end), batch_size, device, known, bar
                    )
                    for consumer in consumers:
                        consumer(block)
                    start += len(block.positions)
                    bar.update(len(block.positions))
    finally:
        bar.close()
        restore()


def _scored_block(
    score: ScoreBatch,
    triples: np.ndarray,
    side: str,
    span: tuple[int, int],
    batch_size: int,
    device: torch.device,
    known: KnownAnswers | None,
    bar: Any,
) -> tuple[ScoreBlock, int]:
    """The next block of ``side`` from the first row of ``span`` on, with the batch size it
    took: halved while the scoring runs out of memory, down to one row."""
    start, end = span
    empty = torch.empty(0, dtype=torch.int64)
    while True:
        batch = triples[start : min(start + batch_size, end)]
        rows, columns = known.answers(side, batch) if known is not None else (empty, empty)
        if _on_host(device):
            device_batch, device_filter = torch.as_tensor(batch), None
        else:
            device_batch, device_filter = _to_device(batch, side, rows, columns, device)
        try:
            # on the model's device: the rank engine counts there, and consumers that
            # need the CPU move the block once (ScoreBlock.scores)
            scores, near_ties = _unsettled_scores(score, device_batch, side)
            break
        except (RuntimeError, MemoryError) as error:
            if not is_out_of_memory(error) or batch_size == 1:
                raise
            batch_size = max(1, batch_size // 2)
            bar.write(f"out of memory: retrying with batch size {batch_size}")
    refuse_nan(
        scores, lambda row: f"the {side} of row {start + row} of the pass, triple ids {batch[row].tolist()}"
    )
    block = ScoreBlock(
        side=side,
        positions=np.arange(start, start + len(batch)),
        triples=batch,
        device_scores=scores,
        true_entities=torch.as_tensor(batch[:, 0] if side == "head" else batch[:, 2]),
        filter_rows=torch.as_tensor(rows),
        filter_cols=torch.as_tensor(columns),
        near_ties=near_ties,
        device_filter=device_filter,
    )
    return block, batch_size


def _on_host(device: torch.device) -> bool:
    """Whether a block's scores stay with the triples and the filter (the CPU), which then
    need no copy."""
    return device.type == "cpu"


def _to_device(
    batch: np.ndarray, side: str, rows: Any, columns: Any, device: torch.device
) -> tuple[torch.Tensor, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """(triples, (true entities, filter rows, filter columns)) of a block on ``device``, in one
    copy: on a GPU from pinned memory, which does not wait for the device, where a copy
    of each from pageable memory waited for every kernel queued before it."""
    num_rows, num_answers = len(batch), len(rows)
    packed = torch.from_numpy(
        np.concatenate([batch.reshape(-1), np.asarray(rows, np.int64), np.asarray(columns, np.int64)])
    )
    packed = packed.pin_memory().to(device, non_blocking=True) if device.type == "cuda" else packed.to(device)
    triples = packed[: 3 * num_rows].view(num_rows, 3)
    true_entities = triples[:, 0] if side == "head" else triples[:, 2]
    answers = packed[3 * num_rows :]
    return triples, (true_entities, answers[:num_answers], answers[num_answers:])


def _unsettled_scores(
    score: ScoreBatch, batch: torch.Tensor, side: str
) -> tuple[torch.Tensor, NearTies | None]:
    """A block's float scores and, from a :class:`kgrank.engine.scoring.Scorer`, its near-ties
    left to settle (any other score function's scores are final)."""
    unsettled = getattr(score, "unsettled", None)
    if unsettled is None:
        return score(batch, side).detach().float(), None
    scores, near_ties = unsettled(batch, side)
    return scores.detach().float(), near_ties
