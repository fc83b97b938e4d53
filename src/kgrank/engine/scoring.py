"""Scores of every candidate entity for a batch of link-prediction queries.

PyKEEN's generic ``score_t``/``score_h`` broadcast each query against every entity into a
(batch, entities, dim) tensor before reducing it, which is what makes its evaluator take
minutes on FB15k-237. For the model families below the same scores follow from the
model's own learned representations with one (batch, dim) x (dim, entities) product per
batch (or, for the L1 norm, which has no product form, torch's ``cdist`` kernel on the
CPU, which never materialises the broadcast tensor, and PyKEEN's broadcast in chunks on a
GPU, where ``cdist`` is slower). PyKEEN has no such path in its evaluator, so it
is written here, one small function per interaction, each checked against PyKEEN's own
scores in the tests. A product form rounds differently from PyKEEN's broadcast,
so the true entity and every candidate scored near it are rescored through
``model.predict`` (PyKEEN's arithmetic) before ranking (:class:`NearTies`; the rank engine
only in the rows that hold such a candidate): on the CPU the ranks are PyKEEN's, near-ties
included (the tie rule ``pykeen``). On a CUDA GPU the kernels sum in an order that depends on
the shapes, so PyKEEN's own float32 ranks are no fixed reference there; near-ties are
decided in float64 instead (the tie rule ``float64``, :data:`TIE_RULES`): the true
entity and every candidate scored near it, for every family and for models scored
through ``model.predict`` too, are rescored by a float64 copy of the model, so that the
ranks are those of PyKEEN's evaluator on that copy (tests/test_ranks.py on the CPU;
benchmarks/gpu.py measures it on a GPU, docs/performance.md). Any other model is scored
through ``model.predict`` (its ``score_t``/``score_h``), so every PyKEEN model works,
only slower.

A query is (anchor entity, relation, direction): direction ``tail`` scores every entity as
the tail of (anchor, relation, ?), ``head`` as the head of (?, relation, anchor). Models
trained with inverse triples predict heads as tails of the inverse relation, exactly as
PyKEEN's ``predict_h`` does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from kgrank.errors import KgrankInputError


@dataclass(frozen=True)
class SquaredDistanceError:
    """A bound, per query row, on how far the product form's squared L2 distances may lie
    from PyKEEN's: |q|^2 - 2 q.e + |e|^2 and PyKEEN's sum of (q_i - e_i)^2 each err by at
    most (d + 3) u (|q| + |e|)^2 in floating point (u the unit roundoff; standard bounds
    for sums of d products), so ``bound`` is twice that with the largest |e|.

    Scores are -sqrt(squared) (or -squared with ``squared_scores``); a candidate can change
    the rank only if its squared distance a_j is within twice the bound of the true entity's
    a_t, that is (s = -sqrt(a)) if its score lies in [-sqrt(a_t + 2 bound),
    -sqrt(max(a_t - 2 bound, 0))].
    """

    bound: torch.Tensor
    squared_scores: bool

    def window(self, true_scores: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(centre, half width) per row of the scores that rounding may order differently
        from the true entity's, widened by 1 % (the rounding of the interval and of the
        half width) and by 4 eps |s_t| (float32 rounding of the centre and of
        |score - centre|, each within about eps |s_t| / 2), so that the float32 comparison
        |score - centre| <= half width can only add candidates. In float64, on the CPU
        where the device has none (Apple's MPS)."""
        host = true_scores.device.type == "mps"
        true64, bound64 = (x.cpu().double() if host else x.double() for x in (true_scores, self.bound))
        if self.squared_scores:
            centre, half = true64, 2.0 * bound64
        else:
            squared = true64 * true64
            low = -(squared + 2.0 * bound64).sqrt()
            high = -(squared - 2.0 * bound64).clamp(min=0.0).sqrt()
            centre, half = (low + high) / 2.0, (high - low) / 2.0
        margin = 4.0 * torch.finfo(true_scores.dtype).eps * true64.abs()
        return (
            centre.to(true_scores.device, true_scores.dtype),
            (1.01 * half + margin).to(true_scores.device, true_scores.dtype),
        )


# Returned instead of an error bound by a score function whose scores are PyKEEN's own
# bits: there is nothing to rescore.
BIT_IDENTICAL = "bit-identical"

# (anchor representations, relation representations, all entity representations, direction)
# -> scores, and how far they may be from PyKEEN's: an L2 error bound, BIT_IDENTICAL, or
# None (rescore near-ties within NEAR_TIE_RELATIVE_TOLERANCE)
ScoreFunction = Callable[[Any, Any, Any, Any, str], tuple[torch.Tensor, "SquaredDistanceError | str | None"]]


def _norm_scores(
    query: torch.Tensor, entities: torch.Tensor, p: float, power_norm: bool
) -> tuple[torch.Tensor, SquaredDistanceError | str]:
    """-||q - e||_p for every pair (or -||q - e||_p^p with ``power_norm``); other norms
    than L2 go through cdist on the CPU, which sums |q_i - e_i| as PyKEEN's norm does
    (bit-identical, checked per triple by the rank tests), and through PyKEEN's broadcast
    on a GPU (:func:`_broadcast_norms`)."""
    if p == 2:
        query_squared_norms = (query * query).sum(dim=1)
        squared_norms = (entities * entities).sum(dim=1)
        # |q - e|^2 for every (query, entity) pair as |q|^2 - 2 q.e + |e|^2, clamped at 0
        # against rounding; in place on one block, in this order (an addmm of |e|^2 - 2 q.e
        # rounds otherwise and swapped two near-equal RotatE candidates in the IR run lists)
        squared = (query @ entities.T).mul_(-2.0).add_(query_squared_norms.unsqueeze(1)).add_(squared_norms)
        squared.clamp_(min=0.0)
        unit_roundoff = torch.finfo(query.dtype).eps / 2
        reach = query_squared_norms.sqrt() + squared_norms.max().sqrt()
        error = SquaredDistanceError(
            2.0 * (query.shape[1] + 3) * unit_roundoff * reach**2, squared_scores=power_norm
        )
        return (squared if power_norm else squared.sqrt_()).neg_(), error
    if query.is_cuda:
        distances = _broadcast_norms(query, entities, p)
    else:
        distances = torch.cdist(query.unsqueeze(0), entities.unsqueeze(0), p=p).squeeze(0)
    return -(distances.pow_(p) if power_norm else distances), BIT_IDENTICAL


def _broadcast_norms(
    query: torch.Tensor, entities: torch.Tensor, p: float, max_elements: int = 2**28
) -> torch.Tensor:
    """||q - e||_p for every pair through PyKEEN's own broadcast and norm, in chunks of
    entities whose (queries, chunk, width) difference stays under ``max_elements``. On a
    GPU torch's cdist for p != 2 is a generic kernel: 0.85 s of kernels in the 2.13 s
    FB15k-237 TransE (L1) ranking on an H200, against PyKEEN's 2.03 s in all."""
    chunk = max(1, max_elements // max(1, query.shape[0] * query.shape[1]))
    return torch.cat(
        [
            torch.linalg.vector_norm(
                query.unsqueeze(1) - entities[start : start + chunk].unsqueeze(0), ord=p, dim=-1
            )
            for start in range(0, len(entities), chunk)
        ],
        dim=1,
    )


def as_complex(x: torch.Tensor) -> torch.Tensor:
    """A representation as a complex tensor (PyKEEN may store complex ones as real pairs)."""
    if torch.is_complex(x):
        return x
    from pykeen.utils import ensure_complex

    (x,) = ensure_complex(x)
    return x


def real_view(x: torch.Tensor) -> torch.Tensor:
    """A complex (n, d) tensor as real (n, 2d); dot products and L2 norms carry over."""
    return torch.view_as_real(x).reshape(*x.shape[:-1], 2 * x.shape[-1])


def _transe(interaction: Any, anchor, relation, entities, direction: str):
    # h + r - t: for tails the query is h + r, for heads h - (t - r).
    query = anchor + relation if direction == "tail" else anchor - relation
    return _norm_scores(query, entities, interaction.p, interaction.power_norm)


def _rotate(interaction: Any, anchor, relation, entities, direction: str):
    # ||h o r - t||_2 over complex coordinates; PyKEEN rotates the anchor the same way
    # (heads: t o conj(r), which equals h when |r| = 1, its constraint).
    query = anchor * relation if direction == "tail" else anchor * torch.conj(relation)
    return _norm_scores(real_view(query), real_view(entities), 2, False)


def _complex(interaction: Any, anchor, relation, entities, direction: str):
    entities, conjugates = entities
    if direction == "tail":
        # Re((h o r) . conj(t)): the complex product PyKEEN's einsum reduces to, on the
        # conjugates laid out (dim, entities) once instead of per batch (a FB15k-237 block:
        # 13.5 ms against 18.2 at one thread, 10.0 against 13.6 at two; a transposed view
        # of them takes 19.0 at one), bit-identical to it. A real-view product takes 3.9
        # ms but rounds otherwise, and rescoring its near-ties through model.predict does
        # not give the complex product's bits back (99.978 % of FB15k-237 ranks equal
        # PyKEEN's). Its real parts copied out (1.3 ms a block): the filter and the counts
        # take a strided block slower than that.
        return torch.real((anchor * relation) @ conjugates).contiguous(), BIT_IDENTICAL
    # For heads PyKEEN's einsum materialises (batch, entities, dim) (16x slower on WN18RR),
    # so: Re(<h, r, conj(t)>) = Re(h) . Re(t o conj(r)) + Im(h) . Im(t o conj(r)).
    query = anchor * torch.conj(relation)
    return real_view(query) @ real_view(entities).T, None


def _distmult(interaction: Any, anchor, relation, entities, direction: str):
    return (anchor * relation) @ entities.T, None


def _rescal(interaction: Any, anchor, relation, entities, direction: str):
    # h^T R t: tails see h^T R, heads see R t.
    if direction == "tail":
        query = torch.einsum("bd,bde->be", anchor, relation)
    else:
        query = torch.einsum("bde,be->bd", relation, anchor)
    return query @ entities.T, None


def _tucker(interaction: Any, anchor, relation, entities, direction: str):
    # BN_hr((BN_h(h)) x_1 (Z x_2 r)) . t, dropout off in evaluation mode. Heads are scored
    # this way only through inverse relations (see supports_direction).
    head = anchor if interaction.head_batch_norm is None else interaction.head_batch_norm(anchor)
    core = torch.einsum("ijk,bj->bik", interaction.core_tensor, relation)
    combined = torch.einsum("bik,bi->bk", core, head)
    if interaction.head_relation_batch_norm is not None:
        combined = interaction.head_relation_batch_norm(combined)
    return combined @ entities.T, None


def conve_query(interaction: Any, anchor: torch.Tensor, relation: torch.Tensor) -> torch.Tensor:
    """ConvE's encoding of (h, r), (batch, dim): PyKEEN's ConvEInteraction.forward up to its
    final dot product, with its own modules in its order (batch norm and dropout act as the
    module's mode says)."""
    shape = interaction.shape_info
    image = (-1, shape.input_channels, shape.image_height, shape.image_width)
    x = torch.cat([anchor.reshape(image), relation.reshape(image)], dim=-2)
    x = interaction.hr2d(x)
    return interaction.hr1d(x.view(-1, shape.num_in_features))


def _conve(interaction: Any, anchor, relation, entities, direction: str):
    # f(h, r) . t + b_t: PyKEEN multiplies f(h, r) with every tail by a broadcast (batch,
    # entities, dim) product; here one matrix product. Tails only: heads are tails of the
    # inverse relations (ConvE is trained with them).
    embeddings, bias = entities
    return conve_query(interaction, anchor, relation) @ embeddings.T + bias, None


def _families() -> dict[type, tuple[str, ScoreFunction, tuple[str, ...]]]:
    """Interaction class -> (family name, score function, directions it scores)."""
    from pykeen.nn import modules

    both = ("tail", "head")
    return {
        modules.TransEInteraction: ("transe", _transe, both),
        modules.RotatEInteraction: ("rotate", _rotate, both),
        modules.ComplExInteraction: ("complex", _complex, both),
        modules.DistMultInteraction: ("distmult", _distmult, both),
        modules.RESCALInteraction: ("rescal", _rescal, both),
        modules.TuckERInteraction: ("tucker", _tucker, ("tail",)),
        modules.ConvEInteraction: ("conve", _conve, ("tail",)),
    }


def _simple_representations(model: Any, family: str = "") -> bool:
    """One entity and one relation representation used as-is (PyKEEN's default layout);
    ConvE's tails carry a second entity representation, the bias."""
    interaction = model.interaction
    entities, tail_indices = (2, (0, 1)) if family == "conve" else (1, (0,))
    return (
        len(model.entity_representations) == entities
        and len(model.relation_representations) == 1
        and tuple(interaction.head_indices) == (0,)
        and tuple(interaction.tail_indices) == tail_indices
    )


def product_form_family(model: Any) -> tuple[str, tuple[str, ...]] | None:
    """(family, directions it scores by a product form) of a model in PyKEEN's default
    layout of one of the families above, else None; the rank engine and the 1-N training
    step (kgrank.training.step) agree on it."""
    family = _families().get(type(getattr(model, "interaction", None)))
    if family is None or not _simple_representations(model, family[0]):
        return None
    name, _, directions = family
    return name, directions


# A product form adds and multiplies in another order than PyKEEN's broadcast, so its
# float32 scores differ from PyKEEN's in the last bits. Only candidates whose score lies
# that close to the true entity's can change a rank. For the L2 norm, where
# |q|^2 - 2 q.e + |e|^2 cancels, a rounding-error bound decides which are that close
# (SquaredDistanceError); for the dot-product families, which do not cancel that way,
# every candidate within this fraction of the row's largest |score| of the true score
# is rescored (observed differences: about 1e-7 of the row's scale).
NEAR_TIE_RELATIVE_TOLERANCE = 1e-4


# Families whose PyKEEN score of a (row, candidate) pair is elementwise arithmetic and a
# norm of that row and candidate alone: the bits do not depend on the other rows of the
# call (checked on FB15k-237 RotatE)
ROW_WISE_FAMILIES = ("transe", "rotate")


def _padded_widths(counts: torch.Tensor) -> torch.Tensor:
    """Each count rounded up to a power of two, at least 8; in integers, so on any device."""
    widths = counts.clamp(min=8) - 1
    for shift in (1, 2, 4, 8, 16, 32):
        widths |= widths >> shift
    return widths + 1


def nonzero_entries(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(rows, columns) of a 2-d mask's True entries in row-major order. On the CPU through
    numpy's ``flatnonzero``, vectorised for booleans: 0.5 ms on a (256, 14,541) block
    against 4.6 ms for torch's ``nonzero`` (torch 2.13, 2 threads)."""
    if mask.device.type != "cpu":
        return mask.nonzero(as_tuple=True)
    flat = torch.from_numpy(np.flatnonzero(mask.numpy()))
    return flat // mask.shape[1], flat % mask.shape[1]


# How near-ties are decided: ``pykeen``, by the model's own arithmetic through
# ``model.predict`` (PyKEEN's float32 bits on the CPU, so that the ranks are its
# evaluator's); ``float64``, by a float64 copy of the model (the default on a CUDA GPU,
# whose float32 bits depend on the shapes of the call).
TIE_RULES = ("pykeen", "float64")


def default_tie_rule(device: torch.device) -> str:
    """``float64`` on a CUDA GPU; ``pykeen`` on the CPU and on Apple's MPS, which has no
    float64."""
    return "float64" if torch.device(device).type == "cuda" else "pykeen"


def float64_copy(model: Any) -> Any:
    """A copy of ``model`` with every floating parameter and buffer in float64 and every
    complex one in complex128 (``Module.to(torch.float64)`` would drop imaginary parts)."""
    import copy

    def widen(tensor: torch.Tensor) -> torch.Tensor:
        if tensor.is_complex():
            return tensor.to(torch.complex128)
        return tensor.to(torch.float64) if tensor.is_floating_point() else tensor

    return copy.deepcopy(model)._apply(widen).eval()


# float64 numbers gathered per predict call of the float64 rescoring: a RESCAL row gathers
# its d x d relation matrix, so the rows per call follow the size of their representations
_FLOAT64_ELEMENTS_PER_CALL = 2**26


class Scorer:
    """Score all entities for queries of one model; the fast path where the family has
    one. ``tie_rule`` (:data:`TIE_RULES`): how near-ties are decided, by default
    :func:`default_tie_rule` of the model's device."""

    def __init__(self, model: Any, fast: bool = True, tie_rule: str | None = None):
        self.model = model
        device = next(model.parameters()).device
        tie_rule = default_tie_rule(device) if tie_rule is None else tie_rule
        if tie_rule not in TIE_RULES:
            raise ValueError(f"tie rule {tie_rule!r}: expected one of {', '.join(TIE_RULES)}")
        if tie_rule == "float64" and device.type == "mps":
            raise KgrankInputError(
                "the tie rule float64 needs float64 arithmetic, which Apple's MPS does not have; "
                "pass --tie-rule pykeen, or --device cpu"
            )
        self.tie_rule = tie_rule
        self._float64_model: Any = None
        self.family, self._score, self._directions = "pykeen", None, ()
        if fast and product_form_family(model) is not None:
            self.family, self._score, self._directions = _families()[type(model.interaction)]
            self._entities = self._all_entities()

    def _all_entities(self) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        entities = self.model.entity_representations[0](indices=None)
        if self.family == "conve":
            # (embeddings, bias): ConvE's tails are both
            return entities, self.model.entity_representations[1](indices=None).reshape(-1)
        if self.family == "complex":
            # (embeddings, their conjugates as (dim, entities)): ComplEx's tails take the latter
            entities = as_complex(entities)
            return entities, torch.conj(entities).T.contiguous()
        return self._maybe_complex(entities)

    def _maybe_complex(self, x: torch.Tensor) -> torch.Tensor:
        return as_complex(x) if self.family in ("rotate", "complex") else x

    def queries(self, batch: torch.Tensor, side: str) -> tuple[torch.Tensor, torch.Tensor, str]:
        """(anchor ids, internal relation ids, direction) for test triples ``batch`` (n, 3) and a side.

        Follows PyKEEN's ``predict_t``/``predict_h``: relation ids are mapped for models
        with inverse triples, and heads are then predicted as tails of the inverse relation.
        """
        model = self.model
        if side == "tail":
            hr = model._prepare_batch(batch=batch[:, 0:2], index_relation=1)
            return hr[:, 0], hr[:, 1], "tail"
        rt = model._prepare_batch(batch=batch[:, 1:3], index_relation=0)
        if model.use_inverse_triples:
            tr_inverse = model._prepare_inverse_batch(batch=rt, index_relation=0)
            return tr_inverse[:, 0], tr_inverse[:, 1], "tail"
        return rt[:, 1], rt[:, 0], "head"

    def fast_for(self, side: str) -> bool:
        """Whether ``side`` of this model is scored by a product form rather than PyKEEN's broadcast."""
        if self._score is None:
            return False
        direction = "tail" if side == "tail" or self.model.use_inverse_triples else "head"
        return direction in self._directions

    @torch.inference_mode()
    def __call__(self, batch: torch.Tensor, side: str) -> torch.Tensor:
        """(n, num_entities) float scores of every candidate for the ``side`` of each triple in
        ``batch``, their near-ties rescored through ``model.predict``."""
        scores, near_ties = self.unsettled(batch, side)
        if near_ties is not None:
            near_ties.settle(scores)
        return scores

    @torch.inference_mode()
    def unsettled(self, batch: torch.Tensor, side: str) -> tuple[torch.Tensor, NearTies | None]:
        """The scores of :meth:`__call__` before the near-ties are rescored, and those near-ties
        (None where the scores are PyKEEN's bits already), for a caller that settles only the
        rows it needs (:func:`kgrank.engine.ranks.block_ranks`)."""
        if not self.fast_for(side):
            scores = self.model.predict(batch, target=side).float()
            if self.tie_rule == "float64":
                return scores, self._near_ties(batch, side, scores, None)
            return scores, None
        anchors, relations, direction = self.queries(batch, side)
        anchor_repr = self._maybe_complex(self.model.entity_representations[0](indices=anchors))
        relation_repr = self._maybe_complex(self.model.relation_representations[0](indices=relations))
        scores, error = self._score(
            self.model.interaction, anchor_repr, relation_repr, self._entities, direction
        )
        scores = scores.float()
        if self.model.predict_with_sigmoid:
            scores = torch.sigmoid(scores)  # PyKEEN's bits stay PyKEEN's bits
            if isinstance(error, SquaredDistanceError):
                error = None  # the bound is for raw distances
        if error is BIT_IDENTICAL and (self.tie_rule == "float64" or scores.device.type != "cpu"):
            # PyKEEN's bits on the CPU only (a GPU's kernels, cdist and the complex product,
            # sum in an order that depends on the shapes), and not float64's anywhere
            error = None
        if error is BIT_IDENTICAL:
            return scores, None
        return scores, self._near_ties(batch, side, scores, error)

    def float64_scores(
        self, batch: torch.Tensor, side: str, rows: torch.Tensor, candidates: torch.Tensor
    ) -> torch.Tensor:
        """The float64 scores of each candidate ``candidates[i]`` for the ``side`` of row
        ``rows[i]`` of ``batch``: ``model.predict`` of :func:`float64_copy` of the model
        (made once), one row per entry, not padded to a row's largest count. Each row
        asks for its candidate twice: PyKEEN's broadcast picks its arithmetic by the shapes
        of a call (RotatE rotates the head where there are more candidates than queries,
        else the tail, which differ off the unit circle), and two columns take the
        arithmetic of a call with every entity."""
        if self._float64_model is None:
            self._float64_model = float64_copy(self.model)
        model = self._float64_model
        triples, ids = batch[rows], candidates.unsqueeze(1).repeat(1, 2)
        chunk = max(1, _FLOAT64_ELEMENTS_PER_CALL // _numbers_per_row(model))
        parts = [
            model.predict(triples[start : start + chunk], target=side, ids=ids[start : start + chunk])[:, 0]
            for start in range(0, len(triples), chunk)
        ]
        return torch.cat(parts) if parts else torch.empty(0, dtype=torch.float64, device=triples.device)

    def _near_ties(
        self, batch: torch.Tensor, side: str, scores: torch.Tensor, error: SquaredDistanceError | None
    ) -> NearTies | None:
        """The window around each row's true score within which a product-form score may
        order otherwise than PyKEEN's against it: the L2 norm's error bound, otherwise the
        relative tolerance of the row's largest |score|."""
        true_entities = batch[:, 0] if side == "head" else batch[:, 2]
        true_scores = scores[torch.arange(len(batch), device=scores.device), true_entities]
        if error is not None:
            centre, half = error.window(true_scores)
        else:
            # the row's largest |score| without an |scores| copy of the block
            largest = torch.maximum(scores.amax(dim=1), scores.amin(dim=1).neg_())
            centre, half = true_scores, NEAR_TIE_RELATIVE_TOLERANCE * largest
        return NearTies(self, batch, side, centre, half)


def _numbers_per_row(model: Any) -> int:
    """How many numbers one row of :meth:`Scorer.float64_scores`'s predict calls gathers (an
    anchor and two candidates of every entity representation, one of every relation
    representation); 1 where a model has none."""
    sizes = [
        3 * math.prod(representation.shape) for representation in getattr(model, "entity_representations", ())
    ]
    sizes += [
        math.prod(representation.shape) for representation in getattr(model, "relation_representations", ())
    ]
    return max(1, sum(sizes))


@dataclass
class NearTies:
    """The candidates of a block of scores that may order otherwise than the tie rule's
    exact scores against the true entity (:data:`TIE_RULES`: PyKEEN's arithmetic, or
    float64): per row, those whose score lies within ``half`` of ``centre``.
    :meth:`settle` rescores them, and every true entity, in place (in the block's dtype,
    so float64 scores are rounded back to float32 there); :meth:`exact_scores` gives the
    exact scores of chosen entries of chosen rows."""

    scorer: Scorer
    batch: torch.Tensor
    side: str
    centre: torch.Tensor
    half: torch.Tensor

    @property
    def true_entities(self) -> torch.Tensor:
        return self.batch[:, 0] if self.side == "head" else self.batch[:, 2]

    def settle(self, scores: torch.Tensor) -> None:
        """Rescore, in place, the true entity and every near candidate of every row."""
        rows = torch.arange(len(self.batch), device=scores.device)
        near = torch.sub(scores, self.centre.unsqueeze(1)).abs_() <= self.half.unsqueeze(1)
        near[rows, self.true_entities] = True
        near_rows, near_columns = nonzero_entries(near)
        exact = self.exact_scores(rows, near_rows, near_columns)
        scores[near_rows, near_columns] = exact.to(scores.dtype)

    def bounds(self) -> tuple[torch.Tensor, torch.Tensor]:
        """(low, high), (rows, 1) each: every score s with |s - centre| <= half in float32,
        as :meth:`settle` tests it, lies in [low, high] (the half width widened by 2^-10 of
        itself and by 4 eps (|centre| + half), more than the rounding of s - centre and of
        centre +- the widened half). Non-finite where the centre or the half width is."""
        eps = torch.finfo(self.half.dtype).eps
        widened = self.half * (1.0 + 2.0**-10) + 4.0 * eps * (self.centre.abs() + self.half)
        widened = widened + torch.finfo(self.half.dtype).tiny
        return (self.centre - widened).unsqueeze(1), (self.centre + widened).unsqueeze(1)

    def exact_scores(
        self, rows: torch.Tensor, near_rows: torch.Tensor, near_columns: torch.Tensor
    ) -> torch.Tensor:
        """The exact scores of the entries (``rows[near_rows]``, ``near_columns``) of the
        block, ``near_rows`` indexing ``rows`` (batch rows, each with its true entity among
        its entries): in float64 under the tie rule ``float64``
        (:meth:`Scorer.float64_scores`), else PyKEEN's, through ``model.predict`` with
        candidate ids."""
        if self.scorer.tie_rule == "float64":
            return self.scorer.float64_scores(self.batch, self.side, rows[near_rows], near_columns)
        model, family, true_entities = self.scorer.model, self.scorer.family, self.true_entities
        counts = torch.bincount(near_rows, minlength=len(rows))
        # position of each entry within its row, to lay them out as (rows, k) ids
        first_of_row = (counts.cumsum(0) - counts)[near_rows]
        position = torch.arange(len(near_rows), device=near_rows.device) - first_of_row
        exact = torch.empty(len(near_rows), dtype=torch.float32, device=near_rows.device)
        # Rows padded to at least 8 candidates: below it PyKEEN's complex products round
        # otherwise than over every entity (measured on FB15k-237 ComplEx: k < 8 changes
        # the bits, k >= 8 does not). For the distance families rows go to model.predict
        # in groups padded to 8, 16, 32, ..., not all to the block's largest count: RotatE's
        # complex norm costs per padded candidate (16 ms a FB15k-237 block at 33, where
        # rows hold 3.7 on average). The others' queries go through products over the
        # batch whose kernels depend on its number of rows (a TuckER group of rows changed
        # one FB15k-237 rank), so every row of the batch goes into their one call, as
        # PyKEEN's evaluator has them, whichever rows hold entries.
        row_wise = family in ROW_WISE_FAMILIES
        widths = _padded_widths(counts) if row_wise else counts.max().clamp(min=8).expand(len(counts))
        for width in widths.unique().tolist():
            in_group = widths == width
            if row_wise:
                group = in_group.nonzero().squeeze(1)
                call_rows = rows[group]
                call_index = torch.empty_like(rows)
                call_index[group] = torch.arange(len(group), device=rows.device)
            else:
                call_rows, call_index = torch.arange(len(self.batch), device=rows.device), rows
            entries = in_group[near_rows]
            entry_rows = call_index[near_rows[entries]]
            entry_positions = position[entries]
            ids = true_entities[call_rows].unsqueeze(1).repeat(1, width)
            ids[entry_rows, entry_positions] = near_columns[entries]
            predicted = model.predict(self.batch[call_rows], target=self.side, ids=ids).float()
            exact[entries] = predicted[entry_rows, entry_positions]
        return exact
