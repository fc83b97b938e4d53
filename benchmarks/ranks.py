"""Speed of kgrank's rank engine against PyKEEN 1.11.1's RankBasedEvaluator on FB15k-237 and WN18RR.

For each model (loaded from a finished run, or trained for a few cheap epochs when
absent) both rank the same test triples on both sides, filtered by train, valid and
test, in one process. Prints both times, their ratio, the fraction of identical ranks
and the largest metric difference, the engine's time at 1 and 2 threads, and the floor:
the bare arithmetic of the same ranking on random tensors of the same shapes (per batch,
the score block's matrix products, forward only, or torch's cdist for the L1 norm, and
the two comparisons of every score with the true one), so that the engine is measured
against the arithmetic and not only against PyKEEN. Never asserted in tests; speed is
measured here, correctness in tests/test_ranks.py. All are warmed up on one batch first,
untimed; the ratios compare them at the same number of threads (--evaluator-threads), the
engine by the better of its two rankings there (one machine's run-to-run noise is 10-30 %).

    python benchmarks/ranks.py [--datasets fb15k237 wn18rr]
        [--models transe transe-l2 rotate complex tucker distmult]
        [--triples 20438] [--results results] [--batch-size 256] [--evaluator-threads 2]
        [--skip-pykeen] [--explain-above 1.5]

For each model more than ``--explain-above`` times its floor it then prints where one more
ranking's time goes (torch's profiler: the operators of most self time, and the time
outside every operator: numpy's comparisons and entries, the filter index, pandas, Python),
and the remainders that stay by design: the near-tie rescoring
(:class:`kgrank.engine.scoring.NearTies`, in the rows whose window holds a candidate besides
the true entity), which makes the ranks PyKEEN's (one ranking without it, timed, and how
many of its ranks then differ); for ComplEx the complex product its tails keep for
PyKEEN's bits against the floor's real product of width 2d; and for the L2 distance
(TransE by L2, RotatE) its own passes over the block against its product alone.

``transe-l2`` scores the trained TransE's embeddings with the L2 norm (the published
TransE of both datasets uses L1, which has no matrix-product form); ``distmult`` is an
untrained DistMult, since no study trains one.
"""

from __future__ import annotations

import argparse
import os
import time
import warnings
from pathlib import Path

# torch's profiler (training.op_breakdown) logs its start and stop otherwise
os.environ.setdefault("KINETO_LOG_LEVEL", "5")

import numpy as np  # noqa: E402
import torch  # noqa: E402

RANK_TYPES = ("optimistic", "realistic", "pessimistic")


def with_l2_norm(model, factories):
    """The same learned TransE embeddings scored with the L2 norm: the product-form path.

    The published TransE uses L1, which has no product form (kgrank uses torch's
    cdist kernel there); this variant measures the L2 path on identical weights.
    """
    from pykeen.models import TransE

    l2 = TransE(
        triples_factory=factories.training,
        embedding_dim=model.entity_representations[0].shape[0],
        scoring_fct_norm=2,
    )
    # the embeddings only: a trained model may carry regularizer buffers the new one lacks
    wanted = l2.state_dict()
    l2.load_state_dict({key: value for key, value in model.state_dict().items() if key in wanted})
    return l2.eval()


def untrained_distmult(results: Path, dataset: str, seed: int):
    """DistMult (dim 200) at its seeded initialisation: no study trains it, and the cost of
    scoring does not depend on the weights (random weights give continuous scores, so
    ties stay rare)."""
    from pykeen.models import DistMult

    from kgrank.data.datasets import load_factories

    factories = load_factories(results / "data" / dataset)
    model = DistMult(triples_factory=factories.training, embedding_dim=200, random_seed=seed)
    return model.eval(), factories


def model_for(results: Path, dataset: str, model_name: str, seed: int = 42):
    """The run's model of ``dataset``, or one trained under the laptop budget when the run has none.

    ``transe-l2`` is the run's TransE scored with the L2 norm (see :func:`with_l2_norm`).
    """
    if model_name == "transe-l2":
        model, factories = model_for(results, dataset, "transe", seed)
        return with_l2_norm(model, factories), factories
    if model_name == "distmult":
        return untrained_distmult(results, dataset, seed)
    from kgrank.training.hyperparameters import load_hyperparameters
    from kgrank.training.train import load_model, train
    from kgrank.workflow.config import pair_budget

    dataset_dir = results / "data" / dataset
    model_dir = results / "models" / dataset / model_name
    if not (model_dir / "model.pt").is_file():
        import yaml

        config = yaml.safe_load(Path("config/config.yaml").read_text(encoding="utf-8"))
        budget = pair_budget(config["budget"], dataset, model_name)
        print(f"training {model_name} on {dataset} ({budget}) into {model_dir}", flush=True)
        path = Path("config/hyperparameters") / dataset / f"{model_name}.yaml"
        hyperparameters = load_hyperparameters(path)
        train(dataset_dir, hyperparameters, model_dir, seed=seed, device="cpu", threads=2, **budget)
    return load_model(model_dir, dataset_dir)


def evaluator_ranks(model, factories, test, batch_size: int) -> tuple[float, dict]:
    from pykeen.evaluation import RankBasedEvaluator

    evaluator = RankBasedEvaluator(clear_on_finalize=False)
    start = time.perf_counter()
    evaluator.evaluate(
        model,
        test,
        batch_size=batch_size,
        use_tqdm=False,
        # The whole test split filters too, also when only its first triples are ranked
        # (--triples): kgrank's index always holds every known answer.
        additional_filter_triples=[
            factories.training.mapped_triples,
            factories.validation.mapped_triples,
            factories.testing.mapped_triples,
        ],
    )
    seconds = time.perf_counter() - start
    ranks = {
        (side, rank_type): np.concatenate(evaluator.ranks[side, rank_type])
        for side in ("head", "tail")
        for rank_type in RANK_TYPES
    }
    return seconds, ranks


def engine_ranks(model, factories, test, batch_size: int):
    from kgrank.engine.candidates import known_answers
    from kgrank.engine.ranks import compute_ranks

    start = time.perf_counter()
    # The filter index is built inside the timing: PyKEEN builds its own filter too.
    table = compute_ranks(model, test, known_answers(factories), batch_size=batch_size, progress=False)
    return time.perf_counter() - start, table


def score_block_work(model, family: str, batch_size: int):
    """A callable computing one batch's (batch, entities) score block through the family's
    bare products on random operands of the model's shapes (forward only; torch's cdist for
    TransE with the L1 norm, which has no product form)."""
    from training import step_products  # benchmarks/training.py: the products of one score block

    num_entities = model.num_entities
    width = int(model.entity_representations[0].shape[0])
    relation_width = int(model.relation_representations[0].shape[0])
    if family in ("rotate", "complex"):
        width, relation_width = 2 * width, 2 * relation_width
    if family == "transe" and model.interaction.p == 1:
        queries, entities = torch.randn(batch_size, width), torch.randn(num_entities, width)
        return lambda: torch.cdist(queries, entities, p=1)
    operands = [
        (torch.randn(count, m, k), torch.randn(count, k, n))
        for count, m, k, n in step_products(family, batch_size, num_entities, width, relation_width)
    ]

    def products() -> torch.Tensor:
        for left, right in operands:
            scores = torch.bmm(left, right)
        return scores.reshape(batch_size, num_entities)

    return products


def floor_seconds(model, family: str, num_queries: int, batch_size: int, repeats: int = 5) -> float:
    """The bare arithmetic of ranking ``num_queries`` (triple, side) queries in batches."""
    from training import repeated_seconds  # benchmarks/training.py

    from kgrank.engine.ranks import count_above

    with torch.inference_mode():
        score_block = score_block_work(model, family, batch_size)
        true_scores = torch.randn(batch_size, 1)

        def ranking() -> None:
            scores = score_block()
            # the two counts in their fastest form on the CPU (numpy's comparisons, int32
            # sums), the engine's own
            _ = (count_above(scores, true_scores), count_above(scores, true_scores, inclusive=True))

        seconds = repeated_seconds(ranking, repeats)
    batches = -(-num_queries // batch_size)
    return float(np.median(seconds)) * batches


def settle_remainder(model, factories, test, batch_size: int, floor: float, exact) -> str:
    """One ranking without the near-tie rescoring: its time against the floor, and the share
    of (side, rank type) ranks that then differ from the engine's table ``exact`` (PyKEEN's)."""
    from kgrank.engine import scoring

    near_ties = scoring.Scorer._near_ties
    scoring.Scorer._near_ties = lambda *args: None
    try:
        # the better of two, as the engine's own time
        (seconds, unsettled), (again, _) = (
            engine_ranks(model, factories, test, batch_size) for _ in range(2)
        )
        seconds = min(seconds, again)
    finally:
        scoring.Scorer._near_ties = near_ties
    changed = np.mean(
        [(exact[rank_type] != unsettled[rank_type]).mean() for rank_type in ("optimistic", "pessimistic")]
    )
    return (
        f"without the near-tie rescoring {seconds:.2f} s ({seconds / floor:.2f}x the floor), "
        f"and {changed:.3%} of its ranks then differ from PyKEEN's"
    )


def best_seconds(repeats: int, call) -> float:
    """The least of ``repeats`` timings of ``call``, after one untimed."""
    from training import repeated_seconds  # benchmarks/training.py

    return min(repeated_seconds(call, repeats))


def complex_tail_remainder(model, batch_size: int, repeats: int = 5) -> str:
    """ComplEx's tails: the engine's complex product against a real product of width 2d on
    the same block (what the floor times)."""
    from kgrank.engine.scoring import Scorer, real_view

    scorer = Scorer(model)
    entities, conjugates = scorer._entities
    generator = torch.Generator().manual_seed(0)
    query = torch.randn(batch_size, entities.shape[1], dtype=entities.dtype, generator=generator)

    with torch.inference_mode():
        complex_seconds = best_seconds(repeats, lambda: torch.real(query @ conjugates))
        real_seconds = best_seconds(repeats, lambda: real_view(query) @ real_view(entities).T)
    return (
        f"tails' complex product {1e3 * complex_seconds:.1f} ms a block against {1e3 * real_seconds:.1f} ms "
        "for the real product of width 2d (kept: PyKEEN's einsum runs as this complex product, and a real "
        "product's near-ties rescored through model.predict do not give its bits back)"
    )


def l2_norm_remainder(model, family: str, batch_size: int, repeats: int = 5) -> str:
    """The L2 distance's own passes (TransE by L2, RotatE): the engine's distance block
    (:func:`kgrank.engine.scoring._norm_scores`) against its matrix product alone, what
    the floor times, on random operands of the model's shapes."""
    from kgrank.engine.scoring import _norm_scores

    width = int(model.entity_representations[0].shape[0]) * (2 if family == "rotate" else 1)
    generator = torch.Generator().manual_seed(0)
    query = torch.randn(batch_size, width, generator=generator)
    entities = torch.randn(model.num_entities, width, generator=generator)

    with torch.inference_mode():
        distance_seconds = best_seconds(repeats, lambda: _norm_scores(query, entities, 2, False))
        product_seconds = best_seconds(repeats, lambda: query @ entities.T)
    return (
        f"the L2 distance {1e3 * distance_seconds:.1f} ms a block against {1e3 * product_seconds:.1f} ms for "
        "its product alone (kept: the norms, mul_, two add_, clamp_, sqrt_ and neg_ over the block in this "
        "order; one addmm would save two passes but rounds otherwise and swapped two near-equal RotatE "
        "candidates in the IR study's run lists)"
    )


def agreement(table, theirs: dict) -> tuple[float, float]:
    """Fraction of identical ranks over sides and rank types, largest |MRR| / |Hits@10| difference."""
    identical, total, largest = 0, 0, 0.0
    for (side, rank_type), reference in theirs.items():
        ours = table.loc[table["side"] == side, rank_type].to_numpy()
        identical += int((ours == reference).sum())
        total += len(reference)
        largest = max(
            largest,
            abs(np.mean(1 / ours) - np.mean(1 / reference)),
            abs(np.mean(ours <= 10) - np.mean(reference <= 10)),
        )
    return identical / total, largest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=["fb15k237", "wn18rr"])
    parser.add_argument(
        "--models", nargs="+", default=["transe", "transe-l2", "rotate", "complex", "tucker", "distmult"]
    )
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--triples", type=int, default=None, help="first N test triples (default: all)")
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--evaluator-threads", type=int, default=2)
    parser.add_argument("--skip-pykeen", action="store_true", help="kgrank against the floor only")
    parser.add_argument(
        "--explain-above",
        type=float,
        default=1.5,
        help="for each model above this kgrank / floor, print where one ranking's time goes",
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore")

    from training import op_breakdown  # benchmarks/training.py

    from kgrank.engine.scoring import Scorer

    print(
        f"{'dataset':<9} {'model':<9} {'scoring':<9} {'triples':>7} {'PyKEEN s':>9} {'kgrank s':>9} "
        f"{'ratio':>7} {'identical':>10} {'max |dmetric|':>14} {'kgrank 1 thread s':>18} "
        f"{'kgrank 2 threads s':>19} {'floor s':>8} {'kgrank / floor':>15}"
    )
    explained = []
    for dataset, model_name in [(dataset, name) for dataset in args.datasets for name in args.models]:
        model, factories = model_for(args.results, dataset, model_name)
        test = factories.testing.mapped_triples[: args.triples]
        torch.set_num_threads(args.evaluator_threads)
        # Untimed warm-up of both on a few triples (first-call allocations, thread pools).
        if not args.skip_pykeen:
            evaluator_ranks(model, factories, test[: args.batch_size], args.batch_size)
        engine_ranks(model, factories, test[: args.batch_size], args.batch_size)
        first_seconds, table = engine_ranks(model, factories, test, args.batch_size)
        by_threads = {}
        for threads in (1, 2):
            torch.set_num_threads(threads)
            by_threads[threads], _ = engine_ranks(model, factories, test, args.batch_size)
        torch.set_num_threads(args.evaluator_threads)
        ours_seconds = min(first_seconds, by_threads.get(args.evaluator_threads, first_seconds))
        pykeen, against_pykeen, identical, largest = "skipped", "skipped", "skipped", "skipped"
        if not args.skip_pykeen:
            pykeen_seconds, theirs = evaluator_ranks(model, factories, test, args.batch_size)
            share, difference = agreement(table, theirs)
            pykeen, against_pykeen = f"{pykeen_seconds:.1f}", f"{pykeen_seconds / ours_seconds:.1f}x"
            identical, largest = f"{share:.4%}", f"{difference:.1e}"
        family = Scorer(model).family
        floor = floor_seconds(model, family, 2 * len(test), args.batch_size) if family != "pykeen" else np.nan
        print(
            f"{dataset:<9} {model_name:<9} {family:<9} {len(test):>7} {pykeen:>9} "
            f"{ours_seconds:>9.2f} {against_pykeen:>7} "
            f"{identical:>10} {largest:>14} "
            f"{by_threads[1]:>18.2f} {by_threads[2]:>19.2f} "
            f"{floor:>8.2f} {ours_seconds / floor:>14.2f}x",
            flush=True,
        )
        if ours_seconds / floor > args.explain_above:
            where = op_breakdown(
                lambda model=model, factories=factories, test=test: engine_ranks(
                    model, factories, test, args.batch_size
                )
            )
            remainders = [settle_remainder(model, factories, test, args.batch_size, floor, table)]
            if family == "complex":
                remainders.append(complex_tail_remainder(model, args.batch_size))
            if family == "rotate" or (family == "transe" and model.interaction.p == 2):
                remainders.append(l2_norm_remainder(model, family, args.batch_size))
            explained.append(
                f"- {dataset} {model_name} ({ours_seconds / floor:.2f}x; floor {floor:.2f} s): {where}; "
                + "; ".join(remainders)
            )
    if explained:
        print(f"\nAbove {args.explain_above}x of the floor, one more ranking under torch's profiler:")
        print("\n".join(explained))


if __name__ == "__main__":
    main()
