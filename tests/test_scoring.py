"""kgrank.engine.scoring: every candidate's score by a product form, with PyKEEN's near-tie order."""

import pytest
import torch

from kgrank.engine.scoring import BIT_IDENTICAL, SquaredDistanceError, _broadcast_norms

# Small dimensions keep the tests fast; the arithmetic is the same at any size.
# (tests/test_ranks.py ranks with the same families)
FAMILIES = {
    "transe-l1": ("transe", {"scoring_fct_norm": 1, "embedding_dim": 32}),
    "transe-l2": ("transe", {"scoring_fct_norm": 2, "embedding_dim": 32}),
    "rotate": ("rotate", {"embedding_dim": 32}),
    "complex": ("complex", {"embedding_dim": 32}),
    "distmult": ("distmult", {"embedding_dim": 32}),
    "rescal": ("rescal", {"embedding_dim": 16}),
    "tucker": ("tucker", {"embedding_dim": 32, "relation_dim": 16}),
    "conve": (
        "conve",
        {"embedding_dim": 32, "embedding_height": 4, "embedding_width": 8, "output_channels": 4},
    ),
}
# Families scored by a product form for tails only (heads: tails of the inverse relations).
TAIL_ONLY = {"tucker", "conve"}


@pytest.fixture(scope="module")
def nations():
    from pykeen.datasets import Nations

    return {inverse: Nations(create_inverse_triples=inverse) for inverse in (False, True)}


def _model(nations, family, inverse, seed=1):
    from pykeen.models import model_resolver

    name, kwargs = FAMILIES[family]
    dataset = nations[inverse]
    return model_resolver.make(name, triples_factory=dataset.training, random_seed=seed, **kwargs).eval()


@pytest.mark.parametrize("family", list(FAMILIES))
def test_fast_scores_equal_pykeens_scores(nations, family):
    """Score blocks agree with model.predict to float32 rounding, both sides, with and without inverses."""
    from kgrank.engine.scoring import Scorer

    for inverse in (False, True):
        model = _model(nations, family, inverse)
        batch = nations[inverse].testing.mapped_triples[:64]
        for side in ("head", "tail"):
            with torch.inference_mode():
                expected = model.predict(batch, target=side)
            scale = float(expected.abs().max())
            torch.testing.assert_close(Scorer(model)(batch, side), expected, rtol=1e-5, atol=1e-5 * scale)


@pytest.mark.parametrize("family", list(FAMILIES))
@pytest.mark.parametrize("inverse", [False, True], ids=["plain", "inverse"])
def test_family_and_fast_sides(nations, family, inverse):
    from kgrank.engine.scoring import Scorer

    model = _model(nations, family, inverse)
    scorer = Scorer(model)
    assert scorer.family == FAMILIES[family][0]
    assert scorer.fast_for("tail")
    # TuckER and ConvE score heads by a product form only as tails of inverse relations
    assert scorer.fast_for("head") == (family not in TAIL_ONLY or inverse)
    slow = Scorer(model, fast=False)
    assert slow.family == "pykeen" and not slow.fast_for("tail") and not slow.fast_for("head")
    batch = nations[inverse].testing.mapped_triples[:8]
    with torch.inference_mode():
        expected = model.predict(batch, target="head").float()
    assert torch.equal(slow(batch, "head"), expected)


def test_other_models_go_through_predict(nations):
    from pykeen.models import model_resolver

    from kgrank.engine.scoring import Scorer

    model = model_resolver.make("ermlp", triples_factory=nations[False].training, embedding_dim=8).eval()
    scorer = Scorer(model)
    assert scorer.family == "pykeen" and not scorer.fast_for("tail")
    batch = nations[False].testing.mapped_triples[:4]
    with torch.inference_mode():
        assert torch.equal(scorer(batch, "tail"), model.predict(batch, target="tail").float())


def _near(error, scores, true_scores):
    centre, half = error.window(true_scores)
    return (scores - centre.unsqueeze(1)).abs() <= half.unsqueeze(1)


def test_squared_distance_window_holds_what_rounding_may_flip():
    error = SquaredDistanceError(bound=torch.tensor([0.1, 0.0]), squared_scores=True)
    scores = torch.tensor([[-1.0, -1.15, -1.25], [-2.0, -2.0, -2.1]])
    # within twice the bound of the true score (row 0: 0.2; row 1: exact ties only)
    assert _near(error, scores, torch.tensor([-1.0, -2.0])).tolist() == [
        [True, True, False],
        [True, True, False],
    ]
    # on -sqrt(a) scores: every candidate whose a lies within twice the bound of the true
    # entity's a, and none beyond 2.1 bounds (the window's widening against float32 rounding)
    generator = torch.Generator().manual_seed(0)
    true_squared = 10.0 * torch.rand(500, generator=generator)
    bound = 0.5 * torch.rand(500, generator=generator) * true_squared
    offsets = (2.0 * torch.rand(500, 40, generator=generator) - 1.0) * 4.0 * bound.unsqueeze(1)
    scores = -(true_squared.unsqueeze(1) + offsets).clamp(min=0.0).sqrt()
    true_scores = -true_squared.sqrt()
    near = _near(SquaredDistanceError(bound=bound, squared_scores=False), scores, true_scores)
    gap = (scores.double() ** 2 - true_scores.double().unsqueeze(1) ** 2).abs()
    inside = gap <= 2.0 * bound.double().unsqueeze(1)
    assert inside.any() and (~inside).any()
    assert near[inside].all()
    assert not near[gap > 2.1 * bound.double().unsqueeze(1)].any()
    assert BIT_IDENTICAL == "bit-identical"


@pytest.mark.parametrize("p", [1.0, 3.0])
@pytest.mark.parametrize("max_elements", [1, 40, 2**28])
def test_the_gpus_broadcast_norms_equal_cdist_in_every_chunking(p, max_elements):
    # the path a GPU takes for norms other than L2 (cdist there is a slow generic kernel)
    generator = torch.Generator().manual_seed(0)
    query, entities = torch.randn(6, 5, generator=generator), torch.randn(23, 5, generator=generator)
    norms = _broadcast_norms(query, entities, p, max_elements=max_elements)
    assert norms.shape == (6, 23)
    torch.testing.assert_close(norms, torch.cdist(query[None], entities[None], p=p)[0])


def _same_order(scores, reference, true_entities):
    """Whether every candidate sits on the same side of (or ties with) the true entity."""
    rows = torch.arange(len(true_entities))
    ours = torch.sign(scores - scores[rows, true_entities].unsqueeze(1))
    theirs = torch.sign(reference - reference[rows, true_entities].unsqueeze(1))
    return bool(torch.equal(ours, theirs))


@pytest.mark.parametrize(("offset", "spread"), [(10.0, 0.1), (300.0, 0.01)])
def test_near_ties_are_rescored_with_pykeens_arithmetic(nations, monkeypatch, offset, spread):
    """Entities away from the origin and close to each other make |q|^2 - 2 q.e + |e|^2
    cancel: the product form alone then orders some candidates differently from
    model.predict against the true entity (checked), and rescoring its near-ties
    through model.predict gives every candidate PyKEEN's order."""
    from pykeen.models import TransE

    from kgrank.engine import scoring

    dataset = nations[False]
    model = TransE(triples_factory=dataset.training, embedding_dim=16, scoring_fct_norm=2, random_seed=5)
    generator = torch.Generator().manual_seed(5)
    with torch.no_grad():
        entities = model.entity_representations[0]._embeddings.weight
        entities.copy_(offset + spread * torch.randn(entities.shape, generator=generator))
    model.eval()
    batch = dataset.testing.mapped_triples
    for side in ("head", "tail"):
        with torch.inference_mode():
            reference = model.predict(batch, target=side)
        true_entities = batch[:, 0] if side == "head" else batch[:, 2]
        assert _same_order(scoring.Scorer(model)(batch, side), reference, true_entities), side
    monkeypatch.setattr(scoring.Scorer, "_near_ties", lambda *args: None)
    assert not all(
        _same_order(scoring.Scorer(model)(batch, side), model.predict(batch, target=side), truth)
        for side, truth in (("head", batch[:, 0]), ("tail", batch[:, 2]))
    )


@pytest.mark.parametrize("family", ["rotate", "tucker"])
@pytest.mark.parametrize("num_rows", [1, 30])
def test_near_ties_are_rescored_once_each_in_groups_of_every_width(num_rows, family):
    """Rows with 0 to 40 near candidates go to model.predict in groups padded to 8, 16, 32
    and 64 (RotatE), or all together padded to the largest count (TuckER, whose PyKEEN
    scores depend on the rows of the call): every near candidate, and the true entity,
    gets its own predicted score, and no other score changes."""
    from types import SimpleNamespace

    from kgrank.engine.scoring import Scorer, _padded_widths

    assert _padded_widths(torch.tensor([0, 1, 8, 9, 16, 17, 40, 2**33 + 1])).tolist() == [
        8,
        8,
        8,
        16,
        16,
        32,
        64,
        2**34,
    ]
    num_entities = 80
    generator = torch.Generator().manual_seed(num_rows)
    batch = torch.stack(
        [
            torch.arange(num_rows),
            torch.zeros(num_rows, dtype=torch.int64),
            torch.randint(0, num_entities, (num_rows,), generator=generator),
        ],
        dim=1,
    )
    # spaced 10 apart (the relative tolerance is 1e-4 of about 1,800), then some candidates
    # of each row moved next to its true entity's score
    scores = 1000.0 + 10.0 * torch.arange(num_entities, dtype=torch.float32).repeat(num_rows, 1)
    near = torch.zeros(num_rows, num_entities, dtype=torch.bool)
    for row in range(num_rows):
        count = 40 if row == 0 else int(torch.randint(0, 41, (1,), generator=generator))
        columns = torch.randperm(num_entities, generator=generator)[:count]
        scores[row, columns] = scores[row, batch[row, 2]] + 0.01
        near[row, columns] = True
        near[row, batch[row, 2]] = True

    calls = []

    def predict(triples, target, ids):
        assert target == "tail"
        calls.append((len(triples), ids.shape[1]))
        return -(1000.0 * triples[:, :1] + ids).float()

    scorer = Scorer.__new__(Scorer)
    scorer.model, scorer.family, scorer.tie_rule = SimpleNamespace(predict=predict), family, "pykeen"
    settled = scores.clone()
    scorer._near_ties(batch, "tail", settled, None).settle(settled)
    expected = -(1000.0 * batch[:, :1] + torch.arange(num_entities)).float().expand(num_rows, -1)
    assert torch.equal(settled[near], expected[near])
    assert torch.equal(settled[~near], scores[~near])
    if family == "rotate":
        assert (
            all(width in (8, 16, 32, 64) for _, width in calls) and sum(rows for rows, _ in calls) == num_rows
        )
    else:
        assert calls == [(num_rows, max(8, int(near.sum(dim=1).max())))]
