"""The ambiguity study on small hand-made inputs (no Snakemake): the constant scorer's exact
ranks, the random scorer near 0, sampled candidates drawn from a rank table's counts, the
restricted-candidate protocol on a hand-made graph, AMRI and AMRR by hand, the slopes, Holm
against a hand-worked example, and the pairwise tests."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
import yaml
from scipy import stats

from kgrank.engine.candidates import KnownAnswers
from kgrank.engine.ranks import ranks_from_scores, sampled_ranks
from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import lookup, metric_rows
from kgrank.evaluation.stats import seed_stream
from kgrank.studies.ambiguity.drift import (
    drift_metric_keys,
    drift_values,
    sampled_drift,
    sampled_ranks_from_counts,
    slope_per_decade,
)
from kgrank.studies.ambiguity.figures import plot_pairwise
from kgrank.studies.ambiguity.pairwise import PAIRWISE_COLUMNS, pairwise_table
from kgrank.studies.ambiguity.settings import subset_pairs
from kgrank.studies.ambiguity.subsets import Subset, subset_plan, subset_rank_table
from kgrank.studies.ambiguity.table1 import (
    amri,
    amri_tolerance,
    indistinguishable_from_random,
    published_table1_path,
    read_published,
    reproduced_by,
    table1,
)
from kgrank.studies.ambiguity.variants import (
    constant_scorer_ranks,
    random_scorer_ranks,
    study_metrics,
    tie_summary,
    variants_table,
)

REPO = Path(__file__).resolve().parents[2]
AMRI = "adjusted_arithmetic_mean_rank_index"
AMRR = "adjusted_inverse_harmonic_mean_rank"
AH10 = "adjusted_hits_at_10"


def _tasks(num_candidates: list[int]) -> pd.DataFrame:
    """A rank table's task columns: half head, half tail (contiguous, as the rank stage writes)."""
    n = np.asarray(num_candidates)
    sides = np.where(np.arange(len(n)) < len(n) // 2, "head", "tail")
    return pd.DataFrame({"triple_id": np.arange(len(n)), "side": sides, "num_candidates": n})


def _values(ranks: np.ndarray, num_candidates: np.ndarray, key: str) -> dict[str, float]:
    return {row["metric"]: row["value"] for row in metric_rows(ranks, num_candidates, lookup(key).metric)}


# --- rank definitions ------------------------------------------------------------------


def test_constant_scorer_exact_ranks():
    tasks = _tasks([2, 7, 14, 40943])
    ranks = constant_scorer_ranks(tasks, seed_stream(3))
    assert ranks["optimistic"].tolist() == [1, 1, 1, 1]
    assert ranks["pessimistic"].tolist() == [2, 7, 14, 40943]
    assert ranks["realistic"].tolist() == [1.5, 4.0, 7.5, 20472.0]
    assert ((ranks["random"] >= 1) & (ranks["random"] <= ranks["num_candidates"])).all()


def test_rank_engine_gives_the_constant_scorer_its_ranks():
    """The core's rank definitions on a constant score block (one filtered candidate):
    the same ranks as the constant scorer's on the remaining candidates."""
    scores = torch.zeros(2, 6)
    ranks = ranks_from_scores(scores, torch.tensor([1, 4]), filter_rows=[0], filter_cols=[3])
    assert ranks["optimistic"].tolist() == [1, 1]
    assert ranks["pessimistic"].tolist() == [5, 6]
    assert ranks["num_candidates"].tolist() == [5, 6]


def test_constant_scorer_metrics_under_each_definition():
    tasks = _tasks([14] * 10 + [104] * 10)
    metrics, ties = variants_table(
        {("toy", "model"): tasks.assign(optimistic=1, realistic=1.0, pessimistic=1, random=1)},
        study_metrics(),
        seed=0,
    )
    constant = metrics[(metrics["scorer"] == "constant") & (metrics["side"] == "both")]
    amri_by_type = constant[constant["metric"] == AMRI].set_index("rank_type")["value"]
    assert amri_by_type["optimistic"] == pytest.approx(1.0)
    assert amri_by_type["pessimistic"] == pytest.approx(-1.0)
    assert amri_by_type["realistic"] == pytest.approx(0.0, abs=1e-12)
    # every candidate is in the one tie block
    row = ties.set_index("scorer").loc["constant"]
    assert row["share_tied"] == 1.0 and row["max_tie_block"] == 104
    assert ties.set_index("scorer").loc["model", "share_tied"] == 0.0


def test_tie_summary_counts_blocks():
    table = pd.DataFrame(
        {
            "optimistic": [1, 3, 5, 2],
            "pessimistic": [1, 5, 5, 3],
            "realistic": [1.0, 4.0, 5.0, 2.5],
            "random": [1, 4, 5, 3],
            "num_candidates": [10, 10, 10, 10],
        }
    )
    summary = tie_summary(table)
    assert summary["share_tied"] == 0.5
    assert summary["mean_tie_block"] == 2.5  # blocks of 3 and 2
    assert summary["max_tie_block"] == 3
    assert summary["share_random_differs_from_realistic"] == 0.25


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_random_scorer_is_near_zero_under_realistic_ranks(seed):
    counts = np.random.default_rng(99).integers(20, 2000, size=4000)
    ranks = random_scorer_ranks(_tasks(counts.tolist()), seed_stream(seed))
    realistic, n = ranks["realistic"].to_numpy(), ranks["num_candidates"].to_numpy()
    values = {
        **_values(realistic, n, "mr"),
        **_values(realistic, n, "mrr"),
        **_values(realistic, n, "hits_at_10"),
    }
    for key in (AMRI, AMRR, AH10):
        assert abs(values[key]) < 0.05, (key, values[key])
    for key in ("z_arithmetic_mean_rank", "z_inverse_harmonic_mean_rank", "z_hits_at_10"):
        assert abs(values[key]) < 3, (key, values[key])


def test_the_random_check_catches_a_scorer_better_than_random():
    """Negative control: ranks uniform on the better half of the candidates are not near 0."""
    counts = np.random.default_rng(99).integers(20, 2000, size=4000)
    half = np.random.default_rng(0).integers(1, counts // 2, endpoint=True).astype(float)
    values = _values(half, counts, "mr")
    assert values[AMRI] > 0.4 and values["z_arithmetic_mean_rank"] > 3


# --- AMRI, AMRR and Table 1 by hand ------------------------------------------------------


def test_amri_on_a_hand_made_rank_set():
    # ranks 1, 2, 3 among 3, 5, 9 candidates: MR = 2, E[MR] = (2 + 3 + 5)/3 = 10/3,
    # AMRI = 1 - (2 - 1)/(10/3 - 1) = 4/7; with every task among 9 candidates E[MR] = 5, AMRI = 3/4
    assert amri(2.0, np.array([3, 5, 9])) == pytest.approx(4 / 7)
    assert amri(2.0, np.array([9])) == pytest.approx(3 / 4)
    values = drift_values(np.array([1.0, 2.0, 3.0]), np.array([3, 5, 9]))
    assert values[AMRI] == pytest.approx(4 / 7)


def test_amrr_on_a_hand_made_rank_set():
    # MRR = (1 + 1/2 + 1/3)/3 = 11/18; E[1/r] = H_N / N per task
    def harmonic(n: int) -> Fraction:
        return sum((Fraction(1, k) for k in range(1, n + 1)), Fraction(0))

    mrr = Fraction(11, 18)
    expected = sum(harmonic(n) / n for n in (3, 5, 9)) / 3
    amrr = (mrr - expected) / (1 - expected)
    values = drift_values(np.array([1.0, 2.0, 3.0]), np.array([3, 5, 9]))
    assert values["inverse_harmonic_mean_rank"] == pytest.approx(float(mrr))
    assert values[AMRR] == pytest.approx(float(amrr))


def test_published_table1_rows():
    published = read_published(published_table1_path())
    assert len(published) == 12 and set(published["dataset"]) == {"wn18rr", "fb15k237"}
    # one dataset in the run: WN18RR, every task with 40,001 candidates
    ranks = _tasks([40001] * 4).assign(optimistic=1, realistic=1.0, pessimistic=1, random=1)
    table = table1(published, {("wn18rr", "transe"): ranks}, {"wn18rr": 40559}, alpha=0.05)
    distmult = table[(table["model"] == "DistMult") & (table["dataset"] == "wn18rr")].iloc[0]
    # AMRI = 1 - (MR - 1)/((N + 1)/2 - 1) = 1 - 2 (MR - 1)/(N - 1); full and filtered both
    # on our 40,559 entities, so that their difference is filtering alone
    assert distmult["amri_full"] == pytest.approx(1 - 2 * 6999 / 40558)
    assert distmult["amri_filtered"] == pytest.approx(1 - 2 * 6999 / 40000)
    assert distmult["amri_difference"] == pytest.approx(2 * 6999 / 40558 - 2 * 6999 / 40000)
    # the paper's own count, 40,943 entities
    assert distmult["entities_published"] == 40943 and distmult["entities"] == 40559
    assert distmult["amri_published_count"] == pytest.approx(1 - 2 * 6999 / 40942)
    # FB15k-237 is not in this run: no per-task value, the full count is the paper's
    fb15k237 = table[table["dataset"] == "fb15k237"]
    assert fb15k237["amri_filtered"].isna().all()
    assert (fb15k237["amri_full"] == fb15k237["amri_published_count"]).all()
    ours = table[table["source"] == "kgrank"].iloc[0]
    assert ours["mean_rank"] == 1.0 and ours["amri_filtered"] == pytest.approx(1.0)
    assert not ours["random_like"]


def test_reproduced_by_names_the_counts_within_the_printed_digit():
    published = pd.DataFrame(
        [{"dataset": "toy", "model": "m", "mean_rank": 101, "entities": 1001, "amri_percent": 80.0}]
    )
    # our prepared graph lost 10 entities; every task's filtered count is 900 + 10 on the paper's
    ranks = _tasks([900] * 4).assign(optimistic=1, realistic=1.0, pessimistic=1, random=1)
    row = table1(published, {("toy", "x"): ranks}, {"toy": 991}, alpha=0.05).iloc[0]
    # AMRI = 1 - 2 (MR - 1)/(N - 1): 0.8 at N = 1001, 0.79798 at 991, 0.7800 at 910
    assert row["amri_published_count"] == pytest.approx(0.8)
    assert row["amri_full"] == pytest.approx(1 - 200 / 990)
    assert row["amri_filtered_published_entities"] == pytest.approx(1 - 200 / 909)
    # tolerance: half of the printed 0.1 %, plus the integer mean rank's rounding (0.5 / (E[MR] - 1))
    assert amri_tolerance(np.array([1001])) == pytest.approx(0.0005 + 0.5 / 500)
    assert row["reproduced_by"] == "paper's entities"
    assert reproduced_by(
        {
            "amri_published_count": 0.5,
            "amri_full": 0.6,
            "amri_filtered": np.nan,
            "amri_filtered_published_entities": 0.5004,
        },
        0.5,
        0.0005,
    ) == ("paper's entities; filtered on paper's entities")


def test_a_published_row_without_entity_count_leaves_its_columns_empty():
    published = pd.DataFrame(
        [{"dataset": "toy", "model": "m", "mean_rank": 101, "entities": np.nan, "amri_percent": 80.0}]
    )
    ranks = _tasks([900] * 4).assign(optimistic=1, realistic=1.0, pessimistic=1, random=1)
    row = table1(published, {("toy", "x"): ranks}, {"toy": 991}, alpha=0.05).iloc[0]
    assert np.isnan(row["amri_published_count"]) and np.isnan(row["amri_filtered_published_entities"])
    assert row["amri_full"] == pytest.approx(1 - 200 / 990)
    assert row["reproduced_by"] == "none"
    # neither stated nor in this run: nothing to compute, no traceback
    row = table1(published, {}, {}, alpha=0.05).iloc[0]
    assert np.isnan(row["amri_full"]) and row["reproduced_by"] == ""


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["fb15k237", "wn18rr"])
def test_published_amri_is_the_filtered_counts_on_the_papers_entities(dataset, request):
    """Berrendorf et al.'s Table 1: every published AMRI is the one of the per-task filtered
    candidate counts on the published entity set, to its printed digit; neither full
    entity count reproduces all of them (preparing the dataset and counting: about 10 s)."""
    from kgrank.engine.candidates import candidate_counts

    dataset_dir = request.getfixturevalue(f"{dataset}_dir")
    counts = candidate_counts(dataset_dir, "test").assign(
        optimistic=1, realistic=1.0, pessimistic=1, random=1
    )
    entities = json.loads((dataset_dir / "stats.json").read_text())["entities"]
    published = read_published(published_table1_path())
    table = table1(
        published[published["dataset"] == dataset], {(dataset, "x"): counts}, {dataset: entities}, alpha=0.05
    )
    rows = table[table["source"] != "kgrank"]
    assert len(rows) == 6
    names = rows["reproduced_by"].str.split("; ")
    assert all("filtered on paper's entities" in row for row in names)
    for count in ("paper's entities", "our entities"):
        assert not all(count in row for row in names), count


def test_indistinguishable_from_random():
    assert indistinguishable_from_random(1.75, 0.05)
    assert indistinguishable_from_random(-1.9, 0.05)
    assert not indistinguishable_from_random(2.5, 0.05)
    assert not indistinguishable_from_random(1.75, 0.1)  # 1.645 at alpha 0.1


# --- candidate-set size ------------------------------------------------------------------


def test_sampled_ranks_from_counts_follow_the_rank_engines_sampling():
    """The hypergeometric draw from a task's counts against kgrank.engine.ranks.sampled_ranks,
    which draws the candidates from the scores: the same law (means and tie shares)."""
    rows, num_entities = 3000, 50
    # true entity 0 scores 0.5; entities 1-10 above, 11-15 tied, the rest below
    score_row = torch.cat(
        [torch.tensor([0.5]), torch.full((10,), 0.9), torch.full((5,), 0.5), torch.zeros(34)]
    )
    scores = score_row.repeat(rows, 1)
    engine = sampled_ranks(scores, torch.zeros(rows, dtype=torch.long), np.arange(rows), "tail", 9, seed=1)
    table = pd.DataFrame(
        {"side": "tail", "optimistic": 11, "pessimistic": 16, "num_candidates": np.full(rows, num_entities)}
    )
    drawn = sampled_ranks_from_counts(table, 10, np.random.default_rng(2))
    assert (drawn["num_candidates"] == 10).all() and (engine["num_candidates"] == 10).all()
    # E[above] = 9 * 10/49, E[tied] = 9 * 5/49; the standard error of a mean of 3000 is about 0.02
    for name, expected in (("optimistic", 1 + 90 / 49), ("pessimistic", 1 + 135 / 49)):
        assert drawn[name].mean() == pytest.approx(expected, abs=0.08)
        assert engine[name].mean() == pytest.approx(expected, abs=0.08)
    # the joint law of (above, tied): 9 draws from 10 above, 5 tied and 34 below, a
    # multivariate hypergeometric (means alone would not tell a wrong joint law apart)
    law = stats.multivariate_hypergeom(m=[10, 5, 34], n=9)
    cells = [(above, tied) for above in range(10) for tied in range(6) if above + tied <= 9]
    expected_share = np.array([law.pmf([above, tied, 9 - above - tied]) for above, tied in cells])
    common = expected_share * rows >= 5  # chi-square cells with enough expected counts
    for sample in (drawn, engine):
        pairs = list(zip(sample["optimistic"] - 1, sample["pessimistic"] - sample["optimistic"], strict=True))
        observed = np.array([pairs.count(cell) for cell in cells])
        observed_cells = np.append(observed[common], observed[~common].sum())
        expected_cells = np.append(expected_share[common], expected_share[~common].sum()) * rows
        assert stats.chisquare(observed_cells, expected_cells).pvalue > 1e-3
    everything = sampled_ranks_from_counts(table, None, np.random.default_rng(2))
    assert (everything["optimistic"] == 11).all() and (everything["realistic"] == 13.5).all()


def test_sampled_drift_keeps_amri_and_moves_mr():
    """Candidates sampled uniformly leave AMRI unbiased (E[r - 1] scales with k - 1) while
    MR falls with k: on 2,000 tasks at a fixed relative rank."""
    table = pd.DataFrame(
        {
            "side": "tail",
            "optimistic": 2001,
            "pessimistic": 2001,
            "realistic": 2001.0,
            "num_candidates": 10001,
        },
        index=range(2000),
    )
    drift = sampled_drift(table, [10, 100, 1000, None], repetitions=3, seed=5)
    assert set(drift["metric"]) == set(drift_metric_keys())
    by_size = drift[drift["metric"] == AMRI].groupby("size")["value"].mean()
    assert by_size.to_numpy() == pytest.approx(np.full(4, 0.6), abs=0.02)
    mr = drift[drift["metric"] == "arithmetic_mean_rank"].groupby("size")["value"].mean()
    assert mr["10"] < 3 < 200 < mr["1000"] < mr["all"] == 2001


def test_sizes_that_keep_every_candidate_are_the_all_point_once():
    # every task has at most 40 candidates: k = 100 keeps them all, as `all` does
    table = _tasks([20, 40] * 50).assign(optimistic=3, pessimistic=3, realistic=3.0)
    drift = sampled_drift(table, [10, 100, None], repetitions=3, seed=5)
    counts = drift[drift["metric"] == AMRI].groupby("size").size().to_dict()
    assert counts == {"10": 3, "all": 1}
    # without `all` among the sizes, the saturated size stands for it, once
    drift = sampled_drift(table, [10, 100], repetitions=3, seed=5)
    assert drift[drift["metric"] == AMRI].groupby("size").size().to_dict() == {"10": 3, "100": 1}


def test_slope_per_decade_flat_and_drifting():
    x = np.repeat([10.0, 100.0, 1000.0], 5)
    noise = np.random.default_rng(0).normal(0, 0.01, len(x))
    drifting = slope_per_decade(x, 2 * np.log10(x) + noise, seed=1)
    assert drifting["slope_per_decade"] == pytest.approx(2, abs=0.02)
    assert not drifting["flat"] and drifting["low"] > 1.9
    flat = slope_per_decade(x, 0.5 + noise, seed=1)
    assert flat["flat"] and flat["low"] < 0 < flat["high"]
    short = slope_per_decade(np.array([10.0, 12.0]), np.array([1.0, 2.0]))
    assert np.isnan(short["slope_per_decade"]) and not short["flat"]


# --- the restricted-candidate protocol on a hand-made graph --------------------------------

# Six entities, one relation. Test triples (0,0,1), (2,0,3), (4,0,5); training triples
# (0,0,3) and (5,0,3). Every query scores entity e as SCORES[e]: entity 0 best, 2 and 3 tied.
TEST = np.array([[0, 0, 1], [2, 0, 3], [4, 0, 5]])
TRAIN = np.array([[0, 0, 3], [5, 0, 3]])
SCORES = torch.tensor([10.0, 9.0, 8.0, 8.0, 7.0, 6.0])


def _score_batch(batch: np.ndarray, side: str) -> torch.Tensor:
    return SCORES.repeat(len(batch), 1)


def test_restricted_candidate_protocol_on_a_hand_made_graph():
    known = KnownAnswers([TRAIN, TEST], num_entities=6, num_relations=1)
    first_two = Subset(0.5, 0, np.array([0, 1]), np.array([True, True, True, True, False, False]))
    table = subset_rank_table(_score_batch, TEST, known, [first_two], batch_size=2)
    got = table.set_index(["triple_id", "side"])[["optimistic", "pessimistic", "num_candidates"]]
    expected = {
        # (?,0,1): candidates {0,1,2,3}, the true head 0 scores best
        (0, "head"): (1, 1, 4),
        # (0,0,?): 3 is a known tail (training) and leaves; {0,1,2}: 0 above the true 1
        (0, "tail"): (2, 2, 3),
        # (?,0,3): 0 is a known head (training) and leaves; {1,2,3}: 1 above, 3 tied with the true 2
        (1, "head"): (2, 3, 3),
        # (2,0,?): {0,1,2,3}: 0 and 1 above, 2 tied with the true 3
        (1, "tail"): (3, 4, 4),
    }
    assert {key: tuple(row) for key, row in got.iterrows()} == expected
    assert 2 not in set(table["triple_id"])  # (4,0,5) is not in the subset


def test_whole_test_set_with_every_entity_gives_the_rank_engines_ranks():
    known = KnownAnswers([TRAIN, TEST], num_entities=6, num_relations=1)
    plan = subset_plan(TEST, 6, [1.0], repetitions=3, seed=0)
    assert len(plan) == 1 and plan[0].entities.all()  # the whole test set: one replicate
    table = subset_rank_table(_score_batch, TEST, known, plan)
    for side, column in (("head", 0), ("tail", 2)):
        scores = SCORES.repeat(3, 1)
        rows, columns = known.answers(side, TEST)
        engine = ranks_from_scores(scores, torch.as_tensor(TEST[:, column]), rows, columns)
        ours = table[table["side"] == side]
        assert ours["optimistic"].tolist() == engine["optimistic"].tolist()
        assert ours["pessimistic"].tolist() == engine["pessimistic"].tolist()
        assert ours["num_candidates"].tolist() == engine["num_candidates"].tolist()


def test_subset_plan_is_seeded_and_names_its_entities():
    triples = np.array([[i, 0, i + 10] for i in range(10)])
    plan = subset_plan(triples, 20, [0.3, 1.0], repetitions=2, seed=7)
    assert [(s.fraction, s.replicate, len(s.rows)) for s in plan] == [(0.3, 0, 3), (0.3, 1, 3), (1.0, 0, 10)]
    for subset in plan:
        assert set(np.flatnonzero(subset.entities)) == set(triples[subset.rows][:, [0, 2]].ravel())
    again = subset_plan(triples, 20, [0.3, 1.0], repetitions=2, seed=7)
    assert all(np.array_equal(a.rows, b.rows) for a, b in zip(plan, again, strict=True))
    assert not np.array_equal(plan[0].rows, plan[1].rows)


def test_subset_pairs_setting():
    # the trained pairs, then an external PyKEEN folder (which kgrank can rescore)
    scored = [("nations", "transe"), ("nations", "complex"), ("nations", "pk-folder")]
    assert subset_pairs(None, scored) == scored
    assert subset_pairs(["nations/pk-folder", "nations/complex"], scored) == [scored[2], scored[1]]
    with pytest.raises(KgrankInputError, match="studies.ambiguity.subsets.pairs") as error:
        subset_pairs(["wn18rr/complex"], scored)
    assert "not a trained pair or an external PyKEEN folder" in str(error.value)


# --- which differences are real --------------------------------------------------------------


def _two_models(better: np.ndarray, worse: np.ndarray, num_candidates: int) -> dict:
    tasks = _tasks([num_candidates] * len(better))
    return {
        ("toy", name): tasks.assign(
            optimistic=rank, realistic=rank.astype(float), pessimistic=rank, random=rank
        )
        for name, rank in (("better", better), ("worse", worse))
    }


def test_the_amrr_difference_is_the_mrr_difference_scaled():
    rng = np.random.default_rng(0)
    better, worse = rng.integers(1, 5, size=500), rng.integers(3, 20, size=500)
    table = pairwise_table(
        _two_models(better, worse, 40), alpha=0.05, confidence=0.95, bootstrap_resamples=500, seed=0
    )
    row = table.iloc[0]
    expected = lookup("mrr").metric.moments(np.full(500, 40)).expectation
    assert row["difference"] == pytest.approx(np.mean(1 / better) - np.mean(1 / worse))
    assert row["adjusted_difference"] == pytest.approx(row["difference"] / (1 - expected))
    assert row["difference_low"] > 0 and row["wilcoxon_p"] < 1e-10 and row["t_p"] < 1e-10
    same = pairwise_table(
        _two_models(better, better, 40), alpha=0.05, confidence=0.95, bootstrap_resamples=500, seed=0
    ).iloc[0]
    assert same["wilcoxon_p"] == 1.0 and same["difference"] == 0.0


def test_the_pairs_are_kgrank_compares():
    # an adapter of the one comparison engine: the same numbers as `kgrank compare`
    from kgrank.evaluation.comparison import compare_rank_tables

    rng = np.random.default_rng(4)
    tables = _two_models(rng.integers(1, 6, size=80), rng.integers(1, 9, size=80), 25)
    ours = pairwise_table(tables, alpha=0.05, confidence=0.9, bootstrap_resamples=200, seed=3)
    theirs = compare_rank_tables(
        {"toy": {model: table for (_, model), table in tables.items()}},
        metrics="mrr",
        alpha=0.05,
        confidence=0.9,
        bootstrap_resamples=200,
        seed=3,
    ).pairs
    pd.testing.assert_frame_equal(ours, theirs[list(PAIRWISE_COLUMNS)])


def test_pairwise_table_corrects_over_every_pair():
    rng = np.random.default_rng(1)
    tasks = _tasks([30] * 300)

    def model(top: int) -> pd.DataFrame:
        rank = rng.integers(1, top, size=300, endpoint=True)
        return tasks.assign(optimistic=rank, realistic=rank.astype(float), pessimistic=rank, random=rank)

    tables = {("toy", "good"): model(3), ("toy", "also_good"): model(3), ("toy", "bad"): model(30)}
    table = pairwise_table(tables, alpha=0.05, confidence=0.95, bootstrap_resamples=300, seed=0)
    assert len(table) == 3
    assert (table["wilcoxon_p_holm"] >= table["wilcoxon_p"]).all()
    significant = {(row.first, row.second): row.wilcoxon_significant for row in table.itertuples()}
    assert significant[("good", "bad")] and significant[("also_good", "bad")]
    assert not significant[("good", "also_good")]


def test_one_model_per_dataset_leaves_an_empty_table_with_every_column(tmp_path):
    ranks = _tasks([30] * 10).assign(optimistic=1, realistic=1.0, pessimistic=1, random=1)
    table = pairwise_table(
        {("toy", "only"): ranks}, alpha=0.05, confidence=0.95, bootstrap_resamples=100, seed=0
    )
    assert table.empty and list(table.columns) == list(PAIRWISE_COLUMNS)
    plot_pairwise(table, {}, tmp_path / "p.pdf", tmp_path / "p.png", caption="one model")
    assert (tmp_path / "p.pdf").stat().st_size > 0 and (tmp_path / "p.png").stat().st_size > 0


def test_tables_of_different_tasks_are_named_not_compared():
    first = _tasks([30] * 10).assign(optimistic=1, realistic=1.0, pessimistic=1, random=1)
    second = first.iloc[:8]
    with pytest.raises(KgrankInputError, match="dataset 'toy': system 'b' differs from 'a' in 2 task"):
        pairwise_table(
            {("toy", "a"): first, ("toy", "b"): second},
            alpha=0.05,
            confidence=0.9,
            bootstrap_resamples=50,
            seed=0,
        )


def test_a_constant_difference_is_that_constant_at_both_ends():
    """kgrank.evaluation.stats' contract for a difference without variance: the interval is the
    constant, the t statistic infinite with its sign, t's p-value 0."""
    # rank 1 against rank 2 on every task: reciprocal ranks 0.5 apart everywhere
    table = pairwise_table(
        _two_models(np.ones(50, dtype=int), np.full(50, 2), 20),
        alpha=0.05,
        confidence=0.95,
        bootstrap_resamples=100,
        seed=0,
    ).iloc[0]
    assert table["difference_low"] == table["difference_high"] == pytest.approx(0.5)
    assert table["t_statistic"] == np.inf and table["t_p"] == 0.0


# --- seeds: kgrank.evaluation.stats derives them as the study did before ------------------------------


def test_seeds_are_the_former_derivations():
    """variants_table seeds its baseline scorers with seed_stream(seed, dataset[, 1]),
    subset_plan with seed_stream(seed, fraction * 10,000, replicate)."""
    import zlib

    tasks = _tasks([14] * 20 + [104] * 20).assign(optimistic=1, realistic=1.0, pessimistic=1, random=1)
    n = tasks["num_candidates"].to_numpy(dtype=np.int64)
    former = np.random.default_rng(np.random.SeedSequence([42, zlib.crc32(b"toy")])).integers(
        1, n, endpoint=True
    )
    assert np.array_equal(constant_scorer_ranks(tasks, seed_stream(42, "toy"))["random"], former)
    former = np.random.default_rng(np.random.SeedSequence([42, zlib.crc32(b"toy"), 1]))
    assert np.array_equal(
        random_scorer_ranks(tasks, seed_stream(42, "toy", 1))["optimistic"],
        former.integers(1, n, endpoint=True),
    )
    triples = np.array([[i, 0, i + 10] for i in range(10)])
    plan = subset_plan(triples, 20, [0.3], repetitions=2, seed=7)
    for subset in plan:
        generator = np.random.default_rng([7, 3000, subset.replicate])
        assert np.array_equal(subset.rows, np.sort(generator.choice(10, size=3, replace=False)))


# --- settings ----------------------------------------------------------------------------------


def _check_ambiguity(section: dict) -> None:
    from kgrank.workflow.config import check_config

    config = yaml.safe_load((REPO / ".test/config.yaml").read_text(encoding="utf-8"))
    config["studies"] = {"ambiguity": section}
    check_config(
        config,
        REPO / "src/kgrank/schemas/config.schema.yaml",
        study_schema_dir=REPO / "src/kgrank/schemas/studies",
    )


def test_config_refuses_the_old_name_of_the_repetitions():
    _check_ambiguity({"repetitions": 3})
    with pytest.raises(
        KgrankInputError,
        match=r"key studies\.ambiguity\.seeds: renamed; write studies\.ambiguity\.repetitions instead",
    ):
        _check_ambiguity({"seeds": 3})


def test_models_are_marked_not_distinguishable_or_worse_than_random():
    """Issue 47: TransE on Nations sat at z-MRR -8.4 and the tables marked only 'not
    distinguishable'. Worse than random now gets its own mark, said in the captions."""
    from kgrank.studies.ambiguity import report

    assert report.random_mark(0.5, 0.05) == report.RANDOM_MARK == "†"
    assert report.random_mark(-1.9, 0.05) == "†"
    assert report.random_mark(-8.4, 0.05) == report.WORSE_MARK == "‡"
    assert report.random_mark(5.0, 0.05) == ""
    assert report.marked("transe", "‡").endswith(" ‡") and report.marked("transe", "") == report.model_label(
        "transe"
    )
    note = report.random_note(0.05)
    assert "† : not" not in note and "‡: worse than random, z-MRR < -1.96" in note
