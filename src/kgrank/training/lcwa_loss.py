"""The LCWA losses from the positives' indices, without the dense label block.

PyKEEN's LCWA step hands its loss a dense (batch x entities) label block, smooths it
and runs the loss over every element, several passes each way. Every loss the
published LCWA configurations use (cross-entropy, BCE after a sigmoid, softplus), and
the self-adversarial one that the training benchmark's LCWA step gives RotatE, has a
closed form in the scores and the positions of the positives alone (ε the label
smoothing, N the number of entities, P_i the positives of row i, k_i = |P_i|, m a
margin, T the adversarial temperature):

    cross-entropy (softmax)   PyKEEN normalises each label row to sum 1 and lets torch
                              smooth it towards the uniform distribution over all N:
                              q_ij = (1 - ε) [j in P_i] / k_i + ε / N, so
                              loss_i = logsumexp_j s_ij - (1 - ε) mean_{j in P_i} s_ij
                                       - ε mean_j s_ij
    BCE after a sigmoid       PyKEEN smooths a one to 1 - ε and a zero to ε / (N - 1)
                              (``apply_label_smoothing``); with t_ij that target,
                              -t log σ(s) - (1 - t) log(1 - σ(s)) = softplus(s) - t s, so
                              the sum over a row is sum_j softplus(s_ij) - t_0 sum_j s_ij
                              - (t_1 - t_0) sum_{j in P_i} s_ij
    soft pointwise hinge      softplus(m - (2t - 1) s) with the same smoothed targets (the
    (softplus: margin m = 0)  softplus loss is its m = 0): with c = 1 - 2t, a row sums
                              sum_j softplus(m + c_0 s_ij)
                              + sum_{j in P_i} [softplus(m + c_1 s_ij) - softplus(m + c_0 s_ij)]
    self-adversarial (NSSA)   PyKEEN's LCWA form: the positives' -log σ(m + s) reduced over
                              the positives, and each row's softplus(s_ij + m) weighted by
                              the softmax of T s_ij over its negatives (a positive weighs 0),
                              reduced over rows, both halved under the mean; no smoothing

The reductions are PyKEEN's: a mean over rows (cross-entropy, NSSA's negatives), over
every element (BCE, soft hinge) or over the positives (NSSA's), or their sums. The loss
and its gradients equal PyKEEN's to fp32 rounding (tests/test_lcwa_loss.py), with one
deliberate difference for BCE: torch's
``binary_cross_entropy`` takes the log of a sigmoid that has already rounded to 0 or 1
in fp32 (a score above about 16.6, or below about -88), clamps that log at -100 and so
gives the saturated score no gradient; the form above keeps the exact value and its
gradient there. No library computes these losses from indices (torch's
``cross_entropy`` with class indices takes one positive per row and smooths differently),
so they are written here.
"""

from __future__ import annotations

from typing import Any

import torch

# PyKEEN loss classes with a fused form here, by the exact class (a subclass may change
# the loss and must go through PyKEEN).
FUSED_LOSSES = (
    "CrossEntropyLoss",
    "BCEAfterSigmoidLoss",
    "SoftplusLoss",
    "SoftPointwiseHingeLoss",
    "NSSALoss",
)
# torch.nn.Softplus's defaults, which PyKEEN's soft hinge takes and the fused form assumes
_SOFTPLUS = {"beta": 1.0, "threshold": 20.0}

# Just below ln of the smallest normal float32 (-87.3365): exp of an argument below it is
# subnormal or 0, and torch's vectorised exp leaves its fast path for such arguments, -inf
# included (a 256 x 14,541 block: 0.45 ms where every argument is in [-60, 0], 7.6 ms where
# every one is -inf, 79 ms where every one is -100; flushing subnormals does not help).
# Arguments in (-87.34, -87.3365) still take the slow path, but only they.
_BELOW_NORMAL_EXP = -87.34


def _exp_normal_or_zero_(x: torch.Tensor) -> torch.Tensor:
    """exp of ``x`` in place, with 0 where the argument is at or below
    ``_BELOW_NORMAL_EXP``: the subnormal results there are what a thread that flushes
    subnormals (the workflow's training, kgrank.training.train.flushed_denormals) reads as
    0 anyway, so under it the result is bit-identical to ``x.exp_()``. On a 256 x 14,541
    block of arguments in [-200, 0]: 13 ms against plain exp's 58."""
    return torch.nn.functional.threshold_(x, _BELOW_NORMAL_EXP, float("-inf")).exp_()


def _exp_at_most_zero_(x: torch.Tensor) -> torch.Tensor:
    """:func:`_exp_normal_or_zero_` of ``x`` (every element at most 0, or NaN) to the bit,
    the set-aside arguments' exps on the fast path too: they become 1 instead of -inf, and
    after the exp (e, where every kept result is at most 1) become 0 by a second
    threshold on the negated block. No torch operator zeroes the elements above a bound
    in place; a boolean mask and ``masked_fill_`` take longer than the two negations.
    Five passes over the block, on a 256 x 14,541 block of arguments in [-200, 0] 2.0 ms
    against 13 (1.4 ms against 0.95 where no argument is set aside)."""
    torch.nn.functional.threshold_(x, _BELOW_NORMAL_EXP, 1.0).exp_().neg_()
    # -0.0 in, so that the set-aside elements come out +0.0, the bits of exp(-inf)
    return torch.nn.functional.threshold_(x, -2.0, -0.0).neg_()


def _sets_aside_many(row: torch.Tensor) -> bool:
    """Whether more than 2 % of a row's shifted scores lie at or below ``_BELOW_NORMAL_EXP``."""
    return int(torch.count_nonzero(row <= _BELOW_NORMAL_EXP)) * 50 > row.numel()


def _shifted_exps(scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(exp of each row less its maximum, their row sums, the maxima): the steps of
    torch.logsumexp(scores, dim=1) (ATen's logsumexp_out_impl: infinite maxima taken as
    0), with :func:`_exp_normal_or_zero_`'s result in place of its exp."""
    maxima = torch.amax(scores, dim=1, keepdim=True)
    above = maxima == float("inf")
    maxima.masked_fill_(above | (maxima == float("-inf")), 0.0)
    shifted = scores - maxima
    # Both forms give the same bits; which is faster depends on how many arguments are set
    # aside (a GPU's exp has no slow path; a maximum of +inf, taken as 0, leaves arguments
    # above 0). The five passes of _exp_at_most_zero_ cost about what 2 % of the block on
    # exp's slow path does: a freshly initialised model sets aside half of some blocks, a
    # trained one none (FB15k-237 ComplEx and WN18RR TuckER of the default run).
    on_cpu = scores.device.type == "cpu" and len(scores) > 0
    if on_cpu and not bool(above.any()) and _sets_aside_many(shifted[0]):
        exps = _exp_at_most_zero_(shifted)
    else:
        exps = _exp_normal_or_zero_(shifted)
    return exps, exps.sum(dim=1), maxima.squeeze(1)


def fused_loss_name(loss: Any) -> str | None:
    """The name of ``loss``'s fused form, or None where PyKEEN's own loss must run."""
    name = type(loss).__name__
    if name not in FUSED_LOSSES or type(loss).__module__ != "pykeen.losses":
        return None
    if getattr(loss, "reduction", None) not in ("mean", "sum"):
        return None
    if getattr(loss, "pos_weight", None) is not None:
        return None
    if name in ("SoftplusLoss", "SoftPointwiseHingeLoss"):
        activation = getattr(loss, "margin_activation", None)
        if (
            loss.margin is None
            or type(activation) is not torch.nn.Softplus
            or any(getattr(activation, key) != value for key, value in _SOFTPLUS.items())
        ):
            return None
    # PyKEEN masks the positives before it scales by the temperature: at a temperature of
    # 0 or below its loss is NaN, which the fused form (scaling first) would not give
    if name == "NSSALoss" and not loss.inverse_softmax_temperature > 0:
        return None
    return name


class _CrossEntropySum(torch.autograd.Function):
    """The summed cross-entropy with its gradient softmax(s) - q written into one block:
    autograd would add three dense gradients (log-sum-exp, the mean over entities, the
    positives' scatter), a pass over the (batch x entities) block each. The softmax is
    the forward's shifted exponentials over their row sums, kept for the backward pass
    instead of the scores: exp again would cost two more passes (8 ms of a 110 ms WN18RR
    TuckER step of 256 rows)."""

    @staticmethod
    def forward(ctx, scores, rows, columns, positive_weights, uniform_weight: float):
        exps, sums, maxima = _shifted_exps(scores)
        ctx.save_for_backward(exps, sums, rows, columns, positive_weights)
        ctx.uniform_weight = uniform_weight
        return (
            sums.log().add_(maxima).sum()
            - (positive_weights * scores[rows, columns]).sum()
            - uniform_weight * scores.sum()
        )

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output):
        exps, sums, rows, columns, positive_weights = ctx.saved_tensors
        grad = exps.div(sums[:, None]).sub_(ctx.uniform_weight)
        grad.index_put_((rows, columns), -positive_weights, accumulate=True)
        return grad.mul_(grad_output), None, None, None, None


class _BinaryCrossEntropySum(torch.autograd.Function):
    """The summed BCE after a sigmoid with its gradient sigmoid(s) - t written into one
    block (autograd would add three dense gradients, as for the cross-entropy)."""

    @staticmethod
    def forward(ctx, scores, rows, columns, target_negative: float, target_positive: float):
        ctx.save_for_backward(scores, rows, columns)
        ctx.targets = (target_negative, target_positive)
        return (
            torch.nn.functional.softplus(scores).sum()
            - target_negative * scores.sum()
            - (target_positive - target_negative) * scores[rows, columns].sum()
        )

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output):
        scores, rows, columns = ctx.saved_tensors
        target_negative, target_positive = ctx.targets
        grad = torch.sigmoid(scores).sub_(target_negative)
        step = scores.new_full((len(rows),), target_negative - target_positive)
        grad.index_put_((rows, columns), step, accumulate=True)
        return grad.mul_(grad_output), None, None, None, None


class _SoftHingeSum(torch.autograd.Function):
    """The summed soft pointwise hinge with its gradient c σ(m + c s) written into one
    block (c_0 everywhere, c_1 at the positives); autograd would make the dense target
    block and the margin's term and take several passes each way. The pre-activation
    m + c_0 s is kept for the backward pass: its sigmoid is one pass."""

    @staticmethod
    def forward(ctx, scores, rows, columns, margin: float, negative_slope: float, positive_slope: float):
        activations = torch.mul(scores, negative_slope)
        if margin:
            activations.add_(margin)
        positive_activations = margin + positive_slope * scores[rows, columns]
        ctx.save_for_backward(activations, rows, columns, positive_activations)
        ctx.slopes = (negative_slope, positive_slope)
        softplus = torch.nn.functional.softplus
        return (
            softplus(activations).sum()
            + softplus(positive_activations).sum()
            - softplus(activations[rows, columns]).sum()
        )

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output):
        activations, rows, columns, positive_activations = ctx.saved_tensors
        negative_slope, positive_slope = ctx.slopes
        grad = torch.sigmoid(activations).mul_(negative_slope)
        correction = positive_slope * torch.sigmoid(positive_activations) - negative_slope * torch.sigmoid(
            activations[rows, columns]
        )
        grad.index_put_((rows, columns), correction, accumulate=True)
        return grad.mul_(grad_output), None, None, None, None, None


class _SelfAdversarialSum(torch.autograd.Function):
    """NSSA's LCWA loss, its positives' and its negatives' halves each summed, with the
    gradient written into one block: the negatives' weights (a softmax, no gradient, as
    PyKEEN detaches it) times σ(s + m), and -σ(-(m + s)) at the positives. PyKEEN's form
    clones the block, masks the positives by a dense boolean index and takes the
    log-sigmoid's passes each way."""

    @staticmethod
    def forward(
        ctx, scores, rows, columns, margin: float, temperature: float, positive_scale, negative_scale
    ):
        # (inside forward the scores carry no graph: the weights need no detach)
        logits = torch.mul(scores, temperature)
        logits[rows, columns] = float("-inf")
        weights = torch.softmax(logits, dim=1)
        del logits
        activations = torch.add(scores, margin)
        positive_activations = activations[rows, columns]
        softplus = torch.nn.functional.softplus
        negative = torch.linalg.vecdot(weights, softplus(activations))
        ctx.save_for_backward(weights, activations, rows, columns)
        ctx.scales = (positive_scale, negative_scale)
        return positive_scale * softplus(-positive_activations).sum() + negative_scale * negative.sum()

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output):
        weights, activations, rows, columns = ctx.saved_tensors
        positive_scale, negative_scale = ctx.scales
        grad = torch.sigmoid(activations).mul_(weights).mul_(negative_scale * grad_output)
        positive = torch.sigmoid(-activations[rows, columns]).mul_(-positive_scale * grad_output)
        grad.index_put_((rows, columns), positive, accumulate=True)
        return grad, None, None, None, None, None, None


def cross_entropy_from_positives(
    scores: torch.Tensor,
    rows: torch.Tensor,
    columns: torch.Tensor,
    label_smoothing: float = 0.0,
    reduction: str = "mean",
) -> torch.Tensor:
    """PyKEEN's LCWA cross-entropy of ``scores`` (batch x entities) whose positives sit
    at (``rows``, ``columns``); every row needs at least one positive."""
    num_rows, num_entities = scores.shape
    counts = torch.bincount(rows, minlength=num_rows).to(scores.dtype)
    positive_weights = (1.0 - label_smoothing) / counts[rows]
    loss = _CrossEntropySum.apply(scores, rows, columns, positive_weights, label_smoothing / num_entities)
    return loss / num_rows if reduction == "mean" else loss


def bce_after_sigmoid_from_positives(
    scores: torch.Tensor,
    rows: torch.Tensor,
    columns: torch.Tensor,
    label_smoothing: float = 0.0,
    reduction: str = "mean",
) -> torch.Tensor:
    """PyKEEN's LCWA binary cross-entropy after a sigmoid, with its label smoothing, of
    ``scores`` (batch x entities) whose positives sit at (``rows``, ``columns``)."""
    num_entities = scores.shape[1]
    target_negative = label_smoothing / (num_entities - 1)
    loss = _BinaryCrossEntropySum.apply(scores, rows, columns, target_negative, 1.0 - label_smoothing)
    return loss / scores.numel() if reduction == "mean" else loss


def soft_hinge_from_positives(
    scores: torch.Tensor,
    rows: torch.Tensor,
    columns: torch.Tensor,
    margin: float = 0.0,
    label_smoothing: float = 0.0,
    reduction: str = "mean",
) -> torch.Tensor:
    """PyKEEN's LCWA soft pointwise hinge, softplus(margin - (2t - 1) s) with its
    smoothed targets t (the softplus loss at ``margin`` 0), of ``scores`` (batch x
    entities) whose positives sit at (``rows``, ``columns``)."""
    num_entities = scores.shape[1]
    target_negative = label_smoothing / (num_entities - 1) if label_smoothing else 0.0
    target_positive = 1.0 - label_smoothing
    loss = _SoftHingeSum.apply(
        scores, rows, columns, margin, 1.0 - 2.0 * target_negative, 1.0 - 2.0 * target_positive
    )
    return loss / scores.numel() if reduction == "mean" else loss


def self_adversarial_from_positives(
    scores: torch.Tensor,
    rows: torch.Tensor,
    columns: torch.Tensor,
    margin: float,
    temperature: float,
    reduction: str = "mean",
) -> torch.Tensor:
    """PyKEEN's LCWA self-adversarial negative sampling loss (``NSSALoss``, adversarial
    temperature ``temperature``) of ``scores`` whose positives sit at (``rows``,
    ``columns``): under the mean, half the positives' mean plus half the rows' mean."""
    if reduction == "mean":
        positive_scale, negative_scale = 0.5 / len(rows), 0.5 / len(scores)
    else:
        positive_scale = negative_scale = 1.0
    return _SelfAdversarialSum.apply(
        scores, rows, columns, margin, temperature, positive_scale, negative_scale
    )


def lcwa_loss_from_positives(
    loss: Any,
    scores: torch.Tensor,
    rows: torch.Tensor,
    columns: torch.Tensor,
    label_smoothing: float | None,
) -> torch.Tensor:
    """``loss.process_lcwa_scores`` of PyKEEN for the losses in :data:`FUSED_LOSSES`."""
    name = fused_loss_name(loss)
    if name is None:
        raise ValueError(f"{type(loss).__name__} has no fused LCWA form; use PyKEEN's loss")
    if label_smoothing and label_smoothing < 0:
        # PyKEEN's apply_label_smoothing refuses it too
        raise ValueError(f"label smoothing must be at least 0, got {label_smoothing}")
    if name == "CrossEntropyLoss":
        return cross_entropy_from_positives(scores, rows, columns, label_smoothing or 0.0, loss.reduction)
    if name == "BCEAfterSigmoidLoss":
        return bce_after_sigmoid_from_positives(scores, rows, columns, label_smoothing or 0.0, loss.reduction)
    if name == "NSSALoss":
        if label_smoothing:
            from pykeen.losses import UnsupportedLabelSmoothingError

            raise UnsupportedLabelSmoothingError(loss)
        return self_adversarial_from_positives(
            scores, rows, columns, loss.margin, loss.inverse_softmax_temperature, loss.reduction
        )
    return soft_hinge_from_positives(
        scores, rows, columns, loss.margin, label_smoothing or 0.0, loss.reduction
    )
