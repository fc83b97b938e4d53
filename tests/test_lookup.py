"""Every name a user may give a metric: kgrank's keys, its short names, and PyKEEN's
names and synonyms, each resolving to the metric (and variant) PyKEEN means."""

from __future__ import annotations

import doctest

import pytest
from pykeen.metrics.ranking import rank_based_metric_resolver

import kgrank
import kgrank.api
import kgrank.evaluation.metrics
from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import lookup

# PyKEEN's class name (normalised by its resolver) -> kgrank's key, for k = 10.
PYKEEN_TO_KGRANK = {
    "adjustedarithmeticmeanrank": "adjusted_arithmetic_mean_rank",
    "adjustedarithmeticmeanrankindex": "adjusted_arithmetic_mean_rank_index",
    "adjustedgeometricmeanrankindex": "adjusted_geometric_mean_rank_index",
    "adjustedhitsatk": "adjusted_hits_at_10",
    "adjustedinverseharmonicmeanrank": "adjusted_inverse_harmonic_mean_rank",
    "arithmeticmeanrank": "arithmetic_mean_rank",
    "count": "count",
    "geometricmeanrank": "geometric_mean_rank",
    "harmonicmeanrank": "harmonic_mean_rank",
    "hitsatk": "hits_at_10",
    "inversearithmeticmeanrank": "inverse_arithmetic_mean_rank",
    "inversegeometricmeanrank": "inverse_geometric_mean_rank",
    "inverseharmonicmeanrank": "inverse_harmonic_mean_rank",
    "inversemedianrank": "inverse_median_rank",
    "medianabsolutedeviation": "median_absolute_deviation",
    "medianrank": "median_rank",
    "standarddeviation": "standard_deviation",
    "variance": "variance",
    "zarithmeticmeanrank": "z_arithmetic_mean_rank",
    "zgeometricmeanrank": "z_geometric_mean_rank",
    "zhitsatk": "z_hits_at_10",
    "zinverseharmonicmeanrank": "z_inverse_harmonic_mean_rank",
}
# PyKEEN synonyms that name hits without a k, or spell it in a way no user types.
UNRESOLVED_PYKEEN_SYNONYMS = {"ahk", "zahk"}


def _with_k(name: str) -> str:
    """PyKEEN writes Hits@k's names with a literal k or an open prefix; give k = 10."""
    if name.endswith("@k") or name.endswith("_at_k"):
        return name[:-1] + "10"
    if name.endswith("atk"):
        return name[:-1] + "10"
    if name.endswith(("@", "_at_")):
        return name + "10"
    return name


def test_every_pykeen_metric_and_synonym_resolves_as_pykeen_means_it():
    assert set(rank_based_metric_resolver.lookup_dict) == set(PYKEEN_TO_KGRANK)
    checked = 0
    for name, cls in rank_based_metric_resolver.lookup_dict.items():
        for synonym in (name, *getattr(cls, "synonyms", ())):
            if synonym in UNRESOLVED_PYKEEN_SYNONYMS:
                continue
            assert lookup(_with_k(synonym)).key == PYKEEN_TO_KGRANK[name], synonym
            checked += 1
    assert checked > 60


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("amrr", "adjusted_inverse_harmonic_mean_rank"),
        ("AMRI", "adjusted_arithmetic_mean_rank_index"),
        ("amr", "adjusted_arithmetic_mean_rank"),
        ("z_mrr", "z_inverse_harmonic_mean_rank"),
        ("ZMRR", "z_inverse_harmonic_mean_rank"),
        ("hits@7", "hits_at_7"),
        ("ah@7", "adjusted_hits_at_7"),
        ("zh@3", "z_hits_at_3"),
        ("agmri", "adjusted_geometric_mean_rank_index"),
        ("expectation_normalized_mrr", "expectation_normalized_inverse_harmonic_mean_rank"),
    ],
)
def test_short_names(name, key):
    assert kgrank.lookup(name).key == key


def test_every_registered_key_resolves_to_itself():
    for metric in kgrank.evaluation.metrics.default_metrics():
        assert lookup(metric.key).key == metric.key
        if metric.has_derived:
            for variant in kgrank.evaluation.metrics.Variant:
                assert lookup(metric.variant_key(variant)).variant is variant


def test_an_unknown_name_is_one_line_with_suggestions():
    with pytest.raises(KgrankInputError, match=r"unknown metric 'amrrr'; did you mean amrr") as error:
        lookup("amrrr")
    assert "\n" not in str(error.value)
    with pytest.raises(KgrankInputError):
        lookup("median_rank_index")


def test_the_public_api_is_listed_and_its_examples_run():
    assert set(kgrank.__all__) <= set(dir(kgrank))
    for name in kgrank.__all__:
        assert callable(getattr(kgrank, name))
    for module in (kgrank.api, kgrank.evaluation.metrics):
        result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
        assert result.failed == 0 and result.attempted > 0, module.__name__


# the abbreviations of Berrendorf et al. (2020), Hoyt et al. (2022) and Tiwari et al.
# (2021), as the studies print them
SHORT_NAMES = {
    "arithmetic_mean_rank": "MR",
    "adjusted_arithmetic_mean_rank": "AMR",
    "adjusted_arithmetic_mean_rank_index": "AMRI",
    "z_arithmetic_mean_rank": "z-MR",
    "adjusted_inverse_harmonic_mean_rank": "AMRR",
    "z_inverse_harmonic_mean_rank": "z-MRR",
    "adjusted_hits_at_10": "AH@10",
    "z_hits_at_1": "z-H@1",
    "adjusted_geometric_mean_rank_index": "AGMRI",
    "adjusted_weighted_geometric_mean_rank_index": "AWGMRI",
    "adjusted_inverse_weighted_geometric_mean_rank": "AIWGMR",
    "expectation_normalized_inverse_harmonic_mean_rank": "MRR/E",
    "adjusted_mean_inverse_rank_power_1_2": "adjusted mean r^-1/2",
}


@pytest.mark.parametrize(("key", "short_name"), SHORT_NAMES.items())
def test_every_variant_prints_its_short_name_from_the_registry(key, short_name):
    assert lookup(key).short_name == short_name


def test_short_names_are_distinct_and_the_abbreviations_resolve_back():
    metrics = [*kgrank.evaluation.metrics.default_metrics(), *kgrank.evaluation.metrics.WEIGHTED_METRICS]
    names = [
        kgrank.evaluation.metrics.MetricKey(metric, variant)
        for metric in metrics
        for variant in (None, *(kgrank.evaluation.metrics.Variant if metric.has_derived else ()))
    ]
    shorts = [name.short_name for name in names]
    assert len(set(shorts)) == len(shorts)
    abbreviated = {"MR", "MRR", "GMR", "IGMR", "WGMR", "IWGMR"}
    for name in names:
        hits = "k" in name.metric.parameters
        # "MRR/E" is printed, not a name PyKEEN or a paper uses for a metric
        written = (
            name.variant is not kgrank.evaluation.metrics.Variant.NORMALISED or not name.metric.increasing
        )
        if (name.metric.label in abbreviated or hits) and written:
            assert lookup(name.short_name).key == name.key, name.short_name


def test_the_package_and_the_registry_share_one_resolver():
    assert kgrank.lookup is kgrank.evaluation.metrics.lookup
    assert kgrank.evaluation.metrics.lookup("amrr").key == "adjusted_inverse_harmonic_mean_rank"


# --- ir-measures' names: one relevant answer per task, as the filtered setting has --------


@pytest.mark.parametrize(
    ("name", "key"),
    [
        ("RR", "inverse_harmonic_mean_rank"),
        ("RR@10", "reciprocal_rank_at_10"),
        ("MRR@5", "reciprocal_rank_at_5"),
        ("P@3", "precision_at_3"),
        ("nDCG@10", "ndcg_at_10"),
        ("nDCG", "mean_log_discount"),
        ("aRR@10", "adjusted_reciprocal_rank_at_10"),
        ("z_nDCG@20", "z_ndcg_at_20"),
    ],
)
def test_ir_measures_names_resolve(name, key):
    assert lookup(name).key == key


def test_ir_measures_values_and_random_moments_are_trec_evals_and_exact():
    """RR@k, P@k and nDCG@k of kgrank equal trec_eval's (through ir-measures) on runs with
    one relevant document per query, the ranks of the rank table; their moments under
    uniform ranks equal the mean and variance over every rank, by enumeration."""
    import ir_measures
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(5)
    num_candidates = rng.integers(2, 30, size=60)
    ranks = np.array([rng.integers(1, n + 1) for n in num_candidates])
    runs, qrels = [], []
    for query, (rank, count) in enumerate(zip(ranks, num_candidates, strict=True)):
        # the relevant document at `rank`, every score distinct
        documents = [f"d{position}" for position in range(1, count + 1)]
        runs.append(
            pd.DataFrame({"query_id": f"q{query}", "doc_id": documents, "score": -np.arange(1.0, count + 1)})
        )
        qrels.append(pd.DataFrame({"query_id": [f"q{query}"], "doc_id": [f"d{rank}"], "relevance": [1]}))
    run, qrel = pd.concat(runs), pd.concat(qrels)
    for name, measure in (
        ("RR@10", ir_measures.RR @ 10),
        ("P@3", ir_measures.P @ 3),
        ("nDCG@10", ir_measures.nDCG @ 10),
    ):
        per_query = {row.query_id: row.value for row in ir_measures.iter_calc([measure], qrel, run)}
        metric = lookup(name).metric
        ours = metric.transform.function(ranks.astype(float))
        theirs = np.array([per_query.get(f"q{query}", 0.0) for query in range(len(ranks))])
        assert ours == pytest.approx(theirs, abs=1e-12), name
        moments = metric.moments(num_candidates)
        values = [metric.transform.function(np.arange(1.0, n + 1)) for n in num_candidates]
        assert moments.expectation == pytest.approx(np.mean([v.mean() for v in values]), rel=1e-12)
        variance = sum(v.var() for v in values) / len(values) ** 2
        assert moments.variance == pytest.approx(variance, rel=1e-10), name
    # P@k is Hits@k / k: its optimum is 1/k, so its adjusted index is Hits@k's
    table = kgrank.evaluate(ranks, num_candidates, metrics=["ap@3", "ah@3"], confidence=None)
    assert table["value"].iloc[0] == pytest.approx(table["value"].iloc[1], rel=1e-12)
