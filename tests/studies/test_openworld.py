"""The open-world study: the simulator on cases with a known answer and against a
brute-force permutation, the closed form, inconsistency and saturation on constructed
inputs, and the family-tree evaluation on a hand-made query."""

import itertools
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import hits_at, lookup, macro_mean_moments
from kgrank.studies.openworld.consistency import (
    inversion_counts,
    inversion_table,
    local_slope,
    pair_strengths,
    queries_needed,
    saturation_table,
)
from kgrank.studies.openworld.familytree import (
    FamilyTree,
    filtered_ranks,
    macro_rows,
    read_family_tree,
    training_factory,
)
from kgrank.studies.openworld.simulation import (
    MRR_KEY,
    OpenWorld,
    approximate_mrr,
    learning_probabilities,
    others_above,
    simulate_grid,
    simulate_queries,
    strength_grid,
    study_metrics,
)

MRR = lookup(MRR_KEY).metric
FAMILY_TREE = Path(__file__).resolve().parents[3] / "shared" / "data" / "family-tree"


def _simulate(world, strength, density, count, seed=0, correlation=0.0):
    s_test, s_missing, _ = learning_probabilities(np.full(count, strength), density, correlation)
    return simulate_queries(np.random.default_rng(seed), world, s_test, s_missing, density)


def test_perfect_model_on_a_complete_test_set_has_mrr_one():
    simulated = _simulate(OpenWorld(num_entities=200, num_answers=7), 1.0, 1.0, 300)
    assert (simulated.num_test == 7).all()
    np.testing.assert_array_equal(simulated.query_values(MRR), 1.0)
    # with missing answers a perfect model ranks them among its test answers: never below
    # 1 + the number of missing answers, never above
    simulated = _simulate(OpenWorld(num_entities=200, num_answers=7), 1.0, 0.5, 300)
    missing = 7 - simulated.num_test
    present = simulated.num_test > 0
    assert (np.nanmax(simulated.ranks[present], axis=1) <= 1 + missing[present]).all()
    assert (simulated.query_values(MRR)[missing > 0] < 1).mean() > 0.5


def test_a_model_that_learned_nothing_ranks_uniformly_among_the_non_test_entities():
    world = OpenWorld(num_entities=40, num_answers=6)
    simulated = _simulate(world, 0.0, 0.5, 40_000, seed=3)
    ranks = simulated.ranks[~np.isnan(simulated.ranks)]
    candidates = np.repeat(simulated.num_candidates, simulated.num_test)
    assert ranks.min() == 1 and (ranks <= candidates).all()
    # the uniform random expectation and variance of the macro MRR, from the registry
    valid = simulated.num_test > 0
    query_index = np.repeat(np.arange(valid.sum()), simulated.num_test[valid])
    moments = macro_mean_moments(
        MRR, np.repeat(simulated.num_candidates[valid], simulated.num_test[valid]), query_index
    )
    values = simulated.query_values(MRR)[valid]
    assert abs(values.mean() - moments.expectation) < 4 * math.sqrt(moments.variance)
    # and rank / candidates is uniform: its mean is (N + 1) / (2 N) per answer
    assert abs(np.mean(ranks / candidates) - np.mean((candidates + 1) / (2 * candidates))) < 0.005


def test_others_above_matches_the_exact_distribution_of_a_random_order():
    # 2 special items among 3 others: the 10 position sets are equally likely
    exact = Counter()
    for positions in itertools.combinations(range(5), 2):
        exact[tuple(position - index for index, position in enumerate(positions))] += 1
    draws = 40_000
    counts = others_above(np.random.default_rng(1), np.full(draws, 2), np.full(draws, 3), width=4)
    observed = Counter(map(tuple, counts[:, :2]))
    assert set(observed) == set(exact)
    for outcome, ways in exact.items():
        assert observed[outcome] / draws == pytest.approx(ways / 10, abs=0.01)


def _brute_force_ranks(rng, world, s_test, s_missing, num_test):
    """The test answers' ranks of one query, sorted, by an explicit permutation of all
    entities (slow, obviously right)."""
    answers = world.num_answers
    is_test = np.zeros(world.num_entities, bool)
    is_test[:num_test] = True
    learned = np.zeros(world.num_entities, bool)
    learned[:num_test] = rng.random(num_test) < s_test
    learned[num_test:answers] = rng.random(answers - num_test) < s_missing
    order = np.concatenate(
        [rng.permutation(np.flatnonzero(learned)), rng.permutation(np.flatnonzero(~learned))]
    )
    non_test_above = np.cumsum(~is_test[order]) - ~is_test[order]
    return np.sort(1 + non_test_above[is_test[order]])


def test_vectorised_simulator_agrees_with_a_brute_force_permutation():
    """The joint law of the sorted ranks, not only the mean: every (num_test, sorted ranks)
    outcome has the same frequency in both, within sampling error."""
    world = OpenWorld(num_entities=8, num_answers=4)
    rng = np.random.default_rng(5)
    s_test, s_missing, _ = learning_probabilities(0.6, 0.5, 0.2)
    count = 40_000
    num_test = rng.binomial(4, 0.5, size=count)
    num_test = num_test[num_test > 0]
    brute = Counter((n, *_brute_force_ranks(rng, world, s_test, s_missing, n).astype(int)) for n in num_test)
    fast_ranks = simulate_queries(
        rng, world, np.full(len(num_test), s_test), np.full(len(num_test), s_missing), 0.5, num_test=num_test
    ).ranks
    fast = Counter((n, *np.sort(row[:n]).astype(int)) for n, row in zip(num_test, fast_ranks, strict=True))
    assert set(fast) <= set(brute) | {key for key, seen in fast.items() if seen < 5}
    for outcome in set(brute) | set(fast):
        expected = brute[outcome] / len(num_test)
        error = 4 * math.sqrt(max(expected, 1 / len(num_test)) / len(num_test)) + 1e-3
        assert abs(fast[outcome] / len(num_test) - expected) < error, outcome


def test_learning_probabilities_keep_the_overall_strength_and_give_correlation_rho():
    strength, density, rho = 0.6, 0.65, 0.2
    s_test, s_missing, clipped = learning_probabilities(strength, density, rho)
    assert not clipped
    assert density * s_test + (1 - density) * s_missing == pytest.approx(strength)
    # Corr(learned, missing) of two Bernoulli variables
    covariance = (1 - density) * s_missing - strength * (1 - density)
    assert covariance / math.sqrt(strength * (1 - strength) * density * (1 - density)) == pytest.approx(rho)
    _, high, clipped = learning_probabilities(0.95, 0.8, 0.2)
    assert clipped and high == 1.0


def test_closed_form_is_close_to_the_simulation_where_the_paper_uses_it():
    world = OpenWorld()
    simulated = _simulate(world, 0.8, 0.5, 4_000, seed=11).query_values(MRR)
    assert approximate_mrr(0.8, 0.5, world.num_answers) == pytest.approx(simulated.mean(), rel=0.08)


def test_grid_is_seeded_and_reports_the_derived_variants():
    world = OpenWorld(num_entities=300, num_answers=8)
    arguments = (world, [0.5], strength_grid(0.3, 1.0, 0.35), [0.0, 0.1], 50, [MRR, hits_at(3)], 9)
    first = simulate_grid(*arguments, progress=False)
    pd.testing.assert_frame_equal(first, simulate_grid(*arguments, progress=False))
    assert list(np.unique(first["strength"])) == [0.3, 0.65, 1.0]
    assert set(first["variant"]) == {"value", "adjusted index", "z-score"}
    mrr = first[first["metric"] == MRR_KEY]
    assert mrr["approximation_used"].notna().all() and mrr["within_3se"].isin([True, False]).all()
    index = first[first["metric"] == f"adjusted_{MRR_KEY}"].set_index(["correlation", "strength"])["mean"]
    value = mrr.set_index(["correlation", "strength"])
    expected = (value["mean"] - value["random_expectation"]) / (1 - value["random_expectation"])
    pd.testing.assert_series_equal(index, expected, check_names=False)


def test_strength_grid_and_pairs():
    assert (
        list(strength_grid(0.3, 1.0, 0.01))[:3] == [0.3, 0.31, 0.32]
        and len(strength_grid(0.3, 1.0, 0.01)) == 71
    )
    assert pair_strengths([0.8], [0.1, 0.3]) == [(0.8, 0.9)]
    with pytest.raises(KgrankInputError, match="no pair"):
        pair_strengths([0.9], [0.2])


def test_inversions_shrink_with_the_gap_and_the_number_of_queries():
    world = OpenWorld(num_entities=500, num_answers=10)
    table = inversion_table(
        world,
        [0.5],
        [(0.3, 0.31), (0.2, 1.0)],
        [1, 50, 400],
        [MRR],
        replicates=300,
        seed=2,
        progress=False,
    )
    value = table[table["variant"] == "value"].set_index(["gap", "queries"])
    # two models 0.01 apart: close to a coin flip on one query, and they rarely tie
    assert 0.3 < value.loc[(0.01, 1), "inversion_probability"] < 0.6
    assert value.loc[(0.01, 1), "tie_probability"] < 0.5
    # far apart: rarely on one query, never on 400
    assert value.loc[(0.8, 1), "inversion_probability"] < 0.2
    assert value.loc[(0.8, 400), "inversion_probability"] == 0.0
    # the normal approximation from the simulated differences agrees where the CLT holds
    assert value.loc[(0.8, 50), "normal_approximation"] < 0.01
    # on one test set the adjusted index and z-score order two models as the metric does
    for variant in ("adjusted index", "z-score"):
        other = table[table["variant"] == variant].set_index(["gap", "queries"])["inversion_probability"]
        pd.testing.assert_series_equal(other, value["inversion_probability"])
    needed = queries_needed(table)
    needed = needed[needed["variant"] == "value"].set_index("gap")
    assert needed.loc[0.8, "queries_simulated"] == 50 and needed.loc[0.8, "resolved"]
    assert (
        needed.loc[0.8, "queries_normal_low"]
        <= needed.loc[0.8, "queries_normal"]
        <= needed.loc[0.8, "queries_normal_high"]
    )
    close = needed.loc[0.01]
    if not close["resolved"]:  # no query count is claimed that the simulation cannot back
        assert np.isnan(close["queries_normal"]) and np.isinf(close["queries_normal_high"])
    with pytest.raises(KgrankInputError, match="every pair needs s1 > s2"):
        inversion_table(world, [0.5], [(0.4, 0.4)], [1], [MRR], replicates=20, seed=1, progress=False)


def test_local_slope_and_saturation_of_an_exact_logarithm():
    strengths = np.round(np.arange(0.3, 1.0001, 0.01), 2)
    assert local_slope(strengths, 2 * strengths + 1, 0.5, 0.05)[0] == pytest.approx(2)
    grid = pd.DataFrame(
        {
            "metric": MRR_KEY,
            "label": "MRR",
            "variant": "value",
            "density": 0.5,
            "correlation": 0.0,
            "strength": strengths,
            "mean": np.log(strengths),
            "standard_error": 0.0,
        }
    )
    inversions = pd.DataFrame(
        {"metric": [MRR_KEY], "density": [0.5], "queries": [100], "inversion_probability": [0.25]}
    )
    table = saturation_table(grid, inversions, low=0.4, high=0.9, half_width=0.05, comparison_queries=100)
    simulated = table[table["metric"] == MRR_KEY].iloc[0]
    # a least-squares slope over +-0.05 of a logarithm is within 0.5 % of 1/s
    assert simulated["slope_ratio"] == pytest.approx(0.4 / 0.9, rel=5e-3)
    assert simulated["inversion_probability"] == 0.25
    flat = saturation_table(
        grid.assign(mean=0.1),
        inversions,
        low=0.4,
        high=0.9,
        half_width=0.05,
        comparison_queries=100,
    )
    flat = flat[flat["metric"] == MRR_KEY].iloc[0]
    assert not flat["responds_at_low"] and np.isnan(flat["slope_ratio"])
    with pytest.raises(KgrankInputError, match="no inversions simulated at 10 queries"):
        saturation_table(grid, inversions, low=0.4, high=0.9, half_width=0.05, comparison_queries=10)


# --- the family tree -------------------------------------------------------------------


def _hand_made_tree() -> FamilyTree:
    # one query (0, r0, ?): training answers 1, 2; test answers 3 (sparse), 4, 5 (sparse)
    train = np.array([[0, 0, 1], [0, 0, 2], [1, 0, 3], [4, 0, 5]])
    answers = pd.DataFrame(
        {"head": [0, 0, 0], "relation": [0, 0, 0], "tail": [3, 4, 5], "in_sparse_test": [1, 0, 1], "query": 0}
    )
    return FamilyTree(train=train, answers=answers, num_entities=7, num_relations=1)


def test_sparse_and_full_filtering_on_a_hand_made_query():
    from pykeen.models import TransE

    tree = _hand_made_tree()
    model = TransE(triples_factory=training_factory(tree), embedding_dim=4, random_seed=1)
    with torch.no_grad():
        scores = model.score_t(torch.tensor([[0, 0]])).numpy()[0]
    for which, filtered in (("sparse", {1, 2, 3, 5}), ("full", {1, 2, 3, 4, 5})):
        ranks = filtered_ranks(model, tree, which).set_index("tail")
        answers = [3, 5] if which == "sparse" else [3, 4, 5]
        assert list(ranks.index) == answers
        for answer in answers:
            candidates = [entity for entity in range(7) if entity not in filtered or entity == answer]
            others = np.array([scores[entity] for entity in candidates if entity != answer])
            optimistic = 1 + (others > scores[answer]).sum()
            pessimistic = 1 + (others >= scores[answer]).sum()
            assert ranks.loc[answer, "num_candidates"] == len(candidates)
            assert ranks.loc[answer, "realistic"] == (optimistic + pessimistic) / 2
    # sparse: 7 entities - training answers 1, 2 - the other sparse answer = 4 candidates
    assert set(filtered_ranks(model, tree, "sparse")["num_candidates"]) == {4}
    assert set(filtered_ranks(model, tree, "full")["num_candidates"]) == {3}


def test_macro_rows_average_queries_not_answers():
    ranks = pd.DataFrame({"query": [0, 0, 0, 1], "realistic": [1.0, 2.0, 4.0, 1.0], "num_candidates": 10})
    rows = {row["metric"]: row["value"] for row in macro_rows(ranks, [MRR])}
    assert rows[MRR_KEY] == pytest.approx(((1 + 0.5 + 0.25) / 3 + 1) / 2)
    moments = macro_mean_moments(MRR, np.full(4, 10), ranks["query"].to_numpy())
    assert rows[f"adjusted_{MRR_KEY}"] == pytest.approx(
        (rows[MRR_KEY] - moments.expectation) / (1 - moments.expectation)
    )


def test_inversion_counts_on_constructed_checkpoints():
    # full order a < b < c; sparse order b < a < c: one pair of three inverted
    values = {"a": (0.1, 0.2), "b": (0.2, 0.1), "c": (0.3, 0.3)}
    rows = [
        {
            "graph": "independent",
            "density": 65,
            "metric": MRR_KEY,
            "label": "MRR",
            "variant": "value",
            "configuration": name,
            "epoch": 1,
            "evaluation": which,
            "value": pair[position],
        }
        for name, pair in values.items()
        for position, which in enumerate(("full", "sparse"))
    ]
    counts = inversion_counts(pd.DataFrame(rows)).iloc[0]
    assert (counts["checkpoints"], counts["pairs"], counts["inverted"], counts["tied"]) == (3, 3, 1, 0)
    assert counts["kendall_tau"] == pytest.approx(1 / 3)


def test_graph_variants_must_share_training_triples(tmp_path):
    from kgrank.studies.openworld.familytree import read_graphs

    for graph, train in (("independent", "0\t0\t1\n"), ("correlated", "0\t0\t2\n")):
        (tmp_path / graph).mkdir()
        (tmp_path / graph / "train.tsv").write_text(train)
        (tmp_path / graph / "test_answers.tsv").write_text(
            "head\trelation\ttail\tin_sparse_test\n0\t0\t3\t1\n"
        )
    folders = {graph: tmp_path / graph for graph in ("independent", "correlated")}
    with pytest.raises(
        KgrankInputError, match="correlated: its train.tsv or its queries and full answers differ"
    ):
        read_graphs(folders)
    assert set(read_graphs({"independent": folders["independent"]})) == {"independent"}


def test_malformed_family_tree_file_names_file_and_line(tmp_path):
    (tmp_path / "train.tsv").write_text("0\t0\t1\n0\tx\t2\n")
    (tmp_path / "test_answers.tsv").write_text("head\trelation\ttail\tin_sparse_test\n0\t0\t3\t1\n")
    with pytest.raises(KgrankInputError, match=r"train.tsv:2: .* not a row of non-negative integer ids"):
        read_family_tree(tmp_path)
    (tmp_path / "train.tsv").write_text("0\t0\t1\n")
    (tmp_path / "test_answers.tsv").write_text("head\trelation\ttail\tin_sparse_test\n0\t0\t3\t0\n")
    with pytest.raises(KgrankInputError, match="1 queries have no sparse test answer"):
        read_family_tree(tmp_path)


ANSWERS_HEADER = "head\trelation\ttail\tin_sparse_test\n"
# a small graph of 6 entities and 2 relations; query (0, 0, ?) with answers 3 (sparse) and 4
GOOD_TRAIN = "0\t0\t1\n1\t1\t2\n2\t0\t5\n"
GOOD_ANSWERS = ANSWERS_HEADER + "0\t0\t3\t1\n0\t0\t4\t0\n"


@pytest.mark.parametrize(
    ("train", "answers", "message"),
    [
        # an id beyond the graph: 6 entities, so 60000 would make a table of 60,001 rows
        (
            GOOD_TRAIN + "60000\t0\t1\n",
            GOOD_ANSWERS,
            r"train.tsv:4: entity id 60000 lies beyond the graph's 7 ",
        ),
        (GOOD_TRAIN, GOOD_ANSWERS + "0\t0\t9999999999\t1\n", r"test_answers.tsv:4: entity id 9999999999 "),
        (GOOD_TRAIN + "0\t40\t1\n", GOOD_ANSWERS, r"train.tsv:4: relation id 40 lies beyond the graph's 3 "),
        # more digits than an int64 holds
        (GOOD_TRAIN + "0\t0\t" + "9" * 30 + "\n", GOOD_ANSWERS, r"train.tsv:4: .*\(at most 18 digits\)"),
        ("", GOOD_ANSWERS, r"train.tsv: empty; it needs one line per training triple"),
        (GOOD_TRAIN, "", r"test_answers.tsv: empty; it needs its header and one line per answer"),
        (GOOD_TRAIN, ANSWERS_HEADER, r"test_answers.tsv: no line after the header"),
        ("0\t0\t1\t7\n", GOOD_ANSWERS, r"train.tsv:1: 4 tab-separated field\(s\), expected 3"),
        (GOOD_TRAIN + "1\t0\t2\t7\n", GOOD_ANSWERS, r"train.tsv:4: 4 tab-separated field\(s\), expected 3"),
        (GOOD_TRAIN + "\n", GOOD_ANSWERS, r"train.tsv:4: 1 tab-separated field\(s\), expected 3"),
        (
            GOOD_TRAIN,
            GOOD_ANSWERS + "0\t0\t5\n",
            r"test_answers.tsv:4: 3 tab-separated field\(s\), expected 4",
        ),
        (GOOD_TRAIN, GOOD_ANSWERS + "0\t0\t5\t2\n", r"test_answers.tsv:4: in_sparse_test 2; it must be 0"),
        (GOOD_TRAIN, "h\tr\tt\ts\n0\t0\t3\t1\n", r"test_answers.tsv:1: header 'h\\tr\\tt\\ts'"),
    ],
    ids=[
        "id-60000",
        "id-10-digits",
        "relation-id",
        "id-30-digits",
        "empty-train",
        "empty-answers",
        "header-only",
        "4-fields-first-line",
        "4-fields",
        "blank-line",
        "3-field-answer",
        "in-sparse-test-2",
        "bad-header",
    ],
)
def test_bad_family_tree_data_stops_with_file_and_line(tmp_path, train, answers, message):
    import tracemalloc

    (tmp_path / "train.tsv").write_text(train)
    (tmp_path / "test_answers.tsv").write_text(answers)
    tracemalloc.start()
    try:
        with pytest.raises(KgrankInputError, match=message) as caught:
            read_family_tree(tmp_path)
        # nothing is sized by a stray id: the reading stays small
        assert tracemalloc.get_traced_memory()[1] < 20 * 2**20
    finally:
        tracemalloc.stop()
    assert "\n" not in str(caught.value)


def test_family_tree_ids_may_leave_a_few_entities_out(tmp_path):
    # the graph's 6 entities with 4 and 5 absent from training (as a density can drop people):
    # the ids still size the table, 0..5
    (tmp_path / "train.tsv").write_text(GOOD_TRAIN.replace("2\t0\t5", "2\t0\t3"))
    (tmp_path / "test_answers.tsv").write_text(GOOD_ANSWERS + "0\t0\t5\t0\n")
    tree = read_family_tree(tmp_path)
    assert (tree.num_entities, tree.num_relations) == (6, 2)
    # CRLF line ends read the same
    for name in ("train.tsv", "test_answers.tsv"):
        (tmp_path / name).write_bytes((tmp_path / name).read_bytes().replace(b"\n", b"\r\n"))
    again = read_family_tree(tmp_path)
    assert np.array_equal(again.train, tree.train) and again.answers.equals(tree.answers)


@pytest.mark.skipif(
    not FAMILY_TREE.is_dir(), reason="the shared family-tree data is not beside the repository"
)
def test_the_shared_family_tree_reads_as_documented():
    tree = read_family_tree(FAMILY_TREE / "independent" / "density-65")
    assert (tree.num_entities, tree.num_relations) == (6004, 23)
    assert tree.answers["query"].nunique() == 500
    assert len(tree.answer_set("sparse")) < len(tree.answer_set("full")) == len(tree.answers)


def test_study_metrics_are_macro_averageable():
    for metric in study_metrics():
        macro_mean_moments(metric, np.array([5, 5]), np.array([0, 1]))


def test_the_rule_file_reads_its_settings_without_torch():
    """Every Snakemake call parses the rule file: it must not load torch or PyKEEN."""
    import subprocess
    import sys

    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, kgrank.studies.openworld.settings; "
            "print(sorted(name for name in sys.modules if name.split('.')[0] in "
            "{'torch', 'pykeen', 'pandas', 'scipy', 'matplotlib', 'numpy'}))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert loaded.stdout.strip() == "[]"


def test_family_tree_settings_caption_and_check():
    from kgrank.studies.openworld.settings import check_family_tree_settings, family_tree_caption

    settings = {
        "enabled": True,
        "graphs": ["independent"],
        "densities": [0.65],
        "evaluate_every": 2,
        "configurations": {
            "transe-d8": {
                "model": "transe",
                "model_kwargs": {"embedding_dim": 8},
                "optimizer": "adam",
                "optimizer_kwargs": {"lr": 0.1},
                "loss": "crossentropy",
                "training_loop": "lcwa",
                "training_kwargs": {"num_epochs": 3, "batch_size": 64},
            }
        },
    }
    caption = family_tree_caption("laptop", settings)
    assert "transe-d8 (transe, dim 8, lr 0.1, crossentropy, lcwa, 3 epochs)" in caption
    assert "densities 65 %" in caption
    check_family_tree_settings(settings)
    with pytest.raises(KgrankInputError, match="configurations: empty"):
        check_family_tree_settings({**settings, "configurations": {}})


def test_family_tree_folders_are_checked_before_any_job(tmp_path):
    from kgrank.studies.openworld.settings import check_family_tree_folders

    folder = tmp_path / "independent" / "density-65"
    folder.mkdir(parents=True)
    settings = {"enabled": True, "graphs": ["independent"], "densities": [0.65]}
    with pytest.raises(
        KgrankInputError, match=r"densities: 0\.65 needs .*density-65/train\.tsv, which is missing"
    ):
        check_family_tree_folders(settings, tmp_path)
    for name in ("train.tsv", "test_answers.tsv"):
        (folder / name).write_text("")
    check_family_tree_folders(settings, tmp_path)
    with pytest.raises(KgrankInputError, match=r"0\.5 needs .* \(independent has: density-65\); use one of"):
        check_family_tree_folders({**settings, "densities": [0.5]}, tmp_path)
    with pytest.raises(
        KgrankInputError, match=r"graphs: 'correlated' is no folder of .* \(it has: independent\)"
    ):
        check_family_tree_folders({**settings, "graphs": ["correlated"]}, tmp_path)
    check_family_tree_folders({**settings, "enabled": False, "graphs": ["correlated"]}, tmp_path)


def test_family_tree_densities_are_fractions_named_by_their_folder():
    from kgrank.studies.openworld.settings import density_percentages

    assert density_percentages([0.65, 0.75, 0.85, 0.95]) == [65, 75, 85, 95]
    assert density_percentages([0.07, 1]) == [7, 100]
    with pytest.raises(KgrankInputError, match=r"studies\.openworld\.family_tree\.densities: 0\.655"):
        density_percentages([0.655])


REPO = Path(__file__).resolve().parents[2]


def _check_openworld(section: dict) -> None:
    """The core keys of the tiny config, and this section as the only study."""
    import yaml

    from kgrank.workflow.config import check_config

    config = yaml.safe_load((REPO / ".test/config.yaml").read_text(encoding="utf-8"))
    config["studies"] = {"openworld": section}
    check_config(
        config,
        REPO / "src/kgrank/schemas/config.schema.yaml",
        study_schema_dir=REPO / "src/kgrank/schemas/studies",
    )


def test_config_refuses_the_old_name_of_the_replicates():
    _check_openworld({"inconsistency": {"montecarlo_replicates": 50}})
    with pytest.raises(
        KgrankInputError,
        match=r"key studies\.openworld\.inconsistency\.replicates: renamed; "
        r"write studies\.openworld\.inconsistency\.montecarlo_replicates instead",
    ):
        _check_openworld({"inconsistency": {"replicates": 50}})


def test_config_refuses_a_density_in_per_cent():
    _check_openworld({"family_tree": {"densities": [0.65, 0.95]}})
    with pytest.raises(KgrankInputError) as error:
        _check_openworld({"family_tree": {"densities": [65]}})
    message = str(error.value)
    assert "\n" not in message
    assert "studies.openworld.family_tree.densities" in message
    assert "a fraction" in message
