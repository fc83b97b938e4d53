"""Speed of kgrank's metric engine against PyKEEN 1.11.1 on a rank table of FB15k-237's size.

Prints ratios against a baseline run in the same process (never asserted in tests):

1. every metric variant (all metrics x 4 rank types x 3 sides, with moments, adjusted
   and z values) for 20,438 test triples x 2 sides with 14,505 candidates each;
2. kgrank's moments against PyKEEN's ``expected_value`` / ``variance`` at equal accuracy:
   where kgrank samples, PyKEEN gets the same number of samples; where kgrank is exact
   and PyKEEN has no closed form, PyKEEN gets 10,000 samples (less accurate still);
3. the Monte Carlo check of every metric with R replicates.

    python benchmarks/metrics.py [--triples 20438] [--candidates 14505] [--replicates 10000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd


def rank_table(triples: int, candidates: int, seed: int = 0) -> pd.DataFrame:
    generator = np.random.default_rng(seed)
    rows = 2 * triples
    # a trained model's ranks: mostly small, heavy-tailed, with ties
    optimistic = np.minimum(np.ceil(generator.pareto(0.7, rows)).astype(int) + 1, candidates)
    ties = generator.integers(0, 3, rows)
    pessimistic = np.minimum(optimistic + ties, candidates)
    return pd.DataFrame(
        {
            "side": np.repeat(["head", "tail"], triples),
            "optimistic": optimistic,
            "pessimistic": pessimistic,
            "realistic": (optimistic + pessimistic) / 2,
            "random": optimistic,
            "num_candidates": candidates,
        }
    )


def pykeen_metric(metric):
    """PyKEEN's implementation of a kgrank metric, or None where PyKEEN has none."""
    from pykeen.metrics import rank_based_metric_resolver

    try:
        if "k" in metric.parameters:
            return rank_based_metric_resolver.make("hits_at_k", k=int(metric.parameters["k"]))
        return rank_based_metric_resolver.make(metric.key)
    except (KeyError, ValueError):
        return None


def timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--triples", type=int, default=20_438)
    parser.add_argument("--candidates", type=int, default=14_505)
    parser.add_argument("--replicates", type=int, default=10_000)
    args = parser.parse_args()

    from kgrank.evaluation.metrics import default_metrics, evaluate_rank_table, moments_of
    from kgrank.evaluation.moments import SAMPLING_REPLICATES
    from kgrank.studies.moments.montecarlo import check_moments

    table = rank_table(args.triples, args.candidates)
    metrics = default_metrics()
    seconds, result = timed(evaluate_rank_table, table, metrics)
    print(
        f"every variant: {len(result)} values in {seconds:.2f} s "
        f"({len(metrics)} metrics x 4 rank types x 3 sides, n = {len(table)}, N = {args.candidates})"
    )

    num_candidates = table["num_candidates"].to_numpy()
    ours_seconds, ours = timed(moments_of, metrics, num_candidates)
    theirs_seconds = 0.0
    compared = []
    for metric in metrics:
        theirs = pykeen_metric(metric)
        if theirs is None:
            continue
        # Equal accuracy: where kgrank samples, PyKEEN gets the same number of samples;
        # where kgrank is exact and PyKEEN has no closed form, PyKEEN gets 10,000 samples
        # (still less accurate than kgrank); PyKEEN's closed forms ignore num_samples.
        method = ours[metric.key].method
        samples = SAMPLING_REPLICATES if method.startswith("sampling") else 10_000
        start = time.perf_counter()
        expectation = theirs.expected_value(num_candidates, num_samples=samples)
        variance = theirs.variance(num_candidates, num_samples=samples)
        theirs_seconds += time.perf_counter() - start
        pykeen_method = "closed form" if theirs.closed_expectation else f"num_samples={samples}"
        compared.append((metric.key, method, pykeen_method, ours[metric.key], expectation, variance))
    print(
        f"moments: kgrank {ours_seconds:.2f} s for all {len(metrics)} metrics; "
        f"PyKEEN {theirs_seconds:.2f} s for the {len(compared)} it has, at equal or lower accuracy; "
        f"ratio {theirs_seconds / ours_seconds:.1f}x"
    )
    for key, method, pykeen_method, moments, expectation, variance in compared:
        print(
            f"  {key:30s} kgrank [{method}] E {moments.expectation:.6g} Var {moments.variance:.4g}"
            f" | PyKEEN [{pykeen_method}] E {expectation:.6g} Var {variance:.4g}"
        )

    check_seconds, check = timed(check_moments, num_candidates, metrics, replicates=args.replicates, seed=1)
    print(
        f"Monte Carlo check, R = {args.replicates}, n = {len(num_candidates)}: {check_seconds:.1f} s, "
        f"{int(check['passed'].sum())}/{len(check)} passed"
    )


if __name__ == "__main__":
    main()
