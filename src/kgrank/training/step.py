"""The 1-N training step at the arithmetic limit: every entity scored by matrix products.

PyKEEN's LCWA loop scores a batch of (head, relation) pairs against every entity through
``model.score_t``, which broadcasts each query against all entities into a
(batch, entities, dim) tensor before reducing it (TransE, RotatE, DistMult, TuckER) or
through an einsum torch cannot always turn into one product. The same scores follow
from matrix products, with autograd:

    L2 distance  ||q - e||  = sqrt(|q|^2 - 2 q.e + |e|^2)   (TransE-L2, RotatE)
    L1 distance               torch.cdist, which never materialises the broadcast
    bilinear     q . e with q = h o r (DistMult), the real view of h o r (ComplEx),
                 h^T R (RESCAL), BN(h) x_1 (Z x_2 r) (TuckER), and for ConvE
                 f(h, r) . t + b_t, its convolutional encoder f run once per query

``fast_scores(model)`` swaps these into one model's ``score_t``/``score_h`` for the
duration of a ``with`` block. Everything else stays PyKEEN's: the representations come
from ``model._get_representations`` (their dropout, constraints and regularisers apply as
PyKEEN applies them), TuckER's batch norms and dropouts are its interaction's own
modules called in its order, and the loss, label smoothing, optimiser and loop are
untouched. ``sparse_label_batches(loop)`` also lets an LCWA loop's batches carry their
label rows sparse, made dense per (sub-)batch for PyKEEN's own step and loss.
A model of another family, or a call that scores a subset of entities or an
inductive mode, goes through PyKEEN unchanged. No library offers this step for PyKEEN
models, so it is written here, one small function per family, each tested against
PyKEEN's own loss and gradients (tests/test_training_step.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import torch

from kgrank.engine.scoring import as_complex, conve_query, product_form_family, real_view
from kgrank.training.lcwa_loss import fused_loss_name, lcwa_loss_from_positives

# (interaction, anchor representations, relation representations, all entities,
#  direction "tail" or "head") -> (batch, entities) scores
ScoreFunction = Callable[[Any, torch.Tensor, torch.Tensor, torch.Tensor, str], torch.Tensor]


class _NegativeL2Distances(torch.autograd.Function):
    """-||q - e||_2 for every (query, entity) pair, its gradient written by hand: autograd
    of the expanded square takes about ten elementwise passes over the (queries x
    entities) block each way (the products' scaling, the norms' sums, the clamp, the
    square root, the zero-distance mask, the negation and their gradients); here the
    forward pass is the product with the queries' norms folded in, then four passes, and
    the backward pass three (the ratio T and its zeros), T's row and column sums and two
    products. With T = g / (-d) (g the output's gradient, 0 where d is 0):

        d/dq_b = q_b sum_n T_bn - sum_n T_bn e_n        d/de_n = e_n sum_b T_bn - sum_b T_bn q_b
    """

    @staticmethod
    def forward(ctx, query: torch.Tensor, entities: torch.Tensor) -> torch.Tensor:
        # |q|^2 - 2 q.e + |e|^2, the -2 an exact scaling inside the product
        squared = torch.addmm(
            (query * query).sum(dim=1, keepdim=True), query, entities.T, beta=1.0, alpha=-2.0
        )
        scores = squared.add_((entities * entities).sum(dim=1)).clamp_(min=0.0).sqrt_().neg_()
        ctx.save_for_backward(query, entities, scores)
        return scores

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad_output: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        query, entities, scores = ctx.saved_tensors
        # The norm's gradient at a zero distance is 0 (as torch.linalg.vector_norm has
        # it), not the infinite slope of sqrt at 0: g / -0 is infinite or NaN, set to 0
        # there alone (a NaN or infinite g elsewhere stays, as autograd would pass it on).
        ratio = torch.div(grad_output, scores).masked_fill_(scores == 0, 0.0)
        grad_query = grad_entities = None
        if ctx.needs_input_grad[0]:
            grad_query = torch.addmm(query * ratio.sum(dim=1, keepdim=True), ratio, entities, alpha=-1.0)
        if ctx.needs_input_grad[1]:
            grad_entities = torch.addmm(entities * ratio.sum(dim=0)[:, None], ratio.T, query, alpha=-1.0)
        return grad_query, grad_entities


def negative_distances(
    query: torch.Tensor, entities: torch.Tensor, p: float, power_norm: bool
) -> torch.Tensor:
    """-||q - e||_p (or -||q - e||_p^p) for every (query, entity) pair, differentiable."""
    if p != 2:
        distances = torch.cdist(query, entities, p=p)
        return -(distances.pow(p) if power_norm else distances)
    if not power_norm:
        return _NegativeL2Distances.apply(query, entities)
    squared = (
        (query * query).sum(dim=1, keepdim=True)
        - 2.0 * (query @ entities.T)
        + (entities * entities).sum(dim=1)
    ).clamp(min=0.0)
    return -squared


def _transe(interaction: Any, anchor, relation, entities, direction: str) -> torch.Tensor:
    # ||h + r - t||: tails see the query h + r, heads the query t - r.
    query = anchor + relation if direction == "tail" else anchor - relation
    return negative_distances(query, entities, interaction.p, interaction.power_norm)


def _rotate(interaction: Any, anchor, relation, entities, direction: str) -> torch.Tensor:
    # ||h o r - t|| over complex coordinates = ||h - conj(r) o t|| since |r| = 1.
    anchor, relation, entities = map(as_complex, (anchor, relation, entities))
    query = anchor * relation if direction == "tail" else anchor * torch.conj(relation)
    return negative_distances(real_view(query), real_view(entities), 2, False)


def _complex(interaction: Any, anchor, relation, entities, direction: str) -> torch.Tensor:
    # Re(<h, r, conj(t)>) = real view of (h o r) . real view of t for tails, and of
    # (t o conj(r)) . real view of h for heads.
    anchor, relation, entities = map(as_complex, (anchor, relation, entities))
    query = anchor * relation if direction == "tail" else anchor * torch.conj(relation)
    return real_view(query) @ real_view(entities).T


def _distmult(interaction: Any, anchor, relation, entities, direction: str) -> torch.Tensor:
    return (anchor * relation) @ entities.T


def _rescal(interaction: Any, anchor, relation, entities, direction: str) -> torch.Tensor:
    # h^T R t: tails see h^T R, heads see R t.
    if direction == "tail":
        query = torch.einsum("bd,bde->be", anchor, relation)
    else:
        query = torch.einsum("bde,be->bd", relation, anchor)
    return query @ entities.T


def _optional_batch_norm(x: torch.Tensor, batch_norm: Any) -> torch.Tensor:
    return x if batch_norm is None else batch_norm(x)


def dropout(module: torch.nn.Dropout, x: torch.Tensor) -> torch.Tensor:
    """``module(x)``: each element kept with probability 1 - p and scaled by 1 / (1 - p),
    its mask drawn as uniform numbers at least p. torch's dropout draws the mask by
    ``bernoulli_``, whose CPU sampler is serial: forward and backward over TuckER's
    (256, 64, 64) core block take 16.4 ms that way, 7.6 this way. The same distribution,
    another random stream."""
    # on a GPU torch's dropout is one fused kernel; in half precision uniform draws are coarse
    on_cpu = x.device.type == "cpu" and x.dtype in (torch.float32, torch.float64)
    if not module.training or module.p in (0.0, 1.0) or not on_cpu:
        return module(x)
    return x * torch.rand_like(x).ge_(module.p).div_(1.0 - module.p)


def _tucker(interaction: Any, anchor, relation, entities, direction: str) -> torch.Tensor:
    # PyKEEN's TuckER in its own order, with its batch-norm modules and its dropout rates:
    # dropout_h(BN_h(h)), then dropout_r(Z x_2 r), then dropout_hr(BN_hr(. x_1 h)) . t.
    head = dropout(interaction.head_dropout, _optional_batch_norm(anchor, interaction.head_batch_norm))
    core = dropout(
        interaction.relation_dropout, torch.einsum("ijk,bj->bik", interaction.core_tensor, relation)
    )
    combined = torch.einsum("bik,bi->bk", core, head)
    combined = dropout(
        interaction.head_relation_dropout,
        _optional_batch_norm(combined, interaction.head_relation_batch_norm),
    )
    return combined @ entities.T


def _conve(interaction: Any, anchor, relation, entities, direction: str) -> torch.Tensor:
    # f(h, r) . t + b_t with ConvE's own encoder modules (training-mode dropout and batch
    # norm in PyKEEN's order); tails only, heads are tails of the inverse relations.
    embeddings, bias = entities
    return conve_query(interaction, anchor, relation) @ embeddings.T + bias.reshape(-1)


# The score function of each family the rank engine scores by a product form
# (kgrank.engine.scoring.product_form_family), with autograd and the training-mode modules.
TRAINING_SCORES: dict[str, ScoreFunction] = {
    "transe": _transe,
    "rotate": _rotate,
    "complex": _complex,
    "distmult": _distmult,
    "rescal": _rescal,
    "tucker": _tucker,
    "conve": _conve,
}


def _scores_against_all(model: Any, score: ScoreFunction, anchors, relations, direction: str) -> torch.Tensor:
    if direction == "tail":
        anchor, relation, entities = model._get_representations(h=anchors, r=relations, t=None, mode=None)
    else:
        entities, relation, anchor = model._get_representations(h=None, r=relations, t=anchors, mode=None)
    return score(model.interaction, anchor, relation, entities, direction)


@contextmanager
def fast_scores(model: Any) -> Iterator[str | None]:
    """Within the block, ``model.score_t`` (and ``score_h`` where the family allows) score
    all entities by matrix products; yields the family, or None where nothing changed."""
    found = product_form_family(model)
    if found is None:
        yield None
        return
    family, directions = found
    score = TRAINING_SCORES[family]
    pykeen_methods = {"tail": model.score_t, "head": model.score_h}

    def method(direction: str) -> Callable:
        pykeen_method = pykeen_methods[direction]
        # score_t takes (h, r) pairs, score_h (r, t) pairs
        anchor_column, relation_column = (0, 1) if direction == "tail" else (1, 0)

        batch_keyword = "hr_batch" if direction == "tail" else "rt_batch"

        def scores(*args: torch.Tensor, slice_size=None, mode=None, **kwargs: Any) -> torch.Tensor:
            # PyKEEN's loops pass the batch by position, its predict() by keyword
            batch = args[0] if args else kwargs.pop(batch_keyword)
            if mode is not None or any(value is not None for value in kwargs.values()):
                return pykeen_method(batch, slice_size=slice_size, mode=mode, **kwargs)
            return _scores_against_all(
                model, score, batch[:, anchor_column], batch[:, relation_column], direction
            )

        return scores

    try:
        model.score_t = method("tail")
        if "head" in directions:
            model.score_h = method("head")
        yield family
    finally:
        # the class's own methods again
        for name in ("score_t", "score_h"):
            model.__dict__.pop(name, None)


def _collate(instances: Any) -> Callable[[list[int]], dict[str, torch.Tensor]]:
    def collate(items: list[int]) -> dict[str, torch.Tensor]:
        # the batch's rows of the (pairs x targets) label matrix, kept sparse (CSR)
        rows = instances.compressed[items]
        return {
            "pairs": torch.from_numpy(instances.pairs[items]),
            "indptr": torch.from_numpy(rows.indptr.astype("int64")),
            "indices": torch.from_numpy(rows.indices.astype("int64")),
            "values": torch.from_numpy(rows.data),
        }

    return collate


def positives(
    batch: dict[str, torch.Tensor], start: int | None, stop: int | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """(row, entity) of each positive in rows ``start:stop`` of a sparse-label batch,
    rows counted from ``start``."""
    indptr = batch["indptr"]
    start = 0 if start is None else start
    stop = len(indptr) - 1 if stop is None else stop
    first, last = int(indptr[start]), int(indptr[stop])
    rows = torch.repeat_interleave(
        torch.arange(stop - start), indptr[start + 1 : stop + 1] - indptr[start:stop]
    )
    return rows, batch["indices"][first:last]


def dense_labels(
    batch: dict[str, torch.Tensor], start: int | None, stop: int | None, num_targets: int
) -> torch.Tensor:
    """Rows ``start:stop`` of a sparse-label batch as the dense labels PyKEEN's loss takes."""
    rows, columns = positives(batch, start, stop)
    indptr = batch["indptr"]
    first = int(indptr[start or 0])
    num_rows = (len(indptr) - 1 if stop is None else stop) - (start or 0)
    labels = torch.zeros(num_rows, num_targets, dtype=batch["values"].dtype)
    labels[rows, columns] = batch["values"][first : first + len(columns)]
    return labels


def _all_ones(batch: dict[str, torch.Tensor], start: int | None, count: int) -> bool:
    # A triple listed twice labels its entity 2 (PyKEEN sums duplicates into the label
    # row): its cross-entropy weighs that entity twice and its BCE refuses the label,
    # so such a (sub-)batch goes through PyKEEN's own loss.
    first = int(batch["indptr"][start or 0])
    return bool((batch["values"][first : first + count] == 1).all())


def sparse_label_batches(loop: Any, fused_loss: bool = True) -> bool:
    """Give a PyKEEN LCWA loop batches whose labels stay sparse until the step needs them.

    PyKEEN's LCWA instances hand out each pair's label row dense (one row of the
    number of entities per pair, densified and stacked by the data loader: 75-88 ms of a
    WN18RR batch of 512); here the batch carries the CSR rows, and the step makes the
    dense label block of its (sub-)batch in one scatter. The data loader and its
    shuffling are PyKEEN's. With ``fused_loss`` (the default) a cross-entropy,
    BCE-after-sigmoid, softplus (soft pointwise hinge) or self-adversarial loss is
    computed from the positives' indices and the dense block is never made
    (:mod:`kgrank.training.lcwa_loss`, equal to PyKEEN's loss to fp32 rounding);
    any other loss, or ``fused_loss=False``, goes through PyKEEN's step
    (``_process_batch_static``) and loss, the same to the bit. Returns False, changing
    nothing, for a loop that is not LCWA over tails or weights its losses.
    """
    from pykeen.training import LCWATrainingLoop
    from pykeen.triples.instances import LCWAInstances

    if type(loop) is not LCWATrainingLoop or loop.target != 2 or loop.loss_weighter is not None:
        return False

    def create_training_data_loader(triples_factory: Any, sampler: str | None, **kwargs: Any) -> Any:
        if sampler:
            raise NotImplementedError(f"LCWA training has no batch sampler; got {sampler!r}")
        instances = LCWAInstances.from_triples_factory(triples_factory, target=loop.target)
        # the pairs by position (a range is a map-style dataset); the batch is made by _collate
        return torch.utils.data.DataLoader(
            dataset=range(len(instances)), collate_fn=_collate(instances), **kwargs
        )

    fused = fused_loss and fused_loss_name(loop.loss) is not None

    def process_batch(
        batch: dict[str, torch.Tensor],
        start: int | None,
        stop: int | None,
        label_smoothing: float = 0.0,
        slice_size: int | None = None,
    ) -> torch.Tensor:
        device = loop.model.device
        rows, columns = positives(batch, start, stop)
        if fused and _all_ones(batch, start, len(columns)):
            scores = loop.score_method(
                batch["pairs"][start:stop].to(device), slice_size=slice_size, mode=loop.mode
            )
            loss = lcwa_loss_from_positives(
                loop.loss, scores, rows.to(device), columns.to(device), label_smoothing
            )
            return loss + loop.model.collect_regularization_term()
        return LCWATrainingLoop._process_batch_static(
            model=loop.model,
            score_method=loop.score_method,
            loss=loop.loss,
            num_targets=loop.num_targets,
            mode=loop.mode,
            batch={
                "pairs": batch["pairs"][start:stop].to(device),
                "target": dense_labels(batch, start, stop, loop.num_targets).to(device),
            },
            start=None,
            stop=None,
            label_smoothing=label_smoothing,
            slice_size=slice_size,
        )

    loop._create_training_data_loader = create_training_data_loader
    loop._process_batch = process_batch
    return True


def _merges_safely(model: Any) -> bool:
    """Whether scoring positives and negatives in one call of each representation is
    PyKEEN's arithmetic: the model takes PyKEEN's own lookup and scoring, and no module
    sees a call's rows as a whole. A regulariser does (an Lp term averages over each
    lookup's rows; PyKEEN's NoRegularizer keeps none), and so does batch norm (PyKEEN
    normalises the positives and the negatives as two batches)."""
    from pykeen.models import ERModel
    from pykeen.regularizers import NoRegularizer, Regularizer
    from pykeen.utils import get_batchnorm_modules

    if not isinstance(model, ERModel) or get_batchnorm_modules(model):
        return False
    if any(
        getattr(type(model), name) is not getattr(ERModel, name)
        for name in ("_get_representations", "score_hrt")
    ):
        return False
    return not any(
        isinstance(module, Regularizer) and type(module) is not NoRegularizer for module in model.modules()
    )


def _scores_of_triples(model: Any, triples: torch.Tensor, mode: Any) -> torch.Tensor:
    """``model.score_hrt(triples)`` with one call of each representation: the heads and
    tails looked up together, so that the embedding table's dense gradient is made once."""
    entities = model._get_entity_representations_from_inductive_mode(mode=mode)
    interaction = model.interaction
    heads = [entities[index] for index in interaction.head_indices]
    tails = [entities[index] for index in interaction.tail_indices]
    count = len(triples)
    if heads == tails:
        looked_up = [entity(indices=torch.cat([triples[:, 0], triples[:, 2]])) for entity in heads]
        # split's gradient is one concatenation; two slices would each zero a full block
        pairs = [torch.split(rows, [count, count]) for rows in looked_up]
        head, tail = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    else:
        head = [entity(indices=triples[:, 0]) for entity in heads]
        tail = [entity(indices=triples[:, 2]) for entity in tails]
    relation = [relation(indices=triples[:, 1]) for relation in model.relation_representations]
    head, relation, tail = (rows[0] if len(rows) == 1 else rows for rows in (head, relation, tail))
    return interaction.score_hrt(h=head, r=relation, t=tail)


def one_lookup_batches(loop: Any) -> bool:
    """Give a PyKEEN sLCWA loop a step that looks each batch up once.

    PyKEEN scores a batch's positives and its negatives in two calls, each looking up
    heads and tails apart: four lookups in the entity table, each of whose gradients is a
    dense (entities x dim) block, zeroed, filled and added to the others (a third of a
    WN18RR TransE step with 64 negatives). Here positives and negatives are scored in one
    call with heads and tails looked up together: one dense block. The scores, the loss
    and the loop are PyKEEN's; the gradient is the same sum added in another order, so
    the weights agree with PyKEEN's to fp32 rounding (tests/test_training_step.py). A
    model with dropout draws its masks in another order: the same distribution.
    Returns False, changing nothing, for another loop or a model :func:`_merges_safely`
    refuses; a batch with filter masks or weights goes through PyKEEN's step.
    """
    from pykeen.training import SLCWATrainingLoop

    model = loop.model
    if type(loop) is not SLCWATrainingLoop or not _merges_safely(model):
        return False
    pykeen_process_batch = loop._process_batch

    def process_batch(
        batch: dict[str, torch.Tensor],
        start: int | None,
        stop: int | None,
        label_smoothing: float = 0.0,
        slice_size: int | None = None,
    ) -> torch.Tensor:
        if slice_size is not None or any(
            batch.get(key) is not None for key in ("masks", "pos_weights", "neg_weights")
        ):
            return pykeen_process_batch(batch, start, stop, label_smoothing, slice_size)
        positives = batch["positives"][start:stop].to(model.device)
        negatives = batch["negatives"][start:stop]
        scores = _scores_of_triples(
            model, torch.cat([positives, negatives.reshape(-1, 3).to(model.device)]), loop.mode
        )
        return (
            loop.loss.process_slcwa_scores(
                positive_scores=scores[: len(positives)],
                negative_scores=scores[len(positives) :].view(*negatives.shape[:-1]),
                label_smoothing=label_smoothing,
                batch_filter=None,
                num_entities=model._get_entity_len(mode=loop.mode),
            )
            + model.collect_regularization_term()
        )

    loop._process_batch = process_batch
    return True
