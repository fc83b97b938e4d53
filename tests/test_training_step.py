"""The 1-N training step: one step's scores, loss and gradients equal PyKEEN's own."""

from __future__ import annotations

import pytest
import torch

from kgrank.engine.scoring import product_form_family
from kgrank.training.lcwa_loss import lcwa_loss_from_positives
from kgrank.training.step import _collate, dense_labels, fast_scores, sparse_label_batches

FAMILIES = {
    "transe-l1": ("transe", {"embedding_dim": 24, "scoring_fct_norm": 1}),
    "transe-l2": ("transe", {"embedding_dim": 24, "scoring_fct_norm": 2}),
    "rotate": ("rotate", {"embedding_dim": 12}),
    "complex": ("complex", {"embedding_dim": 12}),
    "distmult": ("distmult", {"embedding_dim": 16}),
    "rescal": ("rescal", {"embedding_dim": 8}),
    # dropout and batch norm in training mode: the masks must be drawn in PyKEEN's order
    "tucker": (
        "tucker",
        {
            "embedding_dim": 16,
            "relation_dim": 8,
            "dropout_0": 0.3,
            "dropout_1": 0.4,
            "dropout_2": 0.5,
            "apply_batch_normalization": True,
        },
    ),
    # its convolutional encoder with PyKEEN's default dropouts and batch norms (training mode)
    "conve": (
        "conve",
        {"embedding_dim": 16, "embedding_height": 4, "embedding_width": 4, "output_channels": 4},
    ),
}
# Families scored by a product form for tails only (heads: tails of the inverse relations).
TAIL_ONLY = {"tucker", "conve"}


def _kinships():
    from pykeen.datasets import Kinships

    return Kinships(create_inverse_triples=True).training


def _random_graph(unique: bool = False):
    """40 entities, 5 relations, 300 random triples (with their duplicates, or not)."""
    from pykeen.triples import CoreTriplesFactory

    generator = torch.Generator().manual_seed(3)
    num_entities, num_relations, num_triples = 40, 5, 300
    triples = torch.stack(
        [
            torch.randint(num_entities, (num_triples,), generator=generator),
            torch.randint(num_relations, (num_triples,), generator=generator),
            torch.randint(num_entities, (num_triples,), generator=generator),
        ],
        dim=1,
    )
    if unique:
        triples = torch.unique(triples, dim=0)
    return CoreTriplesFactory.create(
        mapped_triples=triples, num_entities=num_entities, num_relations=num_relations
    )


GRAPHS = {"kinships": _kinships, "random": _random_graph}


def _step(factory, model_name, model_kwargs, *, fast: bool, direction: str, loss: str):
    """One LCWA step as PyKEEN's loop takes it: scores of a batch against every entity,
    the loss with label smoothing and the regularisation term, then backward."""
    from pykeen.losses import loss_resolver
    from pykeen.models import model_resolver

    model = model_resolver.make(
        model_name, triples_factory=factory, random_seed=1, loss=loss_resolver.make(loss), **model_kwargs
    )
    model.train()
    rows = torch.randperm(factory.num_triples, generator=torch.Generator().manual_seed(0))[:48]
    triples = factory.mapped_triples[rows]
    # score_t takes (h, r) pairs and predicts t; score_h takes (r, t) pairs and predicts h
    pairs, targets = (
        (triples[:, :2], triples[:, 2]) if direction == "tail" else (triples[:, 1:], triples[:, 0])
    )
    labels = torch.zeros(len(rows), factory.num_entities)
    labels[torch.arange(len(rows)), targets] = 1.0
    method = "score_t" if direction == "tail" else "score_h"
    torch.manual_seed(5)  # the same dropout masks on both paths
    if fast:
        with fast_scores(model) as family:
            scores = getattr(model, method)(pairs)
        assert family is not None and family == product_form_family(model)[0]
    else:
        scores = getattr(model, method)(pairs)
    value = model.loss.process_lcwa_scores(
        predictions=scores, labels=labels, label_smoothing=0.1, num_entities=factory.num_entities
    )
    value = value + model.collect_regularization_term()
    value.backward()
    gradients = {name: parameter.grad for name, parameter in model.named_parameters()}
    return scores.detach(), value.item(), gradients


@pytest.mark.parametrize("graph", sorted(GRAPHS))
@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_one_step_equals_pykeen(graph, family, monkeypatch):
    import kgrank.training.step

    # PyKEEN's dropout modules on both paths, so that the masks are the same draws;
    # kgrank's own masks are checked in test_dropout_keeps_its_share_scaled
    monkeypatch.setattr(kgrank.training.step, "dropout", lambda module, x: module(x))
    factory = GRAPHS[graph]()
    model_name, model_kwargs = FAMILIES[family]
    directions = ("tail",) if family in TAIL_ONLY else ("tail", "head")
    for direction in directions:
        outcomes = [
            _step(factory, model_name, model_kwargs, fast=fast, direction=direction, loss="bcewithlogits")
            for fast in (False, True)
        ]
        (pykeen_scores, pykeen_loss, pykeen_gradients), (scores, loss, gradients) = outcomes
        torch.testing.assert_close(scores, pykeen_scores, rtol=1e-5, atol=1e-5)
        assert loss == pytest.approx(pykeen_loss, rel=1e-5)
        assert gradients.keys() == pykeen_gradients.keys()
        # A gradient that nearly cancels (ConvE's input batch-norm scale: 4e-7 against 1e-2
        # elsewhere) is compared on the model's largest gradient's scale, not its own.
        floor = 1e-2 * max(float(g.abs().max()) for g in pykeen_gradients.values() if g is not None)
        for name, expected in pykeen_gradients.items():
            if expected is None:
                assert gradients[name] is None, name
                continue
            scale = max(float(expected.abs().max()), floor) + 1e-12
            assert float((gradients[name] - expected).abs().max()) / scale < 1e-4, (direction, name)


@pytest.mark.parametrize("rate", [0.15, 0.45])
def test_dropout_keeps_its_share_scaled(rate):
    from kgrank.training.step import dropout

    module = torch.nn.Dropout(rate)
    x = torch.rand(400, 500) + 0.5  # no zeros of its own
    torch.manual_seed(0)
    kept = dropout(module, x) != 0
    # 200,000 draws: the kept share within 4 standard deviations of 1 - p
    assert abs(float(kept.float().mean()) - (1 - rate)) < 4 * (rate * (1 - rate) / x.numel()) ** 0.5
    torch.manual_seed(0)
    dropped = dropout(module, x)
    torch.testing.assert_close(dropped[kept], x[kept] / (1 - rate))
    leaf = x.clone().requires_grad_(True)
    torch.manual_seed(0)
    dropout(module, leaf).sum().backward()
    torch.testing.assert_close(leaf.grad, kept.float() / (1 - rate))
    module.eval()
    assert torch.equal(dropout(module, x), x)
    assert torch.equal(dropout(torch.nn.Dropout(1.0), x), torch.zeros_like(x))


def test_the_block_restores_pykeen_methods():
    from pykeen.models import model_resolver

    model = model_resolver.make("distmult", triples_factory=_random_graph(), embedding_dim=4, random_seed=0)
    class_method = type(model).score_t
    with fast_scores(model) as family:
        assert family == "distmult"
        assert model.score_t.__func__ is not class_method if hasattr(model.score_t, "__func__") else True
    assert model.score_t.__func__ is class_method
    assert "score_t" not in model.__dict__ and "score_h" not in model.__dict__


def test_other_models_are_left_to_pykeen():
    from pykeen.models import model_resolver

    model = model_resolver.make("simple", triples_factory=_random_graph(), embedding_dim=4, random_seed=0)
    assert product_form_family(model) is None
    with fast_scores(model) as family:
        assert family is None
        assert "score_t" not in model.__dict__


def test_a_subset_of_tails_goes_through_pykeen():
    from pykeen.models import model_resolver

    model = model_resolver.make("transe", triples_factory=_random_graph(), embedding_dim=4, random_seed=0)
    pairs = torch.tensor([[0, 1], [2, 3]])
    tails = torch.tensor([4, 5, 6])
    expected = model.score_t(pairs, tails=tails)
    with fast_scores(model):
        torch.testing.assert_close(model.score_t(pairs, tails=tails), expected)


def test_zero_distance_has_a_zero_gradient():
    from kgrank.training.step import negative_distances

    query = torch.tensor([[1.0, 2.0]], requires_grad=True)
    entities = torch.tensor([[1.0, 2.0], [4.0, 6.0]])
    scores = negative_distances(query, entities, 2, power_norm=False)
    torch.testing.assert_close(scores.detach(), torch.tensor([[0.0, -5.0]]))
    scores[0, 0].backward()
    assert torch.isfinite(query.grad).all() and float(query.grad.abs().max()) == 0.0
    # a NaN gradient from the loss stays NaN, as autograd of the norm would pass it on
    query.grad = None
    negative_distances(query, entities, 2, power_norm=False)[0, 1].mul(float("nan")).backward()
    assert torch.isnan(query.grad).all()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_l2_distances_and_their_gradients_are_the_broadcast_norms(seed):
    """The hand-written gradient of -||q - e||_2: torch's numerical check (float64), and
    the broadcast norm's own value and gradients, with either side alone requiring one."""
    from kgrank.training.step import negative_distances

    generator = torch.Generator().manual_seed(seed)
    query = torch.randn(6, 5, generator=generator, dtype=torch.float64)
    entities = torch.randn(9, 5, generator=generator, dtype=torch.float64)
    outer = torch.randn(6, 9, generator=generator, dtype=torch.float64)

    def scores(query, entities):
        return negative_distances(query, entities, 2, power_norm=False)

    assert torch.autograd.gradcheck(scores, (query.requires_grad_(), entities.requires_grad_()))
    brute = -(query[:, None, :] - entities[None, :, :]).norm(dim=2)
    torch.testing.assert_close(scores(query, entities), brute)
    for needs in ((True, True), (True, False), (False, True)):
        leaves = [
            side.detach().requires_grad_(need) for side, need in zip((query, entities), needs, strict=True)
        ]
        wanted = [leaf for leaf in leaves if leaf.requires_grad]
        expected = torch.autograd.grad(-(leaves[0][:, None] - leaves[1][None]).norm(dim=2), wanted, outer)
        found = torch.autograd.grad(scores(*leaves), wanted, outer)
        for left, right in zip(found, expected, strict=True):
            torch.testing.assert_close(left, right)


def _two_epochs(
    factory, *, sparse: bool, sub_batch_size: int | None, fused: bool = False, loss: str = "crossentropy"
):
    """Two seeded LCWA epochs with kgrank's scores, with PyKEEN's dense label rows or
    with kgrank's sparse ones (and PyKEEN's loss or the fused one); returns the losses
    and the trained weights."""
    from pykeen.losses import loss_resolver
    from pykeen.models import DistMult
    from pykeen.training import LCWATrainingLoop
    from pykeen.utils import set_random_seed

    set_random_seed(7)
    model = DistMult(triples_factory=factory, embedding_dim=8, loss=loss_resolver.make(loss), random_seed=7)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    with fast_scores(model):
        loop = LCWATrainingLoop(
            model=model, triples_factory=factory, optimizer=optimizer, automatic_memory_optimization=False
        )
        if sparse:
            assert sparse_label_batches(loop, fused_loss=fused)
        losses = loop.train(
            triples_factory=factory,
            num_epochs=2,
            batch_size=64,
            sub_batch_size=sub_batch_size,
            # the self-adversarial loss takes no smoothing (PyKEEN raises)
            label_smoothing=0.0 if loss == "nssa" else 0.1,
            use_tqdm=False,
        )
    return losses, {name: value.clone() for name, value in model.state_dict().items()}


@pytest.mark.parametrize("sub_batch_size", [None, 24])
def test_sparse_label_batches_train_as_pykeen_to_the_bit(sub_batch_size):
    factory = _kinships()
    pykeen_losses, pykeen_weights = _two_epochs(factory, sparse=False, sub_batch_size=sub_batch_size)
    losses, weights = _two_epochs(factory, sparse=True, sub_batch_size=sub_batch_size)
    assert losses == pykeen_losses
    assert weights.keys() == pykeen_weights.keys()
    for name, expected in pykeen_weights.items():
        assert torch.equal(weights[name], expected), name


@pytest.mark.parametrize("loss", ["crossentropy", "bceaftersigmoid", "softplus", "nssa"])
@pytest.mark.parametrize("sub_batch_size", [None, 24])
def test_the_fused_loss_trains_as_pykeen_to_fp32_rounding(loss, sub_batch_size, monkeypatch):
    import kgrank.training.step

    fused_calls = []

    def counted(*args, **kwargs):
        fused_calls.append(1)
        return lcwa_loss_from_positives(*args, **kwargs)

    monkeypatch.setattr(kgrank.training.step, "lcwa_loss_from_positives", counted)
    factory = _random_graph(unique=True)
    pykeen_losses, pykeen_weights = _two_epochs(
        factory, sparse=False, sub_batch_size=sub_batch_size, loss=loss
    )
    assert not fused_calls
    losses, weights = _two_epochs(factory, sparse=True, sub_batch_size=sub_batch_size, fused=True, loss=loss)
    # every (sub-)batch of both epochs went through the fused loss: 149 (head, relation)
    # pairs in batches of 64, 64 and 21, or sub-batches of 24, 24, 16, 24, 24, 16, 21
    assert len(fused_calls) == 2 * (3 if sub_batch_size is None else 7)
    assert losses == pytest.approx(pykeen_losses, rel=1e-5)
    for name, expected in pykeen_weights.items():
        torch.testing.assert_close(weights[name], expected, rtol=1e-4, atol=1e-5, msg=name)


def test_a_duplicate_triple_keeps_pykeens_loss(monkeypatch):
    # its label is 2: PyKEEN's cross-entropy weighs it twice, so the batch is PyKEEN's
    import kgrank.training.step

    def refuse(*args, **kwargs):
        raise AssertionError("the fused loss ran on a duplicate label")

    monkeypatch.setattr(kgrank.training.step, "lcwa_loss_from_positives", refuse)
    factory = _random_graph()
    pykeen_losses, pykeen_weights = _two_epochs(factory, sparse=False, sub_batch_size=None)
    losses, weights = _two_epochs(factory, sparse=True, sub_batch_size=None, fused=True)
    assert losses == pykeen_losses
    for name, expected in pykeen_weights.items():
        assert torch.equal(weights[name], expected), name


def test_dense_labels_are_pykeens_label_rows():
    from pykeen.triples.instances import LCWAInstances

    instances = LCWAInstances.from_triples_factory(_random_graph())
    items = [5, 0, 17, 3, 11, 9]
    batch = _collate(instances)(items)
    expected = torch.stack([instances[item]["target"] for item in items])
    assert torch.equal(
        batch["pairs"], torch.stack([torch.as_tensor(instances.pairs[item]) for item in items])
    )
    assert torch.equal(dense_labels(batch, None, None, expected.shape[1]), expected)
    # a sub-batch: rows 2..4 of the batch
    assert torch.equal(dense_labels(batch, 2, 5, expected.shape[1]), expected[2:5])


def test_sparse_label_batches_leave_other_loops_alone():
    from pykeen.models import DistMult
    from pykeen.training import LCWATrainingLoop, SLCWATrainingLoop

    factory = _random_graph()
    model = DistMult(triples_factory=factory, embedding_dim=4, random_seed=0)
    slcwa = SLCWATrainingLoop(model=model, triples_factory=factory)
    assert sparse_label_batches(slcwa) is False
    assert "_process_batch" not in vars(slcwa)
    heads = LCWATrainingLoop(model=model, triples_factory=factory, target="head")
    assert sparse_label_batches(heads) is False
    assert "_create_training_data_loader" not in vars(heads)


def _slcwa_epochs(factory, model_name: str, *, one_lookup: bool, filtered: bool = False, **model_kwargs):
    """Two seeded sLCWA epochs (4 negatives per positive), PyKEEN's step or kgrank's;
    returns the losses, the trained weights and the number of entity lookups."""
    from pykeen.models import model_resolver
    from pykeen.training import SLCWATrainingLoop
    from pykeen.utils import set_random_seed

    from kgrank.training.step import one_lookup_batches

    set_random_seed(7)
    model = model_resolver.make(model_name, triples_factory=factory, random_seed=7, **model_kwargs)
    lookups = []
    model.entity_representations[0].register_forward_hook(lambda *args: lookups.append(1))
    loop = SLCWATrainingLoop(
        model=model,
        triples_factory=factory,
        optimizer=torch.optim.Adam(model.parameters(), lr=0.01),
        negative_sampler_kwargs={"num_negs_per_pos": 4, "filtered": filtered},
    )
    if one_lookup:
        assert one_lookup_batches(loop)
    losses = loop.train(triples_factory=factory, num_epochs=2, batch_size=64, use_tqdm=False)
    weights = {name: value.clone() for name, value in model.state_dict().items()}
    return losses, weights, len(lookups)


@pytest.mark.parametrize(
    ("model_name", "model_kwargs"),
    [("transe", {"embedding_dim": 8}), ("rotate", {"embedding_dim": 6}), ("distmult", {"embedding_dim": 8})],
)
def test_one_lookup_batches_train_as_pykeen_to_fp32_rounding(model_name, model_kwargs):
    factory = _random_graph(unique=True)
    pykeen_losses, pykeen_weights, pykeen_lookups = _slcwa_epochs(
        factory, model_name, one_lookup=False, regularizer=None, **model_kwargs
    )
    losses, weights, lookups = _slcwa_epochs(
        factory, model_name, one_lookup=True, regularizer=None, **model_kwargs
    )
    # PyKEEN looks heads and tails up apart for positives and negatives; kgrank once
    assert pykeen_lookups == 4 * lookups
    assert losses == pytest.approx(pykeen_losses, rel=1e-5)
    assert weights.keys() == pykeen_weights.keys()
    for name, expected in pykeen_weights.items():
        torch.testing.assert_close(weights[name], expected, rtol=1e-4, atol=1e-5, msg=name)


def test_one_lookup_batches_leave_what_one_call_would_change_to_pykeen():
    from pykeen.models import ComplEx, DistMult, TuckER
    from pykeen.training import LCWATrainingLoop, SLCWATrainingLoop

    from kgrank.training.step import one_lookup_batches

    factory = _random_graph(unique=True)
    # a filtered sampler's batches carry masks: PyKEEN's step, to the bit
    settings = {"filtered": True, "embedding_dim": 8, "regularizer": None}
    pykeen_losses, pykeen_weights, _ = _slcwa_epochs(factory, "distmult", one_lookup=False, **settings)
    losses, weights, _ = _slcwa_epochs(factory, "distmult", one_lookup=True, **settings)
    assert losses == pykeen_losses
    for name, expected in pykeen_weights.items():
        assert torch.equal(weights[name], expected), name
    # ComplEx's default Lp regulariser averages over each lookup's rows
    regularised = SLCWATrainingLoop(
        model=ComplEx(triples_factory=factory, embedding_dim=4), triples_factory=factory
    )
    assert one_lookup_batches(regularised) is False
    assert "_process_batch" not in vars(regularised)
    lcwa = LCWATrainingLoop(model=DistMult(triples_factory=factory, embedding_dim=4), triples_factory=factory)
    assert one_lookup_batches(lcwa) is False
    # batch norm sees a call's rows as one batch: PyKEEN normalises positives and negatives apart
    normalised = SLCWATrainingLoop(
        model=TuckER(
            triples_factory=factory, embedding_dim=4, relation_dim=4, apply_batch_normalization=True
        ),
        triples_factory=factory,
    )
    assert one_lookup_batches(normalised) is False

    class OwnLookup(DistMult):
        def _get_representations(self, *args, **kwargs):
            return super()._get_representations(*args, **kwargs)

    custom = SLCWATrainingLoop(
        model=OwnLookup(triples_factory=factory, regularizer=None), triples_factory=factory
    )
    assert one_lookup_batches(custom) is False
