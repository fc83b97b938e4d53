"""kgrank.engine.ties against brute force: rank widths by hand, the tie tolerance against
``math.isclose`` element by element and against ``ranks_from_scores`` by default, and the
tie-neutral IR measures against the mean over every order of the tie groups (our own
per-order measures and trec_eval's, by ir-measures) and against trec_eval without ties."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from kgrank.engine.ranks import ranks_from_scores
from kgrank.engine.ties import (
    constant_scores,
    mean_over_queries,
    quantised_scores,
    rank_width_summary,
    rank_widths,
    ranks_with_tolerance,
    tie_mask,
    tie_neutral_measures,
    tie_neutral_table,
    tie_neutral_values,
    trec_tie_sensitivity,
    trec_values,
)
from kgrank.errors import KgrankInputError

# ---------------------------------------------------------------------------------------
# 1. Rank width
# ---------------------------------------------------------------------------------------


def test_rank_widths_and_summary_by_hand():
    table = pd.DataFrame(
        {
            "side": ["head", "head", "head", "tail", "tail"],
            "optimistic": [1, 3, 2, 5, 1],
            "pessimistic": [1, 7, 2, 6, 1],
            "num_candidates": [10, 10, 10, 10, 10],
        }
    )
    np.testing.assert_array_equal(rank_widths(table), [0, 4, 0, 1, 0])
    summary = rank_width_summary(table).set_index("side")
    assert list(summary.index) == ["head", "tail", "both"]
    assert summary.loc["head"].to_dict() == {
        "num_tasks": 3,
        "mean_width": 4 / 3,
        "tied_share": 1 / 3,
        "max_width": 4,
    }
    assert summary.loc["tail", "mean_width"] == 0.5 and summary.loc["tail", "tied_share"] == 0.5
    assert summary.loc["both", "mean_width"] == 1.0 and summary.loc["both", "max_width"] == 4
    assert summary.loc["both", "tied_share"] == 2 / 5


def test_rank_width_refuses_bad_tables():
    with pytest.raises(KgrankInputError, match="pessimistic"):
        rank_widths(pd.DataFrame({"optimistic": [1]}))
    with pytest.raises(KgrankInputError, match="below the optimistic"):
        rank_widths(pd.DataFrame({"optimistic": [3], "pessimistic": [2]}))
    with pytest.raises(KgrankInputError, match="side"):
        rank_width_summary(pd.DataFrame({"optimistic": [1], "pessimistic": [2]}))


# ---------------------------------------------------------------------------------------
# 2. Tie tolerance
# ---------------------------------------------------------------------------------------

SPECIAL = [float("inf"), float("-inf")]


@st.composite
def score_blocks(draw, values=None, dtype=torch.float64):
    """A (batch, entities) score block, its true entities and filter pairs (row, column)."""
    batch = draw(st.integers(1, 4))
    entities = draw(st.integers(1, 8))
    if values is None:
        element = st.floats(-1e3, 1e3, allow_nan=False, width=32) | st.sampled_from(SPECIAL)
    else:  # quantised: few distinct values, so ties are common
        element = st.sampled_from(values)
    scores = torch.tensor(
        draw(
            st.lists(st.lists(element, min_size=entities, max_size=entities), min_size=batch, max_size=batch)
        ),
        dtype=dtype,
    )
    true_entities = torch.tensor(draw(st.lists(st.integers(0, entities - 1), min_size=batch, max_size=batch)))
    pairs = draw(
        st.sets(st.tuples(st.integers(0, batch - 1), st.integers(0, entities - 1)), max_size=batch * 3)
    )
    rows = [row for row, _ in sorted(pairs)]
    cols = [col for _, col in sorted(pairs)]
    return scores, true_entities, rows, cols


QUANTISED = [-1.0, -0.5, 0.0, 0.5, 1.0, 1.0 + 1e-9, float("inf"), float("-inf")]


@settings(max_examples=150, deadline=None)
@given(block=st.one_of(score_blocks(), score_blocks(QUANTISED), score_blocks(QUANTISED, torch.float32)))
def test_default_tolerance_reproduces_ranks_from_scores(block):
    scores, true_entities, rows, cols = block
    expected = ranks_from_scores(scores.clone(), true_entities, rows, cols)
    got = ranks_with_tolerance(scores.clone(), true_entities, rows, cols)
    for name in ("optimistic", "pessimistic", "num_candidates"):
        np.testing.assert_array_equal(got[name], expected[name])


def _ranks_by_isclose(scores, true_entities, rows, cols, absolute, relative):
    """Element by element: filtered candidates out, the rest compared with math.isclose."""
    filtered = set(zip(rows, cols, strict=True))
    optimistic, pessimistic = [], []
    for row, true_entity in enumerate(true_entities.tolist()):
        true_score = float(scores[row, true_entity])
        above, at_least = 0, 0
        for column, value in enumerate(scores[row].tolist()):
            if (row, column) in filtered and column != true_entity:
                continue
            tied = math.isclose(value, true_score, rel_tol=relative, abs_tol=absolute)
            above += value > true_score and not tied
            at_least += value >= true_score or tied
        optimistic.append(1 + above)
        pessimistic.append(at_least)
    return optimistic, pessimistic


@settings(max_examples=150, deadline=None)
@given(
    block=st.one_of(score_blocks(), score_blocks(QUANTISED), score_blocks(QUANTISED, torch.float32)),
    absolute=st.sampled_from([0.0, 1e-9, 0.3, 0.5, 2.0]),
    relative=st.sampled_from([0.0, 1e-9, 0.1, 0.5]),
)
def test_tolerance_matches_math_isclose(block, absolute, relative):
    scores, true_entities, rows, cols = block
    got = ranks_with_tolerance(
        scores.clone(), true_entities, rows, cols, absolute=absolute, relative=relative
    )
    optimistic, pessimistic = _ranks_by_isclose(scores, true_entities, rows, cols, absolute, relative)
    np.testing.assert_array_equal(got["optimistic"], optimistic)
    np.testing.assert_array_equal(got["pessimistic"], pessimistic)
    assert (got["optimistic"] <= got["pessimistic"]).all()
    assert (got["pessimistic"] <= got["num_candidates"]).all()


def test_tolerance_catches_float_near_ties_and_is_symmetric():
    # the LibKGE case: a degenerate model's scores equal up to float noise rank "best"
    # optimistically unless the noise counts as a tie
    noise = torch.tensor([[0.3, 0.3 + 1e-7, 0.3 - 1e-7, 0.3 + 2e-7, 5.0]], dtype=torch.float64)
    exact = ranks_with_tolerance(noise.clone(), torch.tensor([0]))
    tolerant = ranks_with_tolerance(noise.clone(), torch.tensor([0]), absolute=1e-6)
    assert (exact["optimistic"][0], exact["pessimistic"][0]) == (4, 4)
    assert (tolerant["optimistic"][0], tolerant["pessimistic"][0]) == (2, 5)
    # symmetric, unlike numpy.isclose: 1.0 vs 1.1 ties at relative 0.095 whichever is the true one
    pair = torch.tensor([1.0, 1.1], dtype=torch.float64)
    assert tie_mask(pair[:1], pair[1:], relative=0.095) and tie_mask(pair[1:], pair[:1], relative=0.095)
    assert np.isclose(1.0, 1.1, rtol=0.095, atol=0) != np.isclose(1.1, 1.0, rtol=0.095, atol=0)


def test_tolerance_refuses_negative_or_nan():
    for bad in ({"absolute": -1.0}, {"relative": float("nan")}, {"absolute": float("inf")}):
        with pytest.raises(KgrankInputError, match="tie tolerance"):
            ranks_with_tolerance(torch.zeros(1, 3), torch.tensor([0]), **bad)


# ---------------------------------------------------------------------------------------
# 3. Stress scorers
# ---------------------------------------------------------------------------------------


def test_constant_scores_tie_everything():
    scores = constant_scores(torch.randn(3, 7, generator=torch.Generator().manual_seed(0)))
    # row 0 loses entities 1 and 2 to the filter, row 2 keeps its true entity 4 although listed
    ranks = ranks_from_scores(scores, torch.tensor([0, 3, 4]), [0, 0, 2], [1, 2, 4])
    np.testing.assert_array_equal(ranks["num_candidates"], [5, 7, 7])
    np.testing.assert_array_equal(ranks["optimistic"], [1, 1, 1])
    np.testing.assert_array_equal(ranks["pessimistic"], ranks["num_candidates"])
    realistic = (ranks["optimistic"] + ranks["pessimistic"]) / 2
    np.testing.assert_array_equal(realistic, (ranks["num_candidates"] + 1) / 2)


@settings(max_examples=100, deadline=None)
@given(block=score_blocks(), decimals=st.integers(-2, 4))
def test_quantised_scores_only_merge_ties(block, decimals):
    scores, true_entities, rows, cols = block
    quantised = quantised_scores(scores, decimals)
    scale = 10.0**decimals
    finite = torch.isfinite(scores)
    # each value is the nearest multiple of 10^-decimals (half to even), infinities kept
    assert torch.equal(quantised[~finite], scores[~finite])
    assert torch.all((quantised[finite] - scores[finite]).abs() <= 0.5 / scale * (1 + 1e-9))
    before = ranks_from_scores(scores.clone(), true_entities, rows, cols)
    after = ranks_from_scores(quantised.clone(), true_entities, rows, cols)
    assert (after["optimistic"] <= before["optimistic"]).all()
    assert (after["pessimistic"] >= before["pessimistic"]).all()


def test_quantised_scores_refuses_non_integer_decimals():
    with pytest.raises(KgrankInputError, match="decimals"):
        quantised_scores(torch.zeros(1, 2), 1.5)


# ---------------------------------------------------------------------------------------
# 4. Tie-neutral IR measures
# ---------------------------------------------------------------------------------------

CUTOFFS = (1, 2, 3, 5, 10)
MEASURES = [
    *(f"{name}@{k}" for name in ("AP", "nDCG", "P") for k in CUTOFFS),
    "AP",
    "nDCG",
    "RR",
]
# trec_eval's recip_rank has no cutoff: RR@k is compared with our own per-order measure only
OWN_ONLY = [f"RR@{k}" for k in CUTOFFS]


def measures_of_order(relevance_in_order: list[int], judged: list[int]) -> dict[str, float]:
    """Every measure of MEASURES + OWN_ONLY of one concrete order, straight from trec_eval's
    definitions (relevant: relevance >= 1; gain: relevance clipped at 0)."""
    num_relevant = sum(level >= 1 for level in judged)
    ideal_gains = sorted((max(level, 0) for level in judged), reverse=True)
    values = {}
    for cutoff in (*CUTOFFS, None):
        suffix = "" if cutoff is None else f"@{cutoff}"
        top = relevance_in_order if cutoff is None else relevance_in_order[:cutoff]
        hits, precision_sum = 0, 0.0
        for rank, level in enumerate(top, start=1):
            if level >= 1:
                hits += 1
                precision_sum += hits / rank
        values[f"AP{suffix}"] = precision_sum / num_relevant if num_relevant else 0.0
        dcg = sum(max(level, 0) / math.log2(rank + 1) for rank, level in enumerate(top, start=1))
        ideal_top = ideal_gains if cutoff is None else ideal_gains[:cutoff]
        ideal = sum(gain / math.log2(rank + 1) for rank, gain in enumerate(ideal_top, start=1))
        values[f"nDCG{suffix}"] = dcg / ideal if ideal > 0 else 0.0
        first = next((rank for rank, level in enumerate(top, start=1) if level >= 1), None)
        values[f"RR{suffix}"] = 1 / first if first else 0.0
        if cutoff is not None:
            values[f"P{suffix}"] = hits / cutoff
    return values


def orders_within_ties(scores: list[float]) -> list[tuple[int, ...]]:
    """Every order of the documents (indices) that trec_eval could produce for these
    scores: descending score, any permutation inside each group of equal scores."""
    groups = [
        [index for index, score in enumerate(scores) if score == value]
        for value in sorted(set(scores), reverse=True)
    ]
    return [
        tuple(itertools.chain.from_iterable(parts))
        for parts in itertools.product(*(itertools.permutations(group) for group in groups))
    ]


def frames(query_id, doc_ids, scores, run_relevance, unretrieved):
    """A run and qrels frame of one query; None in run_relevance: an unjudged document."""
    run = pd.DataFrame({"query_id": query_id, "doc_id": doc_ids, "score": scores})
    judged = [(doc, level) for doc, level in zip(doc_ids, run_relevance, strict=True) if level is not None]
    judged += [(f"missing{i}", level) for i, level in enumerate(unretrieved)]
    qrels = pd.DataFrame(
        {
            "query_id": query_id,
            "doc_id": [doc for doc, _ in judged],
            "relevance": [level for _, level in judged],
        }
    )
    return run, qrels


@st.composite
def tied_queries(draw, max_documents=8):
    num_documents = draw(st.integers(1, max_documents))
    scores = draw(st.lists(st.sampled_from([0.0, 1.0, 2.5]), min_size=num_documents, max_size=num_documents))
    run_relevance = draw(
        st.lists(st.sampled_from([None, -1, 0, 1, 1, 2]), min_size=num_documents, max_size=num_documents)
    )
    unretrieved = draw(st.lists(st.sampled_from([0, 1, 2]), max_size=2))
    return scores, run_relevance, unretrieved


def _by_measure(frame: pd.DataFrame) -> dict[str, float]:
    return dict(zip(frame["measure"], frame["value"], strict=True))


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]
)
@given(query=tied_queries())
def test_tie_neutral_equals_mean_over_every_order(query):
    scores, run_relevance, unretrieved = query
    # counted before enumerating them: larger tie products are slow to enumerate and to
    # evaluate at every example (a tie of all 8 documents, 40,320 orders, is tested once
    # below); up to 120 orders keeps every example well under a second
    assume(math.prod(math.factorial(scores.count(value)) for value in set(scores)) <= 120)
    orders = orders_within_ties(scores)
    doc_ids = [f"d{i}" for i in range(len(scores))]
    run, qrels = frames("q", doc_ids, scores, run_relevance, unretrieved)
    assume(len(qrels))  # trec_eval skips a query without qrels
    neutral = _by_measure(tie_neutral_measures(run, qrels, MEASURES + OWN_ONLY))
    judged = qrels["relevance"].tolist()
    levels = [0 if level is None else level for level in run_relevance]
    own = pd.DataFrame([measures_of_order([levels[i] for i in order], judged) for order in orders]).mean()
    # trec_eval on every concrete order: one query per order, scores strictly decreasing
    trec_run = pd.DataFrame(
        {
            "query_id": np.repeat([f"o{n}" for n in range(len(orders))], len(scores)),
            "doc_id": [doc_ids[i] for order in orders for i in order],
            "score": np.tile(np.arange(len(scores), 0, -1, dtype=float), len(orders)),
        }
    )
    trec_qrels = pd.DataFrame(
        {
            "query_id": np.repeat([f"o{n}" for n in range(len(orders))], len(qrels)),
            "doc_id": np.tile(qrels["doc_id"].to_numpy(), len(orders)),
            "relevance": np.tile(qrels["relevance"].to_numpy(), len(orders)),
        }
    )
    for measure in MEASURES + OWN_ONLY:
        assert neutral[measure] == pytest.approx(own[measure], abs=1e-12, rel=0), measure
    if max(judged) < 0:
        # every level negative: trec_eval would read another query's relevance levels
        with pytest.raises(KgrankInputError, match="has no relevance level >= 0"):
            trec_values(trec_run, trec_qrels, MEASURES)
        return
    trec = trec_values(trec_run, trec_qrels, MEASURES)
    assert trec["query_id"].nunique() == len(orders)
    trec_mean = trec.groupby("measure")["value"].mean()
    for measure in MEASURES:
        assert neutral[measure] == pytest.approx(trec_mean[measure], abs=1e-12, rel=0), measure


def test_tie_neutral_on_a_full_tie_of_eight():
    # all 8! = 40,320 orders by our own per-order measures
    run_relevance, unretrieved = [1, None, 0, 2, None, 1, 0, None], [1]
    doc_ids = [f"d{i}" for i in range(8)]
    run, qrels = frames("q", doc_ids, [0.5] * 8, run_relevance, unretrieved)
    neutral = _by_measure(tie_neutral_measures(run, qrels, MEASURES + OWN_ONLY))
    levels = [0 if level is None else level for level in run_relevance]
    judged = qrels["relevance"].tolist()
    totals: dict[str, float] = {}
    count = 0
    for order in itertools.permutations(range(8)):
        count += 1
        for name, value in measures_of_order([levels[i] for i in order], judged).items():
            totals[name] = totals.get(name, 0.0) + value
    assert count == 40_320
    for measure in MEASURES + OWN_ONLY:
        assert neutral[measure] == pytest.approx(totals[measure] / count, abs=1e-12, rel=0), measure


def test_tie_neutral_rr_in_a_large_tie_group_against_fractions():
    # 2 relevant among 300 tied documents behind 4 irrelevant ones: E[1/(4 + J)] with
    # P(J = j) = C(300 - j, 1) / C(300, 2), summed exactly
    num_tied, num_relevant, above = 300, 2, 4
    scores = [9.0] * above + [1.0] * num_tied
    run_relevance = [0] * above + [1] * num_relevant + [0] * (num_tied - num_relevant)
    run, qrels = frames("q", [f"d{i}" for i in range(len(scores))], scores, run_relevance, [])
    exact = sum(
        Fraction(math.comb(num_tied - j, num_relevant - 1), math.comb(num_tied, num_relevant))
        * Fraction(1, above + j)
        for j in range(1, num_tied - num_relevant + 2)
    )
    value = _by_measure(tie_neutral_measures(run, qrels, ["RR"]))["RR"]
    assert value == pytest.approx(float(exact), abs=1e-13, rel=0)


@settings(max_examples=60, deadline=None)
@given(
    num_documents=st.integers(1, 30),
    data=st.data(),
)
def test_without_ties_tie_neutral_equals_trec_eval(num_documents, data):
    scores = data.draw(st.permutations(list(np.linspace(-3.0, 7.0, num_documents))))
    run_relevance = data.draw(
        st.lists(st.sampled_from([None, -1, 0, 1, 2]), min_size=num_documents, max_size=num_documents)
    )
    unretrieved = data.draw(st.lists(st.sampled_from([0, 1, 2]), max_size=3))
    # random document names: trec_eval's id order must not matter without ties
    names = data.draw(
        st.lists(st.text("abcxyz", min_size=1, max_size=4), min_size=num_documents, unique=True)
    )
    run, qrels = frames("q", names[:num_documents], scores, run_relevance, unretrieved)
    assume(len(qrels))  # trec_eval skips a query without qrels
    # refused: see test_trec_values_refuses_a_query_without_a_level_of_zero_or_more
    assume(qrels["relevance"].max() >= 0)
    neutral = tie_neutral_measures(run, qrels, MEASURES)
    trec = trec_values(run, qrels, MEASURES)
    merged = neutral.merge(trec, on=["query_id", "measure"], suffixes=("_neutral", "_trec"))
    assert len(merged) == len(MEASURES)
    np.testing.assert_array_equal(merged["value_neutral"], merged["value_trec"])


# --- the same expectation on a rank table: one true answer per task ---------------------


@settings(max_examples=40, deadline=None)
@given(
    blocks=st.lists(
        st.tuples(st.integers(1, 60), st.integers(0, 25)).map(lambda pair: (pair[0], pair[0] + pair[1])),
        min_size=1,
        max_size=12,
    )
)
def test_tie_neutral_rank_values_are_the_mean_over_the_tie_block(blocks):
    low, high = (np.array(column) for column in zip(*blocks, strict=True))
    for name, function in (
        ("mrr", lambda rank: 1.0 / rank),
        ("hits@3", lambda rank: float(rank <= 3)),
        ("mr", float),
    ):
        expected = [np.mean([function(rank) for rank in range(a, b + 1)]) for a, b in blocks]
        assert tie_neutral_values(low, high, name) == pytest.approx(expected, rel=1e-12, abs=1e-15), name


def test_tie_neutral_rank_values_equal_the_ir_measures_of_a_run_with_one_answer():
    # each query: one relevant document among tied and untied others; RR and P@k of the IR
    # measures against MRR and Hits@k / k of the rank table built from the same scores
    rng = np.random.default_rng(4)
    runs, qrels, optimistic, pessimistic = [], [], [], []
    for query in range(30):
        scores = rng.integers(0, 5, size=12).astype(float)
        answer = int(rng.integers(12))
        runs.append(
            pd.DataFrame({"query_id": f"q{query}", "doc_id": [f"d{i}" for i in range(12)], "score": scores})
        )
        qrels.append(pd.DataFrame({"query_id": [f"q{query}"], "doc_id": [f"d{answer}"], "relevance": [1]}))
        optimistic.append(1 + int(np.sum(scores > scores[answer])))
        pessimistic.append(int(np.sum(scores >= scores[answer])))
    ir = tie_neutral_measures(pd.concat(runs), pd.concat(qrels), ["RR", "P@3"])
    per_query = ir.pivot(index="query_id", columns="measure", values="value")
    order = [f"q{query}" for query in range(30)]
    assert tie_neutral_values(optimistic, pessimistic, "mrr") == pytest.approx(
        per_query.loc[order, "RR"], abs=1e-12
    )
    assert tie_neutral_values(optimistic, pessimistic, "hits@3") / 3 == pytest.approx(
        per_query.loc[order, "P@3"], abs=1e-12
    )
    table = pd.DataFrame(
        {"side": "head", "optimistic": optimistic, "pessimistic": pessimistic, "num_candidates": 12}
    ).assign(realistic=lambda frame: (frame["optimistic"] + frame["pessimistic"]) / 2)
    summary = tie_neutral_table(table, ["mrr"]).set_index("side")
    assert summary.loc["both", "tie_neutral"] == pytest.approx(per_query["RR"].mean(), abs=1e-12)
    assert (
        summary.loc["both", "optimistic"]
        >= summary.loc["both", "tie_neutral"]
        >= summary.loc["both", "pessimistic"]
    )
    assert summary.loc["both", "tied_share"] == pytest.approx(np.mean(np.array(pessimistic) > optimistic))
    with pytest.raises(KgrankInputError, match="side tail: the rank table has no row"):
        tie_neutral_table(table, ["mrr"], side="all")  # a head-only table has no tail


def test_tie_neutral_rank_values_refuse_what_they_cannot_average():
    with pytest.raises(
        KgrankInputError, match="not an arithmetic mean of a rank transformation; tie-neutral"
    ):
        tie_neutral_values([1], [2], "gmr")
    with pytest.raises(KgrankInputError, match="1 <= optimistic <= pessimistic"):
        tie_neutral_values([3], [2], "mrr")
    with pytest.raises(KgrankInputError, match="need whole optimistic and pessimistic ranks"):
        tie_neutral_values([2.5], [2.5], "mrr")


def test_trec_values_refuses_a_query_without_a_level_of_zero_or_more():
    """trec_eval keeps the previous query's number of relevance levels for such a query
    (form_res_rels.c): nDCG read past its buffer and looped for minutes in the test above
    once enough evaluations had run in the process."""
    run = pd.DataFrame(
        {"query_id": ["a", "a", "b", "b"], "doc_id": ["x", "y", "x", "y"], "score": [2.0, 1.0] * 2}
    )
    qrels = pd.DataFrame({"query_id": ["a", "b", "b"], "doc_id": ["x", "x", "y"], "relevance": [1, -1, -1]})
    with pytest.raises(KgrankInputError, match=r"^qrels: query 'b' has no relevance level >= 0") as caught:
        trec_values(run, qrels, ["nDCG"])
    assert "\n" not in str(caught.value)
    judged = qrels.assign(relevance=[1, -1, 0])
    assert trec_values(run, judged, ["nDCG"])["value"].tolist() == [1.0, 0.0]


def test_trec_eval_ap_cut_divides_by_all_relevant():
    # 5 relevant in the qrels, one retrieved at rank 1: map_cut_1 = 1/5, not 1/min(5, 1)
    run, qrels = frames("q", ["a", "b"], [2.0, 1.0], [1, 0], [1, 1, 1, 1])
    assert _by_measure(trec_values(run, qrels, ["AP@1"]))["AP@1"] == 0.2
    assert _by_measure(tie_neutral_measures(run, qrels, ["AP@1"]))["AP@1"] == 0.2


def _tied_pair():
    """Two tied documents, only ``a`` relevant: trec_eval ranks ``b`` first (ids descending)."""
    return frames("q", ["a", "b", "c"], [1.0, 1.0, 0.5], [1, 0, None], [])


def test_renaming_changes_trec_eval_but_not_the_tie_neutral_value():
    run, qrels = _tied_pair()
    swap = {"a": "b", "b": "a", "c": "c"}  # a permutation of the document ids
    renamed_run, renamed_qrels = (
        run.assign(doc_id=run["doc_id"].map(swap)),
        qrels.assign(doc_id=qrels["doc_id"].map(swap)),
    )
    measures = ["nDCG@1", "nDCG@2", "AP@1", "RR", "P@1"]
    before, after = (
        _by_measure(trec_values(run, qrels, measures)),
        _by_measure(trec_values(renamed_run, renamed_qrels, measures)),
    )
    assert (before["nDCG@1"], after["nDCG@1"]) == (0.0, 1.0)
    assert before["nDCG@2"] != after["nDCG@2"] and (before["RR"], after["RR"]) == (0.5, 1.0)
    neutral = tie_neutral_measures(run, qrels, measures)
    pd.testing.assert_frame_equal(neutral, tie_neutral_measures(renamed_run, renamed_qrels, measures))
    # RR = (1 + 1/2) / 2; scipy's hypergeometric pmf is exact to rounding only
    assert _by_measure(neutral)["nDCG@1"] == 0.5 and _by_measure(neutral)["RR"] == pytest.approx(
        0.75, abs=1e-15
    )


@settings(max_examples=40, deadline=None)
@given(query=tied_queries(max_documents=12), seed=st.integers(0, 2**32 - 1))
def test_tie_neutral_ignores_document_names(query, seed):
    scores, run_relevance, unretrieved = query
    doc_ids = [f"d{i}" for i in range(len(scores))]
    run, qrels = frames("q", doc_ids, scores, run_relevance, unretrieved)
    names = pd.unique(pd.concat([run["doc_id"], qrels["doc_id"]]))
    renamed = dict(zip(names, np.random.default_rng(seed).permutation(names), strict=True))
    shuffled_run = run.assign(doc_id=run["doc_id"].map(renamed)).sample(frac=1, random_state=seed % 2**31)
    renamed_qrels = qrels.assign(doc_id=qrels["doc_id"].map(renamed))
    pd.testing.assert_frame_equal(
        tie_neutral_measures(run, qrels, MEASURES),
        tie_neutral_measures(shuffled_run, renamed_qrels, MEASURES),
    )


def test_many_queries_at_once_equal_one_at_a_time():
    generator = np.random.default_rng(7)
    runs, qrels_frames = [], []
    for query in range(25):
        size = int(generator.integers(1, 15))
        run_relevance = [None if level < 0 else int(level) for level in generator.integers(-1, 3, size)]
        scores = generator.integers(0, 4, size).astype(float).tolist()
        run, qrels = frames(f"q{query}", [f"d{i}" for i in range(size)], scores, run_relevance, [1])
        runs.append(run)
        qrels_frames.append(qrels)
    # a qrels query absent from the run and a run query absent from the qrels get no row
    qrels_frames.append(pd.DataFrame({"query_id": ["ghost"], "doc_id": ["d0"], "relevance": [1]}))
    runs.append(pd.DataFrame({"query_id": ["unjudged"], "doc_id": ["d0"], "score": [1.0]}))
    together = tie_neutral_measures(pd.concat(runs), pd.concat(qrels_frames), MEASURES)
    one_by_one = pd.concat(
        [
            tie_neutral_measures(run, qrels, MEASURES)
            for run, qrels in zip(runs[:-1], qrels_frames[:-1], strict=True)
        ]
    )
    key = ["query_id", "measure"]
    pd.testing.assert_frame_equal(
        together.sort_values(key).reset_index(drop=True), one_by_one.sort_values(key).reset_index(drop=True)
    )
    means = mean_over_queries(together).set_index("measure")
    assert (means["num_queries"] == 25).all()
    assert means.loc["nDCG@10", "value"] == pytest.approx(
        together[together["measure"] == "nDCG@10"]["value"].mean(), abs=1e-15
    )


def test_tie_neutral_refuses_bad_input():
    run, qrels = _tied_pair()
    for measure in ("ERR@10", "P", "AP(rel=2)@5", "nDCG(judged_only=True)@5", "not a measure"):
        with pytest.raises(KgrankInputError, match="measure"):
            tie_neutral_measures(run, qrels, [measure])
    with pytest.raises(KgrankInputError, match="twice"):
        tie_neutral_measures(pd.concat([run, run]), qrels, ["RR"])
    with pytest.raises(KgrankInputError, match="NaN"):
        tie_neutral_measures(run.assign(score=[1.0, float("nan"), 0.0]), qrels, ["RR"])
    with pytest.raises(KgrankInputError, match="lacks"):
        tie_neutral_measures(run.drop(columns="score"), qrels, ["RR"])
    with pytest.raises(KgrankInputError, match="no cutoff"):
        trec_values(run, qrels, ["RR@5"])


# ---------------------------------------------------------------------------------------
# 5. trec_eval's sensitivity to document names
# ---------------------------------------------------------------------------------------


def test_trec_tie_sensitivity_sees_tied_queries_only():
    tied_run, tied_qrels = _tied_pair()
    untied_run, untied_qrels = frames("u", ["a", "b", "c"], [3.0, 2.0, 1.0], [0, 1, None], [1])
    run, qrels = pd.concat([tied_run, untied_run]), pd.concat([tied_qrels, untied_qrels])
    measures = ["nDCG@1", "AP@2", "RR"]
    result = trec_tie_sensitivity(run, qrels, measures, num_renamings=20, seed=3)
    per_query = result.per_query.set_index(["query_id", "measure"])
    # the given names rank b (irrelevant) first; 20 renamings swap the pair at least once
    assert per_query.loc[("q", "nDCG@1"), "trec_eval"] == 0.0
    assert per_query.loc[("q", "nDCG@1"), ["minimum", "maximum", "spread"]].tolist() == [0.0, 1.0, 1.0]
    assert per_query.loc[("q", "nDCG@1"), "tie_neutral"] == 0.5
    assert per_query.loc["q", "changed"].all()
    assert not per_query.loc["u", "changed"].any() and (per_query.loc["u", "spread"] == 0).all()
    neutral_untied = _by_measure(tie_neutral_measures(untied_run, untied_qrels, measures))
    for measure in measures:
        assert per_query.loc[("u", measure), "trec_eval"] == neutral_untied[measure]
    per_system = result.per_system.set_index("measure")
    assert per_system.loc["nDCG@1", "changed_share"] == 0.5
    assert per_system.loc["nDCG@1", "spread"] == 0.5  # the mean of two queries moves by 1/2
    assert per_system.loc["nDCG@1", "tie_neutral"] == (0.5 + 0.0) / 2


def test_trec_tie_sensitivity_is_seeded_and_refuses_bad_counts():
    run, qrels = _tied_pair()
    first = trec_tie_sensitivity(run, qrels, ["nDCG@2"], num_renamings=3, seed=11)
    again = trec_tie_sensitivity(run, qrels, ["nDCG@2"], num_renamings=3, seed=11)
    pd.testing.assert_frame_equal(first.per_query, again.per_query)
    with pytest.raises(KgrankInputError, match="num_renamings"):
        trec_tie_sensitivity(run, qrels, ["nDCG@2"], num_renamings=0, seed=0)


def test_the_rank_engine_ranks_with_a_tie_tolerance():
    # compute_ranks(tolerance=) is ranks_with_tolerance on every block of the one loop;
    # exact is the engine's own ranking; sampled candidates take no tolerance
    from kgrank.engine.candidates import KnownAnswers
    from kgrank.engine.ranks import compute_ranks
    from kgrank.engine.ties import parse_tolerance

    rng = np.random.default_rng(5)
    entities, relations = 9, 2
    test = np.stack(
        [rng.integers(entities, size=12), rng.integers(relations, size=12), rng.integers(entities, size=12)],
        axis=1,
    )
    known = KnownAnswers([test], entities, relations)
    # scores on a coarse grid plus noise below the tolerance: many near ties
    table = torch.as_tensor(
        rng.integers(0, 4, size=(entities, relations, entities))
        + rng.random((entities, relations, entities)) * 1e-3,
        dtype=torch.float64,
    )

    def score(batch: torch.Tensor, side: str) -> torch.Tensor:
        batch = np.asarray(batch)
        return (
            table[batch[:, 0], batch[:, 1]].clone()
            if side == "tail"
            else table[:, batch[:, 1], batch[:, 2]].T.clone()
        )

    tolerance = parse_tolerance("absolute:0.01")
    ranks = compute_ranks(score, test, known, batch_size=5, progress=False, tolerance=tolerance)
    exact = compute_ranks(score, test, known, batch_size=5, progress=False)
    for row in ranks.itertuples():
        batch = test[row.triple_id][None, :]
        rows, columns = known.answers(row.side, batch)
        true = torch.as_tensor(batch[:, 0] if row.side == "head" else batch[:, 2])
        expected = ranks_with_tolerance(
            score(torch.as_tensor(batch), row.side).float(), true, rows, columns, absolute=0.01
        )
        assert (row.optimistic, row.pessimistic) == (expected["optimistic"][0], expected["pessimistic"][0])
    assert (ranks["pessimistic"] >= exact["pessimistic"]).all() and (
        ranks["optimistic"] <= exact["optimistic"]
    ).all()
    assert (ranks["pessimistic"] > exact["pessimistic"]).any()
    same = compute_ranks(score, test, known, batch_size=5, progress=False, tolerance=parse_tolerance("exact"))
    pd.testing.assert_frame_equal(same, exact)
    with pytest.raises(KgrankInputError, match="a tie tolerance with sampled candidates"):
        compute_ranks(score, test, known, progress=False, tolerance=tolerance, sampled_candidates=3)
