import numpy as np
import pytest
import torch

from kgrank.errors import KgrankInputError
from kgrank.ranks import KnownAnswers, compute_ranks, random_tie_ranks


class ScoreTableModel(torch.nn.Module):
    """A stand-in for a PyKEEN model whose scores are set by hand."""

    def __init__(self, tail_scores: torch.Tensor, head_scores: torch.Tensor):
        super().__init__()
        self.tail_scores = torch.nn.Parameter(tail_scores, requires_grad=False)  # [h, r, t]
        self.head_scores = torch.nn.Parameter(head_scores, requires_grad=False)  # [r, t, h]

    def predict(self, hrt_batch, target):
        if target == "tail":
            return self.tail_scores[hrt_batch[:, 0], hrt_batch[:, 1]].clone()
        return self.head_scores[hrt_batch[:, 1], hrt_batch[:, 2]].clone()


def _table_model(num_entities=5, num_relations=1, seed=0):
    generator = torch.Generator().manual_seed(seed)
    tail = torch.rand(num_entities, num_relations, num_entities, generator=generator)
    head = torch.rand(num_relations, num_entities, num_entities, generator=generator)
    return ScoreTableModel(tail, head)


def test_hand_made_ties_and_filtering():
    model = _table_model()
    model.tail_scores.data[0, 0] = torch.tensor([0.5, 0.7, 0.9, 0.7, 0.1])
    model.head_scores.data[0, 1] = torch.tensor([0.3, 0.3, 0.3, 0.3, 0.3])  # all tied
    test = torch.tensor([[0, 0, 1]])
    train = torch.tensor([[0, 0, 2], [4, 0, 1]])  # filters tail 2 and head 4
    known = KnownAnswers([train, test], num_entities=5, num_relations=1)
    table = compute_ranks(model, test, known, seed=3, progress=False)
    tail = table[table["side"] == "tail"].iloc[0]
    assert (tail["optimistic"], tail["pessimistic"], tail["realistic"], tail["num_candidates"]) == (
        1,
        2,
        1.5,
        4,
    )
    head = table[table["side"] == "head"].iloc[0]
    assert (head["optimistic"], head["pessimistic"], head["num_candidates"]) == (1, 4, 4)
    assert 1 <= head["random"] <= 4
    assert list(table.columns) == [
        "triple_id",
        "head",
        "relation",
        "tail",
        "side",
        "optimistic",
        "realistic",
        "pessimistic",
        "random",
        "num_candidates",
    ]


def test_unfiltered_counts_everything():
    model = _table_model()
    model.tail_scores.data[0, 0] = torch.tensor([0.5, 0.7, 0.9, 0.7, 0.1])
    test = torch.tensor([[0, 0, 1]])
    known = KnownAnswers([test], num_entities=5, num_relations=1)
    tail = compute_ranks(model, test, known, progress=False).query("side == 'tail'").iloc[0]
    assert (tail["optimistic"], tail["pessimistic"], tail["num_candidates"]) == (2, 3, 5)


def test_ranks_do_not_depend_on_batch_size():
    model = _table_model(num_entities=30, num_relations=3, seed=1)
    generator = np.random.default_rng(0)
    test = torch.as_tensor(
        np.stack(
            [generator.integers(0, 30, 50), generator.integers(0, 3, 50), generator.integers(0, 30, 50)],
            axis=1,
        )
    )
    known = KnownAnswers([test], 30, 3)
    one = compute_ranks(model, test, known, batch_size=1, seed=5, progress=False)
    many = compute_ranks(model, test, known, batch_size=17, seed=5, progress=False)
    assert one.equals(many)


def test_random_rank_is_uniform_in_the_tie_block_and_seeded():
    optimistic = np.full(60_000, 3)
    pessimistic = np.full(60_000, 6)
    draws = random_tie_ranks(optimistic, pessimistic, seed=11)
    assert np.array_equal(draws, random_tie_ranks(optimistic, pessimistic, seed=11))
    counts = np.bincount(draws, minlength=7)[3:7]
    assert counts.sum() == 60_000 and np.all(np.abs(counts / 60_000 - 0.25) < 0.01)


def test_bad_batch_size_and_ids():
    model = _table_model()
    test = torch.tensor([[0, 0, 1]])
    known = KnownAnswers([test], 5, 1)
    with pytest.raises(KgrankInputError, match="batch size must be positive, got 0"):
        compute_ranks(model, test, known, batch_size=0, progress=False)
    with pytest.raises(KgrankInputError, match=r"test triple 0 has ids \[0, 0, 9\] outside"):
        compute_ranks(model, torch.tensor([[0, 0, 9]]), known, progress=False)


@pytest.mark.parametrize("model_name", ["transe", "complex", "rotate", "tucker"])
def test_same_ranks_as_pykeens_evaluator(nations_dir, tmp_path, model_name):
    """Per triple and side, kgrank's ranks equal PyKEEN's RankBasedEvaluator's."""
    from conftest import REPO
    from pykeen.evaluation import RankBasedEvaluator

    from kgrank.hyperparameters import load_hyperparameters
    from kgrank.training import load_model, train

    hyperparameters = load_hyperparameters(REPO / f"config/hyperparameters/nations/{model_name}.yaml")
    train(nations_dir, hyperparameters, tmp_path, seed=1, max_epochs=2, progress=False)
    model, factories = load_model(tmp_path, nations_dir)
    known = KnownAnswers(
        factories.mapped(), factories.training.num_entities, factories.training.num_relations
    )
    ours = compute_ranks(model, factories.testing.mapped_triples, known, progress=False)

    evaluator = RankBasedEvaluator(clear_on_finalize=False)
    evaluator.evaluate(
        model,
        factories.testing.mapped_triples,
        batch_size=1024,
        use_tqdm=False,
        additional_filter_triples=[factories.training.mapped_triples, factories.validation.mapped_triples],
    )
    for side in ("head", "tail"):
        subset = ours[ours["side"] == side]
        for rank_type in ("optimistic", "realistic", "pessimistic"):
            theirs = np.concatenate(evaluator.ranks[side, rank_type])
            np.testing.assert_array_equal(subset[rank_type].to_numpy(), theirs, err_msg=f"{side} {rank_type}")
        np.testing.assert_array_equal(
            subset["num_candidates"].to_numpy(), np.concatenate(evaluator.num_candidates[side])
        )


def test_nan_scores_are_refused():
    model = _table_model()
    model.tail_scores.data[0, 0, 3] = float("nan")
    test = torch.tensor([[0, 0, 1]])
    with pytest.raises(KgrankInputError, match="the model scored NaN"):
        compute_ranks(model, test, KnownAnswers([test], 5, 1), progress=False)
