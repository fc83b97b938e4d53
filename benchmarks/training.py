"""Seconds per epoch of PyKEEN 1.11.1's LCWA step against kgrank's 1-N step, and the floor.

For each family and dataset, both take the same LCWA batches (the published embedding
dimension and batch size of the pair; DistMult, which no study trains, at dim 256 and
batch 256) through a whole step: scores of every entity, the published loss with label
smoothing, backward, optimiser step. The floor is the bare arithmetic of the same step:
the three matrix products of a dot-product score block (forward, and the gradients of
the queries and of the entity table), or torch's cdist forward and backward for the L1
norm, on random tensors of the same shapes. Times are the median of ``--batches``
batches (after one untimed warm-up), each from the data loader's assembly of the batch
(PyKEEN's dense label rows; kgrank's sparse ones) to the optimiser step, scaled to an
epoch by the number of LCWA batches. The process keeps freed memory
(:mod:`kgrank.training.allocator`), as every kgrank command does, for both sides.

PyKEEN's step goes through its loop's own forward pass; where a (batch, entities, width)
float32 tensor would not fit ``--pykeen-memory`` GiB (on WN18RR every family but RESCAL and
TuckER; ComplEx, which PyKEEN scores by one einsum, is split all the same) the batch is
split into sub-batches whose gradients accumulate, as PyKEEN's ``sub_batch_size`` does.

    python benchmarks/training.py [--datasets fb15k237 wn18rr] [--families transe ...]
        [--batches 3] [--threads 2] [--pykeen-batches 2] [--pykeen-memory 4] [--data results/data]
        [--skip-pykeen] [--explain-above 1.5]

Prints one row per (dataset, family): PyKEEN's sub-batch, PyKEEN s/epoch, kgrank s/epoch,
floor s/epoch, PyKEEN / kgrank, kgrank / floor, the seconds of the step's parts outside the
model's scores (the loss, the optimiser's step and the batch's assembly, each measured
alone), and the rest (the scores forward and backward, the label positions, Python) against
the floor. Then, for each family more than ``--explain-above`` times its floor, what those
parts cost (the loss against one copy of its score block and against its own exp, or
softplus and sigmoid, alone) and where one more kgrank step's time goes (torch's profiler:
the operators of most self time and the time outside every operator), and why each part
above the floor stays. Speed is measured here, correctness in tests/test_training_step.py.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings
from pathlib import Path

# torch's profiler (op_breakdown) logs its start and stop otherwise; read when torch loads
os.environ.setdefault("KINETO_LOG_LEVEL", "5")

import torch  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
FAMILIES = ("transe", "rotate", "distmult", "complex", "rescal", "tucker")
# no study trains DistMult or RESCAL: a common setting (RESCAL's matrices cost d^2 per relation)
UNPUBLISHED = {
    "distmult": {"model_kwargs": {"embedding_dim": 256}, "batch_size": 256},
    "rescal": {"model_kwargs": {"embedding_dim": 64}, "batch_size": 256},
}


# What the floor leaves out, and why kgrank's step keeps it (the parts measured above)
WHY_ABOVE_THE_FLOOR = (
    "",
    "Why the parts above the floor stay:",
    "- The loss reads every score of the block: the cross-entropy its row maxima, exp and row sums,",
    "  BCE its softplus, and the gradient softmax or sigmoid less the smoothed target, scattered at",
    "  the positives and scaled. Each is a torch operator, a pass over the block; the cross-entropy's",
    "  exp is two (the arguments below the normal range set aside, then exp), or five where a block",
    "  sets many aside, so that every exp stays on torch's fast path (kgrank.training.lcwa_loss); the",
    "  exp alone is printed. torch has no operator that fuses the passes; a compiled kernel would,",
    "  and an install from wheels cannot build one (kgrank needs no compiler).",
    "- The optimiser's step is torch's fused Adam (for-each where torch has no fused form): one pass",
    "  over the weights, their gradients and two moments.",
    "- The rest (the last column) is the scores forward and backward with the model's own",
    "  operators the profile lists: the random draws (aten::uniform_) of TuckER's dropout masks,",
    "  one number per element of its (batch x dim x dim) core block, from torch's CPU generator;",
    "  batch norms, a regulariser's norms, RotatE's and ComplEx's complex products, each a pass in",
    "  PyKEEN's order so that the loss and gradients stay PyKEEN's; the L2 distance's passes after",
    "  its product (the entities' norms, clamp, square root, sign) and in its backward pass (the",
    "  ratio g / -d, its zeros at d = 0, its row and column sums: kgrank.training.step); and the",
    "  label positions, zero_grad and Python.",
    "- kgrank fuses every loss these steps take: the cross-entropy, BCE after a sigmoid, the",
    "  softplus loss (WN18RR TransE's) and the self-adversarial one (RotatE's, whose published loop",
    "  is sLCWA: here its LCWA form, a softmax over each row's negatives). Each is a few passes of",
    "  its own transcendental functions (printed alone) and the elementwise passes around them.",
)


def prepared(data: Path, dataset: str) -> Path:
    """The dataset folder the workflow writes; prepared from the shared archive when absent."""
    folder = data / dataset
    if not (folder / "train.tsv").is_file():
        import yaml

        from kgrank.data.datasets import prepare_dataset

        source = yaml.safe_load((REPO / "config" / "config.yaml").read_text())["datasets"][dataset]
        if "archive" in source:
            source = {**source, "archive": str((REPO / source["archive"]).resolve())}
        prepare_dataset(dataset, source, folder)
    return folder


def setting(dataset: str, family: str) -> tuple[dict, dict]:
    """(pipeline of the pair, with LCWA and the published dimensions), or a common one."""
    from kgrank.training.hyperparameters import load_hyperparameters

    path = REPO / "config" / "hyperparameters" / dataset / f"{family}.yaml"
    if family in UNPUBLISHED:
        extra = UNPUBLISHED[family]
        pipeline = {
            "model": family,
            "model_kwargs": extra["model_kwargs"],
            "loss": "crossentropy",
            "optimizer": "adam",
            "optimizer_kwargs": {"lr": 0.001},
            "training_kwargs": {"batch_size": extra["batch_size"], "label_smoothing": 0.1},
            "dataset_kwargs": {"create_inverse_triples": True},
        }
    else:
        pipeline = load_hyperparameters(path)["pipeline"]
    return pipeline, dict(pipeline["training_kwargs"])


def make_optimizer(pipeline: dict, model, fast: bool):
    """The pair's optimiser as kgrank trains with it (``kgrank.training.train.build_optimizer``:
    torch's fused or for-each form), or as PyKEEN does."""
    from pykeen.optimizers import optimizer_resolver

    from kgrank.training.train import build_optimizer

    if fast:
        return build_optimizer(pipeline, model)
    return optimizer_resolver.make(
        pipeline["optimizer"], pipeline.get("optimizer_kwargs"), params=model.get_grad_params()
    )


def time_steps(
    model,
    optimizer,
    factory,
    batch_size: int,
    num_batches: int,
    label_smoothing: float,
    fast: bool,
    sub_batch_size: int | None = None,
    breakdown: bool = False,
    training_loop: str = "lcwa",
    loop_kwargs: dict | None = None,
    synchronise=lambda: None,
) -> tuple[list[float], int, tuple[float, str]]:
    """Seconds of each step after the first, the batch's assembly by the data loader
    included, the number of batches per epoch, and with ``breakdown`` the seconds of the
    step's parts outside the model's scores and where one more step's time goes
    (:func:`step_accounting`, :func:`op_breakdown`; else 0 and ""). ``fast`` takes kgrank's step (its
    scores and its sparse-label batches, or for sLCWA its one lookup per batch), else
    PyKEEN's. ``sub_batch_size`` splits a batch into slices whose gradients accumulate,
    through the loop's own forward pass, as PyKEEN's ``sub_batch_size`` does.
    ``training_loop`` names PyKEEN's loop (``loop_kwargs``: its negative sampler for
    sLCWA); ``synchronise`` waits for a GPU before each clock reading."""
    from contextlib import nullcontext

    from pykeen.training import training_loop_resolver

    from kgrank.training.step import fast_scores, one_lookup_batches, sparse_label_batches

    with fast_scores(model) if fast else nullcontext():
        # the loop binds model.score_t when it is built: build it inside the block
        loop = training_loop_resolver.make(
            training_loop, model=model, triples_factory=factory, optimizer=optimizer, **(loop_kwargs or {})
        )
        if fast:
            sparse_label_batches(loop) or one_lookup_batches(loop)
        # the loop's own data loader, as its train() builds it (same seed for both sides)
        loader = loop._create_training_data_loader(
            factory,
            sampler=None,
            batch_size=batch_size,
            shuffle=True,
            drop_last=False,
            generator=torch.Generator().manual_seed(0),
        )
        batches = iter(loader)

        def one_step() -> None:
            batch = next(batches)
            loop.optimizer.zero_grad()
            size = loop._get_batch_size(batch)
            step = sub_batch_size or size
            for first in range(0, size, step):
                loop._forward_pass(
                    batch, first, min(first + step, size), size, label_smoothing, slice_size=None
                )
            loop.optimizer.step()

        seconds = repeated_seconds(one_step, num_batches, synchronise)  # the first batch warms up
        if breakdown:
            outside, accounted = step_accounting(one_step, loop, loader, synchronise)
            return seconds, len(loader), (outside, f"{accounted} {op_breakdown(one_step)}")
    return seconds, len(loader), (0.0, "")


def captured_loss(one_step, loop) -> tuple:
    """(the loss as one more step first calls it, as a function of the scores alone; those
    scores; its name): kgrank's fused loss (:mod:`kgrank.training.lcwa_loss`, as
    ``sparse_label_batches`` calls it) or PyKEEN's ``process_lcwa_scores`` on dense
    labels, whichever the step takes (a batch whose label rows repeat a pair goes through
    PyKEEN's loss even where a fused form exists)."""
    import kgrank.training.step as step_module
    from kgrank.training.lcwa_loss import fused_loss_name

    calls = []
    fused, pykeen = step_module.lcwa_loss_from_positives, loop.loss.process_lcwa_scores
    pykeen_name = f"PyKEEN's {type(loop.loss).__name__} on dense labels"

    def fused_call(loss, scores, *args):
        name = f"kgrank's fused {fused_loss_name(loss)}"
        calls.append((lambda leaf: fused(loss, leaf, *args), scores.detach().clone(), name))
        return fused(loss, scores, *args)

    def pykeen_call(predictions, *args, **kwargs):
        calls.append((lambda leaf: pykeen(leaf, *args, **kwargs), predictions.detach().clone(), pykeen_name))
        return pykeen(predictions, *args, **kwargs)

    own = vars(loop.loss)
    before = own.get("process_lcwa_scores")
    step_module.lcwa_loss_from_positives, loop.loss.process_lcwa_scores = fused_call, pykeen_call
    try:
        one_step()
    finally:
        step_module.lcwa_loss_from_positives = fused
        if before is None:
            del loop.loss.process_lcwa_scores  # the class's own method again
        else:
            loop.loss.process_lcwa_scores = before
    if not calls:
        raise ValueError("the step scored no LCWA block (an sLCWA loop has none to account for)")
    return calls[0]


def repeated_seconds(call, repeats: int, synchronise=lambda: None) -> list[float]:
    """Seconds of ``repeats`` calls of ``call`` after one untimed (the warm-up: first-call
    allocations, thread pools); ``synchronise`` waits for a GPU before each clock reading."""
    seconds = []
    for index in range(repeats + 1):
        synchronise()
        start = time.perf_counter()
        call()
        synchronise()
        if index:
            seconds.append(time.perf_counter() - start)
    return seconds


def _median_seconds(call, repeats: int, synchronise) -> float:
    return statistics.median(repeated_seconds(call, repeats, synchronise))


def step_accounting(one_step, loop, loader, synchronise=lambda: None, repeats: int = 5) -> tuple[float, str]:
    """The parts of a step outside the model's scores, each measured alone: (their seconds
    together, what each costs). The model's weights and the optimiser's state are put back
    afterwards, so that what is timed next starts where the step left them.

    - The loss, forward and backward on the (batch x entities) scores one more step hands
      it, against one copy of that block (a pass that reads and writes each score once)
      and against the loss's own transcendental functions alone, every argument in their
      fast range: the cross-entropy's exp, BCE's and the softplus loss's softplus (forward)
      and sigmoid (backward), the self-adversarial loss's softmax, softplus and sigmoid.
      Above those the loss is passes over the block (maxima, shift, the exp's set-aside
      arguments, sums; the gradient's divide, subtract, scatter and scale), each a torch
      operator of its own: fusing them takes a compiled kernel, which an install from
      wheels cannot build.
    - The optimiser's step (torch's fused or for-each form over the weights, their
      gradients and the optimiser's state).
    - The data loader's assembly of a batch (from a fresh iterator of the same loader).
    """
    import copy

    model_state = copy.deepcopy(loop.model.state_dict())
    optimiser_state = copy.deepcopy(loop.optimizer.state_dict())
    loss, scores, name = captured_loss(one_step, loop)
    leaves = [scores.clone().requires_grad_(True) for _ in range(repeats + 1)]
    sources = [scores.clone() for _ in range(repeats + 1)]

    def forward_backward() -> None:
        loss(leaves.pop()).backward()

    loss_alone = _median_seconds(forward_backward, repeats, synchronise)
    copy_seconds = _median_seconds(lambda: sources.pop().clone(), repeats, synchronise)
    # the gradients of the last step are in place; the state is put back below
    optimiser = _median_seconds(loop.optimizer.step, repeats, synchronise)
    batches = iter(loader)
    batch = _median_seconds(lambda: next(batches), repeats, synchronise)
    loop.model.load_state_dict(model_state)
    loop.optimizer.load_state_dict(optimiser_state)
    if name.endswith("CrossEntropyLoss"):
        fast_range = (scores - scores.amax(dim=1, keepdim=True)).clamp_(min=-87.0)
        own, what = _median_seconds(lambda: torch.exp(fast_range), repeats, synchronise), "exp"
    elif name.endswith(("BCEAfterSigmoidLoss", "SoftplusLoss", "SoftPointwiseHingeLoss")):
        both = (torch.nn.functional.softplus, torch.sigmoid)
        own = _median_seconds(lambda: [function(scores) for function in both], repeats, synchronise)
        what = "softplus and sigmoid"
    elif name.endswith("NSSALoss"):
        # the negatives' weights are a softmax (its exp), their loss a softplus, its gradient a sigmoid
        three = (lambda block: torch.softmax(block, dim=1), torch.nn.functional.softplus, torch.sigmoid)
        own = _median_seconds(lambda: [function(scores) for function in three], repeats, synchronise)
        what = "softmax, softplus and sigmoid"
    else:
        own, what = 0.0, ""
    rows, entities = scores.shape
    transcendental = f", its {what} alone {own * 1e3:.1f} ms" if what else ""
    return loss_alone + optimiser + batch, (
        f"loss ({name}, forward and backward over the {rows} x {entities:,} score block) "
        f"{loss_alone * 1e3:.1f} ms = {loss_alone / copy_seconds:.1f} copies of the block "
        f"({copy_seconds * 1e3:.2f} ms each){transcendental}; optimiser {optimiser * 1e3:.1f} ms "
        f"({type(loop.optimizer).__name__}); batch assembly {batch * 1e3:.1f} ms;"
    )


def op_breakdown(call, top: int = 5) -> str:
    """Where one call's time goes, measured: torch's profiler over the call, the share of
    its wall time in each of the ``top`` operators of most self time, and the share outside
    every operator (Python, the data loader, pandas). The profiler adds a little to each
    operator, so the shares are a guide to where the time above the floor sits, not times
    to add up; a ``bmm``/``mm``/``cdist`` share is the floor's own arithmetic."""
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        start = time.perf_counter()
        call()
        wall = time.perf_counter() - start
    own = sorted(
        ((event.key, event.self_cpu_time_total / 1e6) for event in profiler.key_averages()),
        key=lambda item: -item[1],
    )
    outside = max(wall - sum(seconds for _, seconds in own), 0.0)
    shares = [f"{name} {seconds / wall:.0%}" for name, seconds in own[:top]]
    return f"{wall:.3f} s: " + ", ".join([*shares, f"outside operators {outside / wall:.0%}"])


def pykeen_sub_batch(batch_size: int, num_entities: int, width: int, budget_gib: float) -> int | None:
    """PyKEEN's score_t broadcasts a (batch, entities, width) float32 tensor for most families
    (on WN18RR a whole batch would take 21-43 GB): the largest power-of-two slice of the batch
    whose broadcast fits ``budget_gib``, or None where the whole batch does."""
    per_query = num_entities * width * 4
    if batch_size * per_query <= budget_gib * 2**30:
        return None
    size = 1
    while 2 * size * per_query <= budget_gib * 2**30:
        size *= 2
    return size


def step_products(family: str, batch_size: int, num_entities: int, width: int, relation_width: int):
    """The matrix products of one step, forward and backward, as (batch of matrices, m, k, n):
    each product C = A B with A (m x k) and B (k x n); its two gradient products follow."""
    score_block = [(1, batch_size, width, num_entities)]
    if family == "rescal":  # h^T R: one (1 x d) (d x d) product per query
        return [(batch_size, 1, width, width), *score_block]
    if family == "tucker":  # Z x_2 r, then (Z x_2 r) x_1 h, then the score block
        return [(1, batch_size, relation_width, width * width), (batch_size, 1, width, width), *score_block]
    return score_block


def floor_seconds(
    family: str, batch_size: int, num_entities: int, width: int, relation_width: int, repeats: int
) -> float:
    """The bare arithmetic of one step: every matrix product forward and both gradient
    products (A^T G and G B^T), or cdist forward and backward for the L1 norm."""
    if family == "transe-l1":
        queries = torch.randn(batch_size, width, requires_grad=True)
        entities = torch.randn(num_entities, width, requires_grad=True)
    else:
        operands = [
            (torch.randn(count, m, k), torch.randn(count, k, n))
            for count, m, k, n in step_products(family, batch_size, num_entities, width, relation_width)
        ]

    def step() -> None:
        if family == "transe-l1":
            torch.cdist(queries, entities, p=1).sum().backward()
            queries.grad = entities.grad = None
            return
        for left, right in operands:
            product = torch.bmm(left, right)
            _ = torch.bmm(product, right.transpose(1, 2))  # gradient of the left factor
            _ = torch.bmm(left.transpose(1, 2), product)  # gradient of the right factor

    return statistics.median(repeated_seconds(step, repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["fb15k237", "wn18rr"])
    parser.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES)
    parser.add_argument("--batches", type=int, default=3, help="timed kgrank batches")
    parser.add_argument("--pykeen-batches", type=int, default=2, help="timed PyKEEN batches")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--pykeen-memory", type=float, default=4.0, help="GiB for PyKEEN's broadcast tensor per sub-batch"
    )
    parser.add_argument("--data", type=Path, default=REPO / "results" / "data")
    parser.add_argument(
        "--skip-pykeen",
        action="store_true",
        help="kgrank against the floor only (PyKEEN's WN18RR steps take minutes)",
    )
    parser.add_argument(
        "--explain-above",
        type=float,
        default=1.5,
        help="for each family above this kgrank / floor, print where one step's time goes",
    )
    args = parser.parse_args()

    from kgrank.data.datasets import load_factories
    from kgrank.training.allocator import keep_freed_memory
    from kgrank.training.train import build_model, create_inverse_triples

    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore")
    # as every kgrank command does; both sides' steps run under it
    print(f"glibc keeps freed memory (kgrank.training.allocator): {keep_freed_memory()}")
    print(f"threads: {args.threads}; seconds per epoch (median batch x LCWA batches per epoch)")
    columns = ("dataset", "family", "dim", "batch", "PyKEEN sub-batch", "PyKEEN s", "kgrank s", "floor s")
    ratios = ["PyKEEN / kgrank", "kgrank / floor", "loss, optimiser, batch s", "rest / floor"]
    print("| " + " | ".join([*columns, *ratios]) + " |")
    print("|---" * (len(columns) + len(ratios)) + "|")
    explained = []
    for dataset in args.datasets:
        folder = prepared(args.data, dataset)
        for family in args.families:
            pipeline, training = setting(dataset, family)
            factories = load_factories(folder, create_inverse_triples=create_inverse_triples(pipeline))
            model = build_model(pipeline, factories.training, seed=0)
            batch_size = int(training["batch_size"])
            smoothing = float(training.get("label_smoothing") or 0.0)
            dim = int(pipeline["model_kwargs"]["embedding_dim"])
            width = 2 * dim if family in ("rotate", "complex") else dim
            num_entities = factories.training.num_entities
            sub_batch = pykeen_sub_batch(batch_size, num_entities, width, args.pykeen_memory)
            model.train()
            ours, batches_per_epoch, (outside, where) = time_steps(
                model,
                make_optimizer(pipeline, model, fast=True),
                factories.training,
                batch_size,
                args.batches,
                smoothing,
                True,
                breakdown=True,
            )
            ours = statistics.median(ours)
            theirs = 0.0
            if not args.skip_pykeen:
                pykeen_steps, _, _ = time_steps(
                    model,
                    make_optimizer(pipeline, model, fast=False),
                    factories.training,
                    batch_size,
                    args.pykeen_batches,
                    smoothing,
                    False,
                    sub_batch,
                )
                theirs = statistics.median(pykeen_steps)
            kernel = "transe-l1" if family == "transe" and model.interaction.p == 1 else family
            relation_width = int(pipeline["model_kwargs"].get("relation_dim") or width)
            floor = floor_seconds(kernel, batch_size, num_entities, width, relation_width, args.batches)
            name = f"{family} (L{model.interaction.p:g})" if family == "transe" else family
            pykeen = "skipped" if args.skip_pykeen else f"{theirs * batches_per_epoch:.0f}"
            against_pykeen = "skipped" if args.skip_pykeen else f"{theirs / ours:.1f}x"
            print(
                f"| {dataset} | {name} | {dim} | {batch_size} | {sub_batch or batch_size} | {pykeen} | "
                f"{ours * batches_per_epoch:.1f} | {floor * batches_per_epoch:.1f} | "
                f"{against_pykeen} | {ours / floor:.2f}x | {outside * batches_per_epoch:.1f} | "
                f"{(ours - outside) / floor:.2f}x |",
                flush=True,
            )
            if ours / floor > args.explain_above:
                explained.append(
                    f"- {dataset} {name} ({ours / floor:.2f}x; floor {floor:.3f} s a step): {where}"
                )
    if explained:
        print(f"\nAbove {args.explain_above}x of the floor, the parts of one more kgrank step")
        print("measured alone, then that step under torch's profiler:")
        print("\n".join(explained))
        print("\n".join(WHY_ABOVE_THE_FLOOR))


if __name__ == "__main__":
    main()
