from types import SimpleNamespace

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from test_scoring import FAMILIES, TAIL_ONLY

from kgrank.engine.candidates import KnownAnswers, known_answers
from kgrank.engine.ranks import compute_ranks, random_tie_ranks
from kgrank.errors import KgrankInputError


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


def pykeen_evaluator_ranks(model, factories):
    """PyKEEN's RankBasedEvaluator on the test set, filtered by train, valid and test."""
    from pykeen.evaluation import RankBasedEvaluator

    evaluator = RankBasedEvaluator(clear_on_finalize=False)
    evaluator.evaluate(
        model,
        factories.testing.mapped_triples,
        batch_size=256,
        use_tqdm=False,
        additional_filter_triples=[factories.training.mapped_triples, factories.validation.mapped_triples],
    )
    return evaluator


def compare_with_evaluator(ours, evaluator, label):
    """Fraction of identical ranks per side and rank type, and the largest MRR / Hits@10 difference.

    Reordered floating-point arithmetic may flip a near-tie; the issue bounds that at
    99.9% identical ranks and metric differences below 1e-4, and the fraction is printed
    (pytest -s) so that the test output says how often it happens.
    """
    for side in ("head", "tail"):
        subset = ours[ours["side"] == side]
        np.testing.assert_array_equal(
            subset["num_candidates"].to_numpy(), np.concatenate(evaluator.num_candidates[side])
        )
        for rank_type in ("optimistic", "realistic", "pessimistic"):
            theirs = np.concatenate(evaluator.ranks[side, rank_type])
            mine = subset[rank_type].to_numpy()
            identical = float(np.mean(mine == theirs))
            mrr_difference = abs(np.mean(1 / mine) - np.mean(1 / theirs))
            hits_difference = abs(np.mean(mine <= 10) - np.mean(theirs <= 10))
            print(
                f"{label} {side} {rank_type}: {identical:.2%} identical ranks, |dMRR| = {mrr_difference:.1e}"
            )
            assert identical >= 0.999, f"{label} {side} {rank_type}: only {identical:.4%} identical"
            assert mrr_difference < 1e-4 and hits_difference < 1e-4, label


@pytest.mark.parametrize("model_name", ["transe", "complex", "rotate", "tucker"])
def test_same_ranks_as_pykeens_evaluator_published_configs(nations_dir, tmp_path, model_name):
    """The workflow's own path (published configuration, saved and reloaded model) on Nations."""
    from conftest import REPO

    from kgrank.training.hyperparameters import load_hyperparameters
    from kgrank.training.train import load_model, train

    hyperparameters = load_hyperparameters(REPO / f"config/hyperparameters/nations/{model_name}.yaml")
    train(nations_dir, hyperparameters, tmp_path, seed=1, max_epochs=2, progress=False)
    model, factories = load_model(tmp_path, nations_dir)
    ours = compute_ranks(model, factories.testing.mapped_triples, known_answers(factories), progress=False)
    compare_with_evaluator(ours, pykeen_evaluator_ranks(model, factories), f"nations {model_name}")


def _short_trained_model(dataset, family, inverse):
    """A model of one family after two sLCWA epochs, so that scores are spread as after training."""
    from pykeen.models import model_resolver
    from pykeen.training import SLCWATrainingLoop

    name, kwargs = FAMILIES[family]
    model = model_resolver.make(name, triples_factory=dataset.training, random_seed=3, **kwargs)
    SLCWATrainingLoop(model=model, triples_factory=dataset.training, optimizer="adam").train(
        triples_factory=dataset.training, num_epochs=2, batch_size=512, use_tqdm=False
    )
    return model.eval()


def _factories_and_known(dataset):
    """A PyKEEN dataset's splits as kgrank's factories, and their known answers (the filter)."""
    factories = SimpleNamespace(
        training=dataset.training, validation=dataset.validation, testing=dataset.testing
    )
    splits = (dataset.training, dataset.validation, dataset.testing)
    known = KnownAnswers(
        [split.mapped_triples for split in splits], dataset.num_entities, dataset.num_relations
    )
    return factories, known


@pytest.fixture(scope="module")
def pykeen_datasets():
    from pykeen.datasets import Kinships, Nations

    return {
        (name, inverse): cls(create_inverse_triples=inverse)
        for name, cls in (("nations", Nations), ("kinships", Kinships))
        for inverse in (False, True)
    }


@pytest.mark.parametrize("inverse", [False, True], ids=["plain", "inverse"])
@pytest.mark.parametrize("dataset_name", ["nations", "kinships"])
@pytest.mark.parametrize("family", list(FAMILIES))
def test_fast_engine_same_ranks_as_pykeens_evaluator(pykeen_datasets, family, dataset_name, inverse):
    from kgrank.engine.scoring import Scorer

    dataset = pykeen_datasets[dataset_name, inverse]
    model = _short_trained_model(dataset, family, inverse)
    factories, known = _factories_and_known(dataset)
    scorer = Scorer(model)
    # TuckER's and ConvE's head sides without inverse triples are the cases scored by PyKEEN's broadcast.
    assert scorer.fast_for("tail") and (scorer.fast_for("head") or (family in TAIL_ONLY and not inverse))
    ours = compute_ranks(model, dataset.testing.mapped_triples, known, progress=False)
    compare_with_evaluator(
        ours, pykeen_evaluator_ranks(model, factories), f"{dataset_name} {family} {inverse}"
    )


def test_out_of_memory_batches_are_retried_smaller(monkeypatch):
    from kgrank.engine.scoring import Scorer

    model = _table_model(num_entities=30, num_relations=3, seed=2)
    test = torch.as_tensor(
        np.stack([np.arange(40) % 30, np.arange(40) % 3, (7 * np.arange(40)) % 30], axis=1)
    )
    known = KnownAnswers([test], 30, 3)
    expected = compute_ranks(model, test, known, batch_size=4, seed=1, progress=False)
    original = Scorer.unsettled
    seen = []

    def small_batches_only(self, batch, side):
        seen.append(len(batch))
        if len(batch) > 4:
            raise RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 1 GB")
        return original(self, batch, side)

    monkeypatch.setattr(Scorer, "unsettled", small_batches_only)
    retried = compute_ranks(model, test, known, batch_size=32, seed=1, progress=False)
    assert retried.equals(expected) and seen[:4] == [32, 16, 8, 4]

    def broken(self, batch, side):
        raise RuntimeError("some other failure")

    monkeypatch.setattr(Scorer, "unsettled", broken)
    with pytest.raises(RuntimeError, match="some other failure"):
        compute_ranks(model, test, known, batch_size=32, progress=False)


def _sampling_model(num_entities):
    """Tail scores: known answers 1.0, the true entity (0) 0.5, entity j the value j / N otherwise."""
    model = _table_model(num_entities=num_entities, num_relations=1)
    model.tail_scores.data[:] = torch.arange(num_entities, dtype=torch.float32) / num_entities
    model.tail_scores.data[:, :, 0] = 0.5
    return model


def test_sampled_candidates_exclude_known_answers_and_are_seeded():
    num_entities = 200
    model = _sampling_model(num_entities)
    test = torch.tensor([[head, 0, 0] for head in range(num_entities)])
    answers = torch.tensor([[head, 0, 199 - (head % 5)] for head in range(num_entities)])
    known = KnownAnswers([test, answers], num_entities, 1)
    table = compute_ranks(model, test, known, sampled_candidates=20, seed=4, progress=False)
    tail = table[table["side"] == "tail"]
    assert (tail["num_candidates"] == 21).all()
    # Entities above the true score: 100..198 minus the one known answer each query filters.
    higher, admissible = 98, num_entities - 1 - 1
    expected_mean = 20 * higher / admissible  # hypergeometric mean of the sampled higher scorers
    assert abs((tail["optimistic"] - 1).mean() - expected_mean) < 0.5
    assert table.equals(
        compute_ranks(model, test, known, sampled_candidates=20, seed=4, batch_size=7, progress=False)
    )
    assert not table.equals(compute_ranks(model, test, known, sampled_candidates=20, seed=5, progress=False))


def test_sampled_candidates_beyond_the_admissible_set():
    model = _table_model(num_entities=12, num_relations=2, seed=6)
    test = torch.tensor([[0, 0, 3], [5, 1, 2], [7, 0, 11]])
    known = KnownAnswers([test, torch.tensor([[0, 0, 4]])], 12, 2)
    full = compute_ranks(model, test, known, seed=2, progress=False)
    # 10 of the 11 other entities: the query (0, 0, ?), whose known answer 4 is filtered,
    # keeps all its 10; the others draw 10 of 11
    sampled = compute_ranks(model, test, known, seed=2, sampled_candidates=10, progress=False)
    assert (sampled["num_candidates"] == 11).all()
    first = (sampled["side"] == "tail") & (sampled["triple_id"] == 0)
    assert sampled[first].equals(full[first])
    # 11 or more would keep every candidate of every task (the full ranking): refused, not
    # silently the full ranks
    for size in (11, 50):
        with pytest.raises(
            KgrankInputError, match=rf"^sampled candidates {size}: the dataset has 12 entities"
        ):
            compute_ranks(model, test, known, seed=2, sampled_candidates=size, progress=False)
    with pytest.raises(KgrankInputError, match="sampled candidates must be positive, got 0"):
        compute_ranks(model, test, known, sampled_candidates=0, progress=False)


@pytest.mark.parametrize("inverse", [False, True], ids=["plain", "inverse"])
@pytest.mark.parametrize("family", [*FAMILIES, "ermlp"])
def test_float64_tie_rule_gives_pykeens_float64_ranks(pykeen_datasets, family, inverse):
    """The tie rule of a GPU (near-ties rescored by a float64 copy of the model), taken on
    the CPU: every rank equals PyKEEN's evaluator's on that float64 copy, for every family
    and for a model scored through model.predict (ERMLP). The entities are made to differ
    by a millionth of their size, below what float32 scores resolve, so that the float32
    model's own evaluator ranks otherwise, and the relations are scaled by 1.5."""
    from pykeen.models import ERMLP

    from kgrank.engine.scoring import float64_copy

    dataset = pykeen_datasets["nations", inverse]
    if family == "ermlp":
        model = ERMLP(triples_factory=dataset.training, embedding_dim=16, random_seed=3).eval()
    else:
        model = _short_trained_model(dataset, family, inverse)
    with torch.no_grad():
        for representation in model.entity_representations:  # ConvE's second: the tail bias
            entities = representation._embeddings.weight
            entities.copy_(entities[:1] + 1e-6 * entities)
        # RotatE's relations off the unit circle, as between training steps (its
        # constraint is applied after each): PyKEEN then scores tails as |h o r - t| and
        # heads as |h - t o conj(r)|, which differ
        model.relation_representations[0]._embeddings.weight.mul_(1.5)
    factories, known = _factories_and_known(dataset)
    ours = compute_ranks(model, factories.testing.mapped_triples, known, progress=False, tie_rule="float64")
    reference = pykeen_evaluator_ranks(float64_copy(model), factories)
    float32 = pykeen_evaluator_ranks(model, factories)
    differ = []
    for side in ("head", "tail"):
        for rank_type in ("optimistic", "pessimistic"):
            mine = ours.loc[ours["side"] == side, rank_type].to_numpy()
            theirs = np.concatenate(reference.ranks[side, rank_type])
            np.testing.assert_array_equal(mine, theirs, err_msg=f"{family} {side} {rank_type}")
            differ.append(np.mean(np.concatenate(float32.ranks[side, rank_type]) != theirs))
    print(f"{family} {inverse}: the float32 evaluator's ranks differ in {max(differ):.2%}")
    assert max(differ) > 0


@pytest.mark.parametrize("family", ["rotate", "complex"])
def test_a_gpus_block_layout_ranks_as_the_cpus(pykeen_datasets, monkeypatch, family):
    """Off the CPU a block's triples, true entities and known answers travel to the device
    in one copy (kgrank.engine.score_pass._to_device), the filter reads them from there,
    and every row's window is rescored (kgrank.engine.ranks._flags_rows); taken on the
    CPU, that layout gives the same ranks under both tie rules."""
    from kgrank.engine import ranks, score_pass

    dataset = pykeen_datasets["kinships", True]
    model = _short_trained_model(dataset, family, True)
    _, known = _factories_and_known(dataset)
    test = dataset.testing.mapped_triples
    for tie_rule in ("pykeen", "float64"):
        host = compute_ranks(model, test, known, progress=False, tie_rule=tie_rule, batch_size=100)
        with monkeypatch.context() as patched:
            patched.setattr(score_pass, "_on_host", lambda device: False)
            patched.setattr(ranks, "_flags_rows", lambda device: False)
            copied = compute_ranks(model, test, known, progress=False, tie_rule=tie_rule, batch_size=100)
        assert host.equals(copied), tie_rule


def test_nan_scores_are_refused():
    model = _table_model()
    model.tail_scores.data[0, 0, 3] = float("nan")
    test = torch.tensor([[0, 0, 1]])
    with pytest.raises(KgrankInputError, match="the model scored NaN"):
        compute_ranks(model, test, KnownAnswers([test], 5, 1), progress=False)


@pytest.mark.parametrize(("offset", "spread"), [(10.0, 0.1), (300.0, 0.01)])
def test_near_ties_are_decided_by_pykeens_arithmetic(pykeen_datasets, monkeypatch, offset, spread):
    """Entities away from the origin and close to each other make |q|^2 - 2 q.e + |e|^2
    cancel: the product form alone then flips near-ties (checked), and the rescoring of
    near-ties through model.predict makes every rank PyKEEN's, even where the cancellation
    leaves no correct digit (offset 300, spread 0.01)."""
    from pykeen.models import TransE

    from kgrank.engine import scoring

    dataset = pykeen_datasets["nations", False]
    model = TransE(triples_factory=dataset.training, embedding_dim=16, scoring_fct_norm=2, random_seed=5)
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():
        entities = model.entity_representations[0]._embeddings.weight
        entities.copy_(offset + spread * torch.randn(entities.shape, generator=generator))
    model.eval()
    factories, known = _factories_and_known(dataset)
    evaluator = pykeen_evaluator_ranks(model, factories)

    def identical() -> bool:
        ours = compute_ranks(model, dataset.testing.mapped_triples, known, progress=False)
        return all(
            np.array_equal(
                ours.loc[ours["side"] == side, rank_type].to_numpy(),
                np.concatenate(evaluator.ranks[side, rank_type]),
            )
            for side in ("head", "tail")
            for rank_type in ("optimistic", "pessimistic")
        )

    assert identical()
    monkeypatch.setattr(scoring.Scorer, "_near_ties", lambda *args: None)
    assert not identical()


@settings(max_examples=60, deadline=None)
@given(
    num_rows=st.integers(1, 24),
    num_entities=st.integers(2, 60),
    levels=st.integers(1, 12),
    seed=st.integers(0, 2**31 - 1),
    family=st.sampled_from(["rotate", "tucker"]),
    tie_rule=st.sampled_from(["pykeen", "float64"]),
    every_row=st.booleans(),
)
def test_window_ranks_equal_the_settled_block_and_the_exact_scores(
    num_rows, num_entities, levels, seed, family, tie_rule, every_row
):
    """The rank engine rescores only the rows whose window holds a candidate besides the
    true entity (kgrank.engine.ranks._window_ranks). On blocks whose exact scores sit on a
    few levels (many exact ties) and whose product-form scores err by up to half the
    window, with filtered entries, infinite scores, unbounded and NaN windows mixed in, its
    ranks equal those of the whole block settled and counted, and those of the exact
    scores themselves, for row-wise and whole-batch rescoring. Under the tie rule float64
    the exact scores differ below float32's resolution, and the ranks are theirs. Every row
    rescored (as on a GPU) ranks as the flagged rows alone."""
    from unittest import mock

    from kgrank.engine import ranks
    from kgrank.engine.ranks import _counted_ranks, _window_ranks
    from kgrank.engine.score_pass import filter_scores
    from kgrank.engine.scoring import NearTies

    generator = torch.Generator().manual_seed(seed)
    exact = torch.randint(0, levels, (num_rows, num_entities), generator=generator).float()
    exact[torch.rand(num_rows, num_entities, generator=generator) < 0.05] = float("inf")
    half = torch.full((num_rows,), 0.3)
    half[torch.rand(num_rows, generator=generator) < 0.1] = float("inf")
    # a NaN window: the engine rescores the whole row; settling rescores no candidate there
    no_window = torch.rand(num_rows, generator=generator) < 0.1
    half[no_window] = float("nan")
    error = (torch.rand(num_rows, num_entities, generator=generator) - 0.5) * 0.3  # |error| <= half / 2
    error[torch.rand(num_rows, num_entities, generator=generator) < 0.3] = 0.0
    raw = exact + error
    true_entities = torch.randint(0, num_entities, (num_rows,), generator=generator)
    batch = torch.stack([torch.arange(num_rows), torch.zeros(num_rows, dtype=torch.int64), true_entities], 1)
    calls = []

    def predict(triples, target, ids):
        calls.append(len(triples))
        return exact[triples[:, 0].unsqueeze(1), ids]

    # under the tie rule float64, levels a billionth apart, which float32 cannot tell apart
    exact64 = exact.double()
    if tie_rule == "float64":
        exact64 += 1e-9 * torch.randint(0, 3, exact.shape, generator=generator).double()

    def float64_scores(scored_batch, side, rows, candidates):
        calls.append(len(scored_batch))
        return exact64[scored_batch[rows, 0], candidates]

    scorer = SimpleNamespace(
        model=SimpleNamespace(predict=predict),
        family=family,
        tie_rule=tie_rule,
        float64_scores=float64_scores,
    )
    near_ties = NearTies(scorer, batch, "tail", raw[torch.arange(num_rows), true_entities], half)
    filtered = torch.rand(num_rows, num_entities, generator=generator) < 0.2
    filter_rows, filter_cols = filtered.nonzero(as_tuple=True)
    num_candidates = filter_scores(exact.clone(), true_entities, filter_rows, filter_cols)

    def filtered_copy(scores):
        scores = scores.clone()
        filter_scores(scores, true_entities, filter_rows, filter_cols)
        return scores

    with mock.patch.object(ranks, "_flags_rows", lambda device: not every_row):
        windowed = _window_ranks(filtered_copy(raw), near_ties, num_candidates)
    references = [(_counted_ranks(filtered_copy(exact64), true_entities, num_candidates), slice(None))]
    if tie_rule == "pykeen":
        settled = raw.clone()
        near_ties.settle(settled)
        references.append((_counted_ranks(filtered_copy(settled), true_entities, num_candidates), ~no_window))
    for reference, rows in references:
        for name in ("optimistic", "pessimistic"):
            assert torch.equal(windowed[name][rows], reference[name][rows]), name
    if family == "tucker" and tie_rule == "pykeen":
        # every row of the batch in each whole-batch call, whichever rows are rescored
        assert set(calls) == {num_rows}
    if tie_rule == "float64":
        assert set(calls) <= {num_rows}
