"""The LCWA losses from the positives' indices equal PyKEEN's losses on the dense labels."""

from __future__ import annotations

import contextlib

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from kgrank.training.lcwa_loss import fused_loss_name, lcwa_loss_from_positives

LOSSES = ["crossentropy", "bceaftersigmoid", "softplus", "softpointwisehinge", "nssa"]
# the losses that take no label smoothing (PyKEEN raises)
UNSMOOTHED = {"nssa"}
# a margin and temperature other than PyKEEN's defaults, as the published RotatE ones are
SETTINGS = {"softpointwisehinge": {"margin": 1.7}, "nssa": {"margin": 6.0, "adversarial_temperature": 0.6}}


def _pykeen_loss(name: str, **kwargs):
    from pykeen.losses import loss_resolver

    return loss_resolver.make(name, **{**SETTINGS.get(name, {}), **kwargs})


def _smoothing(name: str, label_smoothing: float) -> float:
    return 0.0 if name in UNSMOOTHED else label_smoothing


def _both(loss, scores: torch.Tensor, labels: torch.Tensor, label_smoothing: float):
    """(PyKEEN's loss, its score gradient) and the same from the positives' indices."""
    results = []
    for fused in (False, True):
        leaf = scores.clone().requires_grad_(True)
        if fused:
            rows, columns = labels.nonzero(as_tuple=True)
            value = lcwa_loss_from_positives(loss, leaf, rows, columns, label_smoothing)
        else:
            value = loss.process_lcwa_scores(
                predictions=leaf, labels=labels, label_smoothing=label_smoothing, num_entities=labels.shape[1]
            )
        # an outer factor, so that each form's scaling of its output's gradient is tested
        (3.0 * value).backward()
        results.append((value.detach(), leaf.grad / 3.0))
    return results


def _exact(loss, scores: torch.Tensor, labels: torch.Tensor, label_smoothing: float):
    """The loss PyKEEN defines, in float64 and in a form stable for any score: PyKEEN's
    own loss (a log-softmax, a softplus, log-sigmoids), and for BCE after a sigmoid
    PyKEEN's smoothed labels under torch's BCE with logits (PyKEEN's log of a sigmoid
    loses digits as the sigmoid nears 1, in float64 too)."""
    from pykeen.losses import apply_label_smoothing

    leaf = scores.double().requires_grad_(True)
    labels = labels.double()
    if fused_loss_name(loss) != "BCEAfterSigmoidLoss":
        value = loss.process_lcwa_scores(
            predictions=leaf, labels=labels, label_smoothing=label_smoothing, num_entities=labels.shape[1]
        )
    else:
        targets = apply_label_smoothing(labels, epsilon=label_smoothing, num_classes=labels.shape[1])
        value = torch.nn.functional.binary_cross_entropy_with_logits(leaf, targets, reduction=loss.reduction)
    (3.0 * value).backward()
    return value.detach(), leaf.grad / 3.0


def _check(loss, scores: torch.Tensor, labels: torch.Tensor, label_smoothing: float, rtol: float):
    """In float64 the fused form equals the exact loss to rounding (the identity); in
    float32 it is within fp32 rounding of it, and never further off than PyKEEN's own
    float32 loss on the dense labels."""
    expected, expected_grad = _exact(loss, scores, labels, label_smoothing)
    (_, _), (value, grad) = _both(loss, scores.double(), labels.double(), label_smoothing)
    # torch's softplus returns the score itself above 20 (NSSA's PyKEEN form takes the
    # exact log-sigmoid): off by less than e^-20 per score, far below fp32 rounding
    weight = 1.0 / scores.numel() if loss.reduction == "mean" else 1.0
    torch.testing.assert_close(value, expected, rtol=1e-12, atol=scores.numel() * 2.1e-9 * weight)
    torch.testing.assert_close(grad, expected_grad, rtol=1e-10, atol=2.1e-9 * weight)
    (pykeen_value, pykeen_grad), (value32, grad32) = _both(loss, scores, labels, label_smoothing)
    torch.testing.assert_close(value32.double(), expected, rtol=rtol, atol=1e-6)
    # a gradient element is (probability - target) times the reduction's weight: its fp32
    # rounding is relative to that weight (probability - target cancels near 1), and a
    # softmax's grows with the scores (exp(s - logsumexp s), both rounded)
    grad_scale = 2 * torch.finfo(torch.float32).eps * (1.0 + float(scores.abs().max()))
    if loss.reduction == "mean":
        over_elements = fused_loss_name(loss) in (
            "BCEAfterSigmoidLoss",
            "SoftplusLoss",
            "SoftPointwiseHingeLoss",
        )
        grad_scale /= scores.numel() if over_elements else scores.shape[0]
    torch.testing.assert_close(grad32.double(), expected_grad, rtol=10 * rtol, atol=grad_scale)
    assert (
        abs(float(value32) - float(expected))
        <= abs(float(pykeen_value) - float(expected)) + rtol * abs(float(expected)) + 1e-6
    )
    return pykeen_value, pykeen_grad, value32, grad32, grad_scale


def _labels(num_rows: int, num_entities: int, generator: torch.Generator) -> torch.Tensor:
    # about 8 % positives, at least one per row, as LCWA rows have, and at least one
    # negative (NSSA's weights are a softmax over a row's negatives)
    labels = (torch.rand(num_rows, num_entities, generator=generator) < 0.08).float()
    positive = torch.randint(num_entities, (num_rows,), generator=generator)
    negative = (positive + torch.randint(1, num_entities, (num_rows,), generator=generator)) % num_entities
    labels[torch.arange(num_rows), positive] = 1.0
    labels[torch.arange(num_rows), negative] = 0.0
    return labels


@pytest.mark.parametrize(
    ("name", "label_smoothing"),
    [
        (name, smoothing)
        for name in LOSSES
        for smoothing in (0.0, 0.1, 0.93)
        if not (name in UNSMOOTHED and smoothing)
    ],
)
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_loss_and_gradient_equal_pykeens(name, label_smoothing, reduction):
    generator = torch.Generator().manual_seed(11)
    scores = 3.0 * torch.randn(9, 57, generator=generator)
    labels = _labels(9, 57, generator)
    pykeen_value, pykeen_grad, value, grad, grad_scale = _check(
        _pykeen_loss(name, reduction=reduction), scores, labels, label_smoothing, rtol=2e-6
    )
    # on scores this size PyKEEN's own float32 loss agrees too
    torch.testing.assert_close(value, pykeen_value, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(grad, pykeen_grad, rtol=1e-4, atol=10 * grad_scale)


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(LOSSES),
    num_rows=st.integers(1, 12),
    num_entities=st.integers(2, 80),
    label_smoothing=st.floats(0.0, 0.99),
    scale=st.floats(0.01, 8.0),
    seed=st.integers(0, 2**16),
)
def test_any_batch_shape_and_smoothing(name, num_rows, num_entities, label_smoothing, scale, seed):
    generator = torch.Generator().manual_seed(seed)
    scores = scale * torch.randn(num_rows, num_entities, generator=generator)
    labels = _labels(num_rows, num_entities, generator)
    _check(_pykeen_loss(name), scores, labels, _smoothing(name, label_smoothing), rtol=5e-6)


def test_smoothing_an_unsmoothed_loss_raises_pykeens_error():
    from pykeen.losses import UnsupportedLabelSmoothingError

    loss = _pykeen_loss("nssa")
    scores, rows, columns = torch.zeros(2, 4), torch.tensor([0, 1]), torch.tensor([1, 3])
    with pytest.raises(UnsupportedLabelSmoothingError):
        lcwa_loss_from_positives(loss, scores, rows, columns, 0.1)


def test_a_saturated_sigmoid_keeps_its_exact_loss_and_gradient():
    # PyKEEN's BCE takes log(1 - sigmoid(30)) of an fp32 sigmoid that rounded to 1: torch
    # clamps that log at -100 and the score gets no gradient. The fused form is exact.
    scores = torch.tensor([[30.0, 0.5, -1.0]])
    labels = torch.tensor([[0.0, 1.0, 0.0]])
    loss = _pykeen_loss("bceaftersigmoid", reduction="sum")
    (pykeen_value, pykeen_grad), (value, grad) = _both(loss, scores, labels, 0.0)
    exact = torch.nn.functional.binary_cross_entropy_with_logits(
        scores.double(), labels.double(), reduction="sum"
    )
    torch.testing.assert_close(value.double(), exact, rtol=1e-6, atol=0.0)
    assert float(grad[0, 0]) == pytest.approx(1.0)
    assert float(pykeen_grad[0, 0]) == 0.0 and float(pykeen_value) > 100.0


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_gradient_sets_aside_what_exp_cannot_give_as_a_normal_float(label_smoothing):
    """Rows whose scores spread over 200: most of exp(s - max s) lies below the smallest
    normal float32, where torch's exp is slow. The gradient writes 0 there: it is the
    exact softmax(s) - q (float64) to fp32 rounding, or within the smallest normal
    float, flushed (the workflow's training: one thread) or not."""
    from kgrank.training.lcwa_loss import cross_entropy_from_positives
    from kgrank.training.train import flushed_denormals

    generator = torch.Generator().manual_seed(5)
    scores = 200.0 * torch.rand(64, 3000, generator=generator) - 100.0
    labels = _labels(64, 3000, generator)
    rows, columns = labels.nonzero(as_tuple=True)
    counts = torch.bincount(rows, minlength=64).to(torch.float64)
    exact = torch.softmax(scores.double(), dim=1) - label_smoothing / 3000
    exact.index_put_((rows, columns), -(1.0 - label_smoothing) / counts[rows], accumulate=True)
    exact /= 64

    def gradient() -> torch.Tensor:
        leaf = scores.clone().requires_grad_(True)
        cross_entropy_from_positives(leaf, rows, columns, label_smoothing).backward()
        return leaf.grad

    shifted = scores - scores.amax(dim=1, keepdim=True)
    assert (shifted < -87.34).float().mean() > 0.3  # the slow range is exercised
    # as the workflow trains: one thread (the flush is the calling thread's setting)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with flushed_denormals():
            flushed = gradient()
    finally:
        torch.set_num_threads(threads)
    # fp32 rounding of the smoothing's term where the softmax cancels it
    atol = max(torch.finfo(torch.float32).tiny, 1e-5 * label_smoothing / 3000 / 64)
    for grad in (flushed, gradient()):
        torch.testing.assert_close(grad.double(), exact, rtol=1e-5, atol=atol)


@pytest.mark.parametrize("flush", [False, True])
def test_exp_at_most_zero_gives_the_bits_of_exp_with_the_slow_range_set_to_minus_infinity(flush):
    """The fast form of the set-aside exp: every argument at most 0 (or NaN), from wide
    spreads through the edge of the normal range to -inf, 0 and -0.0; its bits are those of
    ``threshold_(x, -87.34, -inf).exp_()``, zeros' signs included."""
    from kgrank.training.lcwa_loss import _BELOW_NORMAL_EXP, _exp_at_most_zero_, _exp_normal_or_zero_
    from kgrank.training.train import flushed_denormals

    generator = torch.Generator().manual_seed(11)
    edge = _BELOW_NORMAL_EXP + 0.01 * torch.rand(1000, generator=generator) - 0.005
    arguments = torch.cat(
        [
            -300.0 * torch.rand(5000, generator=generator),
            -90.0 * torch.rand(5000, generator=generator),
            edge,
            torch.tensor([0.0, -0.0, float("-inf"), float("nan"), _BELOW_NORMAL_EXP, -87.3365, -1e-30]),
        ]
    ).reshape(1, -1)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # the flush is the calling thread's setting
    try:
        with flushed_denormals() if flush else contextlib.nullcontext():
            expected = _exp_normal_or_zero_(arguments.clone())
            found = _exp_at_most_zero_(arguments.clone())
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(found.view(torch.int32), expected.view(torch.int32))
    assert (expected == 0).sum() > 4000 and torch.isnan(found).sum() == 1


def test_row_logsumexp_is_torchs_where_subnormals_are_flushed():
    """The log of the shifted exponentials' sums plus the maxima, as the cross-entropy's
    forward pass takes it. Rows of narrow spread: torch's logsumexp bit for bit, flushed
    or not; rows of wide spread (terms below the smallest normal float): bit for bit
    where subnormals are flushed, and within a float's rounding elsewhere."""
    from kgrank.training.lcwa_loss import _shifted_exps
    from kgrank.training.train import flushed_denormals

    def _logsumexp_rows(scores: torch.Tensor) -> torch.Tensor:
        _, sums, maxima = _shifted_exps(scores)
        return sums.log().add_(maxima)

    generator = torch.Generator().manual_seed(9)
    narrow = 20.0 * torch.randn(64, 3000, generator=generator)
    wide = 300.0 * torch.rand(64, 3000, generator=generator) - 150.0
    wide[0, :5] = float("inf")  # an infinite maximum, which torch shifts by 0
    wide[1] = float("-inf")
    for rows in (narrow, wide):
        expected, found = torch.logsumexp(rows, dim=1), _logsumexp_rows(rows)
        if rows is narrow:
            assert torch.equal(found.view(torch.int32), expected.view(torch.int32))
        else:
            torch.testing.assert_close(found, expected, rtol=1e-6, atol=0.0, equal_nan=True)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with flushed_denormals():
            # with and without a row whose maximum is +inf (the two forms of the exp)
            pairs = [(torch.logsumexp(rows, dim=1), _logsumexp_rows(rows)) for rows in (wide, wide[1:])]
    finally:
        torch.set_num_threads(threads)
    for expected, found in pairs:
        assert torch.equal(found.view(torch.int32), expected.view(torch.int32))


def test_only_pykeens_own_losses_are_fused():
    from pykeen.losses import (
        BCEAfterSigmoidLoss,
        BCEWithLogitsLoss,
        CrossEntropyLoss,
        NSSALoss,
        PointwiseHingeLoss,
        SoftplusLoss,
        SoftPointwiseHingeLoss,
    )

    class Tempered(CrossEntropyLoss):
        pass

    assert fused_loss_name(CrossEntropyLoss()) == "CrossEntropyLoss"
    assert fused_loss_name(BCEAfterSigmoidLoss(reduction="sum")) == "BCEAfterSigmoidLoss"
    assert fused_loss_name(SoftplusLoss()) == "SoftplusLoss"
    assert fused_loss_name(SoftPointwiseHingeLoss(margin=2.0)) == "SoftPointwiseHingeLoss"
    assert fused_loss_name(NSSALoss()) == "NSSALoss"
    # a softplus other than torch's default, which the fused form assumes
    for activation in (torch.nn.Softplus(beta=2.0), torch.nn.Softplus(threshold=5.0)):
        other = SoftplusLoss()
        other.margin_activation = activation
        assert fused_loss_name(other) is None
    # PyKEEN's NSSA is NaN at a temperature of 0 or below; the fused form would not be
    assert fused_loss_name(NSSALoss(adversarial_temperature=0.0)) is None
    with pytest.raises(ValueError, match="label smoothing must be at least 0"):
        lcwa_loss_from_positives(
            SoftplusLoss(), torch.zeros(1, 3), torch.tensor([0]), torch.tensor([1]), -0.1
        )
    assert fused_loss_name(PointwiseHingeLoss()) is None
    assert fused_loss_name(BCEWithLogitsLoss()) is None
    assert fused_loss_name(Tempered()) is None
    with pytest.raises(ValueError, match="PointwiseHingeLoss has no fused LCWA form"):
        lcwa_loss_from_positives(
            PointwiseHingeLoss(), torch.zeros(1, 2), torch.tensor([0]), torch.tensor([1]), 0.0
        )
