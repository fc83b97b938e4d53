"""The one scoring loop: every row of every side reaches every consumer once, in the
order asked, through retries at half the batch size; NaN is refused; filtering is one."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from kgrank.engine.candidates import KnownAnswers
from kgrank.engine.ranks import ranks_from_scores
from kgrank.engine.score_pass import ScoreBlock, filter_scores, score_pass
from kgrank.errors import KgrankInputError

NUM_ENTITIES, NUM_RELATIONS = 7, 2
RNG = np.random.default_rng(0)
TRIPLES = np.stack(
    [
        RNG.integers(NUM_ENTITIES, size=11),
        RNG.integers(NUM_RELATIONS, size=11),
        RNG.integers(NUM_ENTITIES, size=11),
    ],
    axis=1,
)
TABLE = torch.as_tensor(RNG.normal(size=(NUM_ENTITIES, NUM_RELATIONS, NUM_ENTITIES)), dtype=torch.float32)
KNOWN = KnownAnswers([TRIPLES], NUM_ENTITIES, NUM_RELATIONS)


def score(batch: torch.Tensor, side: str) -> torch.Tensor:
    if side == "tail":
        return TABLE[batch[:, 0], batch[:, 1]].clone()
    return TABLE[:, batch[:, 1], batch[:, 2]].T.clone()


class Recorder:
    def __init__(self) -> None:
        self.blocks: list[tuple[str, list[int]]] = []
        self.ranks: dict[str, dict[int, tuple[int, int, int]]] = {"head": {}, "tail": {}}

    def __call__(self, block: ScoreBlock) -> None:
        self.blocks.append((block.side, block.positions.tolist()))
        scores, counts = block.filtered()
        true = scores[torch.arange(len(block.positions)), block.true_entities].unsqueeze(1)
        optimistic = ((scores > true).sum(dim=1) + 1).tolist()
        pessimistic = (scores >= true).sum(dim=1).tolist()
        for row, position in enumerate(block.positions.tolist()):
            self.ranks[block.side][position] = (optimistic[row], pessimistic[row], int(counts[row]))


def _by_hand() -> dict[str, dict[int, tuple[int, int, int]]]:
    """Each task ranked alone through the rank engine's own function."""
    expected: dict[str, dict[int, tuple[int, int, int]]] = {"head": {}, "tail": {}}
    for side in ("head", "tail"):
        for position, triple in enumerate(TRIPLES):
            batch = triple[None, :]
            rows, columns = KNOWN.answers(side, batch)
            true = torch.as_tensor(batch[:, 0] if side == "head" else batch[:, 2])
            ranks = ranks_from_scores(score(torch.as_tensor(batch), side), true, rows, columns)
            expected[side][position] = tuple(
                int(ranks[name][0]) for name in ("optimistic", "pessimistic", "num_candidates")
            )
    return expected


def test_side_by_side_every_row_once_with_the_engines_ranks():
    recorder = Recorder()
    score_pass(score, TRIPLES, [recorder], known=KNOWN, batch_size=4)
    assert [side for side, _ in recorder.blocks] == ["head"] * 3 + ["tail"] * 3
    for side in ("head", "tail"):
        covered = [p for s, positions in recorder.blocks if s == side for p in positions]
        assert covered == list(range(len(TRIPLES)))
    assert recorder.ranks == _by_hand()


def test_batch_by_batch_alternates_the_sides():
    recorder = Recorder()
    score_pass(score, TRIPLES, [recorder], known=KNOWN, batch_size=4, by_batch=True)
    assert [side for side, _ in recorder.blocks] == ["head", "tail"] * 3
    assert [positions[0] for _, positions in recorder.blocks] == [0, 0, 4, 4, 8, 8]
    assert recorder.ranks == _by_hand()


def test_out_of_memory_halves_the_batch_and_loses_no_row():
    calls = []

    def tight(batch: torch.Tensor, side: str) -> torch.Tensor:
        calls.append(len(batch))
        if len(batch) > 2:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return score(batch, side)

    recorder = Recorder()
    score_pass(tight, TRIPLES, [recorder], known=KNOWN, batch_size=8)
    assert calls[:3] == [8, 4, 2]
    assert recorder.ranks == _by_hand()
    assert all(len(positions) <= 2 for _, positions in recorder.blocks)


def test_batch_by_batch_keeps_its_order_whatever_the_memory():
    # the ties study's run budget takes queries in the order the blocks come: a retry at
    # a smaller size splits a side's part of a round, never the rounds
    def order(score_function) -> list[tuple[str, int]]:
        seen: list[tuple[str, int]] = []
        score_pass(
            score_function,
            TRIPLES,
            [lambda block: seen.extend((block.side, p) for p in block.positions.tolist())],
            known=KNOWN,
            batch_size=4,
            by_batch=True,
        )
        return seen

    def tails_tight(batch: torch.Tensor, side: str) -> torch.Tensor:
        if side == "tail" and len(batch) > 1:
            raise RuntimeError("CUDA out of memory")
        return score(batch, side)

    plenty = order(score)
    assert plenty[:8] == [("head", p) for p in range(4)] + [("tail", p) for p in range(4)]
    assert order(tails_tight) == plenty


def test_an_error_that_is_not_memory_is_raised():
    def broken(batch: torch.Tensor, side: str) -> torch.Tensor:
        raise RuntimeError("shape mismatch")

    with pytest.raises(RuntimeError, match="shape mismatch"):
        score_pass(broken, TRIPLES, [Recorder()], known=KNOWN)


def test_nan_scores_and_bad_ids_end_in_one_line():
    def diverged(batch: torch.Tensor, side: str) -> torch.Tensor:
        scores = score(batch, side)
        scores[1, 3] = float("nan")
        return scores

    with pytest.raises(
        KgrankInputError, match=r"the model scored NaN for the head of row 1 of the pass, .*retrain it"
    ):
        score_pass(diverged, TRIPLES, [Recorder()], known=KNOWN)
    bad = TRIPLES.copy()
    bad[5, 2] = NUM_ENTITIES
    with pytest.raises(KgrankInputError, match="test triple 5 has ids .* outside the model's 7 entities"):
        score_pass(score, bad, [Recorder()], known=KNOWN)
    with pytest.raises(KgrankInputError, match="batch size must be positive"):
        score_pass(score, TRIPLES, [Recorder()], known=KNOWN, batch_size=0)


def test_consumers_share_one_filtering_whatever_their_order():
    seen = []

    def raw_reader(block: ScoreBlock) -> None:
        # after the first consumer: the block's own scores, filtered in place once
        removed = {
            (row, column)
            for row, column in zip(block.filter_rows.tolist(), block.filter_cols.tolist(), strict=True)
            if column != int(block.true_entities[row])
        }
        seen.append((int(torch.isnan(block.scores).sum()), len(removed)))

    first, second = Recorder(), Recorder()
    score_pass(score, TRIPLES, [first, raw_reader, second], known=KNOWN, batch_size=11)
    assert first.ranks == second.ranks == _by_hand()
    assert [nan for nan, _ in seen] == [removed for _, removed in seen]
    assert sum(removed for _, removed in seen) > 0


@pytest.mark.parametrize("transposed", [False, True])
def test_filtering_by_hand_whatever_the_blocks_layout(transposed):
    # a contiguous block is filled through its flat view, any other by indexing
    scores = torch.as_tensor(RNG.normal(size=(NUM_ENTITIES, 5)), dtype=torch.float32)
    scores = scores.T if transposed else scores.T.contiguous()
    true_entities = torch.tensor([0, 3, 3, 6, 1])
    rows, columns = np.array([0, 0, 1, 1, 3, 4, 4]), np.array([0, 2, 3, 5, 6, 1, 1])
    expected = scores.clone()
    for row, column in zip(rows, columns, strict=True):
        if column != true_entities[row]:
            expected[row, column] = float("nan")
    counts = filter_scores(scores, true_entities, rows, columns)
    torch.testing.assert_close(scores, expected, equal_nan=True)
    # rows 1 and 3 list their true entity, row 4 twice: it stays a candidate
    assert counts.tolist() == [NUM_ENTITIES - 1, NUM_ENTITIES - 1, NUM_ENTITIES, NUM_ENTITIES, NUM_ENTITIES]


def test_a_pykeen_model_is_scored_in_evaluation_mode_and_left_as_it_was():
    from pykeen.models import DistMult
    from pykeen.triples import TriplesFactory

    factory = TriplesFactory(
        mapped_triples=torch.as_tensor(TRIPLES),
        entity_to_id={str(i): i for i in range(NUM_ENTITIES)},
        relation_to_id={str(i): i for i in range(NUM_RELATIONS)},
    )
    model = DistMult(triples_factory=factory, embedding_dim=4, random_seed=1)
    model.train()
    modes = []

    def mode(block: ScoreBlock) -> None:
        modes.append(model.training)

    score_pass(model, TRIPLES, [mode], known=KNOWN)
    assert modes and not any(modes)
    assert model.training


def test_use_threads_limits_torch_and_numpys_blas():
    """--threads reaches numpy's BLAS as well as torch: the last bits of a BLAS dot product
    depend on its thread count (kgrank.engine.threads)."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from kgrank.engine.threads import use_threads

    torch_threads = torch.get_num_threads()
    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas, "numpy links no BLAS that threadpoolctl sees"
    try:
        use_threads(1)
        assert torch.get_num_threads() == 1
        assert all(pool["num_threads"] == 1 for pool in threadpool_info() if pool["user_api"] == "blas")
    finally:
        torch.set_num_threads(torch_threads)
        threadpool_limits(limits={pool["prefix"]: pool["num_threads"] for pool in blas})
