"""Stability: Kendall's tau between the systems' ranking on a whole evaluation set and on
random subsets of its test answers (its micro rows), for several subset fractions with
seeded repetitions, micro vs macro vs macro-pykeen.

One draw of a subset serves every system (the comparison is paired). On a subset:

- micro: the mean of the sampled answers' values, moments as for the whole set;
- macro: per query, its best relevant answer among the sampled ones (the smallest
  realistic micro rank) with R_sub = the number of its sampled answers as relevant ones;
  moments from :func:`kgrank.evaluation.moments.best_rank_moments`. Queries without a sampled answer
  drop out;
- macro-pykeen: per query the mean over its sampled answers, then the mean over queries;
- AP@20 and nDCG@20 (macro): from the answers' positions in the run list.

What becomes of the discarded (unsampled) answers is the protocol's filter applied to the
subset as the evaluated set. Zhou et al. (Section 5, "Data Sensitivity") discard test
triples at random and evaluate on what remains; their filter (Section 2) is train + valid
+ the evaluated set's own answers, so under `paper` a discarded answer is no longer
filtered: it is an unlabelled negative, a candidate like any other (the paper does not
say so in its stability section; it is its Section 2 applied to the subset). Under
`all-known` every test answer is known and stays filtered. Hence:

- `all-known`: every micro rank is unchanged; a query keeps its M = num_candidates - 1
  (micro rows) non-relevant candidates; a sampled answer moves up in the run list by the
  discarded relevant answers of its query above it (they leave the list);
- `paper`: a sampled answer's realistic rank rises by the discarded answers of its query
  scored above it and by half of those tied with it (the item table's ``relevant_above``,
  its competition rank among the query's relevant answers), its candidates by the D_q
  discarded answers of its query (micro moments from N + D_q), the query's macro
  candidates are M + D_q, and the run list keeps every entry at its place, the discarded
  answers now non-relevant.

The reference ranking is computed by the same code on the whole set (every answer
sampled), so a fraction of 1 gives tau = 1 exactly. Every subset's expectation and
variance are common to all systems, so the adjusted index and the z-score rank the
systems like the raw value: their tau equals the raw tau (reported to show it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from kgrank.errors import KgrankInputError
from kgrank.evaluation import moments as mom
from kgrank.evaluation.metrics import IDENTITY, Variant, derive, lookup
from kgrank.evaluation.stats import kendall_tau_b_rows, seed_stream
from kgrank.studies.ir.aggregate import IR_METRICS, check_aligned, metric_keys
from kgrank.studies.ir.settings import ALL_KNOWN, PAPER, PROTOCOLS

CUTOFF = 20
RANK_COLUMN = "arithmetic_mean_rank"  # f(r) = r: the micro rows' realistic rank itself
# what a tau is of: the summary is grouped by these
STABILITY_KEYS = ("protocol", "dataset", "evaluation", "averaging", "metric", "variant", "fraction")
STABILITY_COLUMNS = (*STABILITY_KEYS, "repetition", "tau")
STABILITY_SUMMARY_COLUMNS = (*STABILITY_KEYS, "repetitions", "defined", "mean_tau", "tau_p05", "tau_p95")


def _sum_per_query(
    values: np.ndarray, starts: np.ndarray, present: np.ndarray, num_queries: int
) -> np.ndarray:
    """(subsets, num_queries) sums of ``values``' columns over each query's rows (queries
    without rows: 0); reduceat over the non-empty groups only, as it mishandles empty ones."""
    sums = np.zeros((values.shape[0], num_queries))
    if starts.size:
        sums[:, present] = np.add.reduceat(values, starts, axis=1)
    return sums


def subset_ap_ndcg(
    positions: np.ndarray,
    sampled: np.ndarray,
    query: np.ndarray,
    num_queries: int,
    num_sampled: np.ndarray | None = None,
    cutoff: int = CUTOFF,
    *,
    discarded_leave: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per subset and query, AP@cutoff and nDCG@cutoff of the sampled relevant answers.

    ``positions``: the answers' 1-based positions in their query's run list; ``query``:
    their query (0..num_queries-1), rows grouped by query and sorted by position within a
    query; ``sampled``: (subsets, answers) 0/1. An unsampled relevant answer leaves the run
    list of the subset's query (it is neither relevant nor a candidate), so every sampled
    answer below it moves up one place. ``num_sampled`` (subsets, queries) gives R_sub
    when the rows are only the top of each query's answers (those that can reach the
    cut-off); by default it is counted from the rows. With ``discarded_leave`` False (the
    paper protocol) an unsampled answer stays in the list as a non-relevant entry and no
    answer moves. Returns (AP, nDCG, R_sub), each (subsets, queries); AP and nDCG are NaN
    where R_sub = 0.

    trec_eval's map_cut / ndcg_cut (ir-measures) compute the same on an exported run, but
    a run per subset is thousands of runs; here the subset's positions follow from the
    full run's in closed form: a sampled answer's new position is its position minus the
    unsampled answers of its query ranked above it, the sampled answers at or above it
    are its rank among the sampled ones, AP@k = (1/R_sub) sum over sampled answers at
    new position <= k of (sampled at or above it) / position, and nDCG@k = sum of
    1/log2(1 + position) over those, divided by the ideal sum over 1..min(R_sub, k).
    """
    positions = np.asarray(positions, dtype=float)
    sampled = np.atleast_2d(np.asarray(sampled, dtype=float))
    query = np.asarray(query)
    starts = np.flatnonzero(np.r_[True, query[1:] != query[:-1]]) if query.size else query.astype(int)
    present = query[starts]
    group_sizes = np.diff(np.append(starts, positions.size))
    # 0-based place of each answer among its query's answers (sorted by position)
    place = np.arange(positions.size) - np.repeat(starts, group_sizes)
    running = np.cumsum(sampled, axis=1)
    before_group = (running - sampled)[:, starts]
    sampled_at_or_above = running - np.repeat(before_group, group_sizes, axis=1)
    unsampled_above = place + 1 - sampled_at_or_above
    new_position = (
        positions - unsampled_above if discarded_leave else np.broadcast_to(positions, sampled.shape)
    )
    inside = (sampled > 0) & (new_position <= cutoff)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision_terms = np.where(inside, sampled_at_or_above / new_position, 0.0)
        gain_terms = np.where(inside, 1.0 / np.log2(1.0 + new_position), 0.0)
    if num_sampled is None:
        num_sampled = _sum_per_query(sampled, starts, present, num_queries)
    ideal = np.concatenate([[0.0], np.cumsum(1.0 / np.log2(1.0 + np.arange(1, cutoff + 1)))])
    empty = num_sampled == 0
    denominator = np.where(empty, 1.0, num_sampled)
    average_precision = _sum_per_query(precision_terms, starts, present, num_queries) / denominator
    ndcg = _sum_per_query(gain_terms, starts, present, num_queries) / np.where(
        empty, 1.0, ideal[np.minimum(num_sampled, cutoff).astype(int)]
    )
    return np.where(empty, np.nan, average_precision), np.where(empty, np.nan, ndcg), num_sampled


@dataclass(frozen=True)
class MicroRows:
    """One evaluation's micro rows in query order, with what every subset needs."""

    query_order: np.ndarray  # row indices of the micro rows, grouped by query
    group_starts: np.ndarray  # first row of each query in that order
    num_other: np.ndarray  # per query: M, its non-relevant candidates
    place_orders: dict[str, np.ndarray]  # per system: permutation of query_order by position
    metrics: list[str]  # metrics with moments

    @property
    def group_sizes(self) -> np.ndarray:
        """The number of micro rows (relevant answers) of each query."""
        return np.diff(np.append(self.group_starts, self.query_order.size))


def micro_rows(items_by_system: Mapping[str, pd.DataFrame], evaluation: str) -> tuple[MicroRows, dict]:
    systems = list(items_by_system)
    reference = items_by_system[systems[0]]
    micro = np.flatnonzero(
        ((reference["evaluation"] == evaluation) & (reference["averaging"] == "micro")).to_numpy()
    )
    if not micro.size:
        raise KgrankInputError(
            f"item tables: no micro rows of evaluation {evaluation!r}; evaluate the systems on it first"
        )
    rows = reference.iloc[micro]
    query = rows["query"].to_numpy()
    order = np.argsort(query, kind="stable")
    sorted_query = query[order]
    group_starts = np.flatnonzero(np.r_[True, sorted_query[1:] != sorted_query[:-1]])
    num_other = rows["num_candidates"].to_numpy()[order][group_starts] - 1
    place_orders = {}
    tables = {}
    for system in systems:
        table = items_by_system[system].iloc[micro]
        tables[system] = table
        # within a query, the system's own order of its answers in the run list
        place_orders[system] = np.lexsort((table["position"].to_numpy()[order], sorted_query))
    with_moments = [key for key in metric_keys(rows) if key not in IR_METRICS]
    return MicroRows(order, group_starts, num_other, place_orders, with_moments), tables


def best_rank_closed_form(metric: str, num_other: np.ndarray, num_relevant: np.ndarray) -> tuple | None:
    """E[f(K)] and E[f(K)^2] of the best rank K of R relevant among M + R in random order,
    in closed form where there is one (MR and Hits@k), else None.

    best_rank_moments sums over the M + 1 possible ranks of every distinct (M, R), about a
    second per thousand pairs at FB15k-237's M, and a stability run needs every R_sub = 1..R
    of every query (~40k pairs on FB-Test-O) for each metric. The negative hypergeometric
    has closed forms for these two: E[K] = (M + R + 1) / (R + 1),
    Var[K] = M R (M + R + 1) / ((R + 1)^2 (R + 2)) and
    P(K <= k) = 1 - prod_{j<k} (M - j) / (M + R - j); the test checks them against
    best_rank_moments.
    """
    definition = lookup(metric).metric
    other = np.asarray(num_other, dtype=float)
    relevant = np.asarray(num_relevant, dtype=float)
    if definition.transform is IDENTITY:
        first = (other + relevant + 1.0) / (relevant + 1.0)
        variance = other * relevant * (other + relevant + 1.0) / ((relevant + 1.0) ** 2 * (relevant + 2.0))
        return first, variance + first * first
    if definition.key == f"hits_at_{definition.parameters.get('k', 0):g}":
        none_in_top = np.ones_like(other)
        for j in range(int(definition.parameters["k"])):
            # once the others run out (j >= M) the top k holds a relevant item for certain
            left = np.maximum(other - j, 0.0)
            none_in_top *= left / np.where(left > 0, other + relevant - j, 1.0)
        probability = 1.0 - none_in_top
        return probability, probability  # an indicator equals its square
    return None


def best_rank_tables(
    rows: MicroRows, metrics: Sequence[str], *, discarded_are_candidates: bool = False
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per metric, E[f(K)] and Var[f(K)] of every query for every possible R_sub = 1..R,
    laid out so that query q with R_sub sampled answers is entry group_starts[q] + R_sub - 1.
    R_sub = 1 is the uniform case (the transform's own task moments on 1..M+1); larger
    R_sub from the closed forms or kgrank.evaluation.moments.best_rank_moments. With
    ``discarded_are_candidates`` (the paper protocol) the R - R_sub discarded answers join
    the M non-relevant candidates."""
    group_sizes = rows.group_sizes
    num_other = np.repeat(rows.num_other, group_sizes)
    num_relevant = np.arange(rows.query_order.size) - np.repeat(rows.group_starts, group_sizes) + 1
    if discarded_are_candidates:
        num_other = num_other + np.repeat(group_sizes, group_sizes) - num_relevant
    single = num_relevant == 1
    tables = {}
    for metric in metrics:
        transform = lookup(metric).metric.transform
        first = np.empty(num_other.size)
        second = np.empty(num_other.size)
        first[single], second[single] = transform.task_moments(num_other[single] + 1)
        several = ~single
        if several.any():
            closed = best_rank_closed_form(metric, num_other[several], num_relevant[several])
            if closed is None:
                closed = mom.best_rank_moments(transform.function, num_other[several], num_relevant[several])
            first[several], second[several] = closed
        tables[metric] = (first, np.maximum(second - first * first, 0.0))
    return tables


def _variants(metric: str, values: np.ndarray, expectation: np.ndarray, variance: np.ndarray) -> dict:
    """Raw, adjusted index and z-score of (subsets, systems) values with per-subset moments;
    z-score left out where the variance is unknown (macro-pykeen)."""
    result = {"raw": values}
    if metric in IR_METRICS:
        return result
    definition = lookup(metric).metric
    known = np.isfinite(variance)
    # the adjusted index needs the expectation only: where the variance is unknown it
    # comes from derive's no-variance case, and the z-score is left NaN
    with_variance = derive(definition, values, expectation[:, None], variance[:, None])
    without_variance = derive(definition, values, expectation[:, None], None)
    index = np.where(
        known[:, None], with_variance[Variant.INDEX].value, without_variance[Variant.INDEX].value
    )
    z_score = np.where(known[:, None], with_variance[Variant.Z_SCORE].value, np.nan)
    result["adjusted index"] = index
    if np.isfinite(variance).all():
        result["z-score"] = z_score
    return result


def overtaking_discarded(rows: MicroRows, relevant_above: np.ndarray, sampled: np.ndarray) -> np.ndarray:
    """(subsets, micro rows, table order): per answer, the discarded answers of its query
    scored above it plus half of those tied with it, what its realistic rank rises by when
    they become candidates (the paper protocol).

    ``relevant_above`` (table order) is each answer's competition rank among its query's
    relevant answers (0 = none above; equal scores share it), so with the answers of a
    query sorted by it, those above an answer are the ones before its tie group and those
    tied with it are the rest of the group; prefix sums of the discarded indicator give both.
    """
    sampled = np.atleast_2d(np.asarray(sampled, dtype=float))
    group_sizes = rows.group_sizes
    query = np.repeat(np.arange(rows.group_starts.size), group_sizes)
    tier = np.asarray(relevant_above)[rows.query_order]
    order = np.lexsort((tier, query))  # query stays sorted: each query keeps its slots
    sorted_query, sorted_tier = query[order], tier[order]
    new_tie = np.r_[True, (sorted_query[1:] != sorted_query[:-1]) | (sorted_tier[1:] != sorted_tier[:-1])]
    tie_starts = np.flatnonzero(new_tie)
    tie_ends = np.append(tie_starts[1:], order.size)
    tie = np.cumsum(new_tie) - 1
    discarded = 1.0 - sampled[:, rows.query_order[order]]
    before = np.concatenate([np.zeros((len(sampled), 1)), np.cumsum(discarded, axis=1)], axis=1)
    above = before[:, tie_starts[tie]] - before[:, rows.group_starts[sorted_query]]
    tied = before[:, tie_ends[tie]] - before[:, tie_starts[tie]] - discarded
    shift = np.empty_like(discarded)
    shift[:, rows.query_order[order]] = above + 0.5 * tied
    return shift


def subset_values(
    rows: MicroRows,
    tables: Mapping[str, pd.DataFrame],
    sampled: np.ndarray,
    best_rank: Mapping,
    *,
    discarded_are_candidates: bool = False,
) -> dict[tuple[str, str], dict[str, np.ndarray]]:
    """Per (averaging, metric), the variants' values (subsets, systems) on the subsets
    ``sampled`` ((subsets, micro rows) 0/1, in the micro rows' table order); the discarded
    answers filtered (`all-known`) or, with ``discarded_are_candidates``, unlabelled
    candidates (`paper`; ``best_rank`` must then come from best_rank_tables with the same
    flag)."""
    systems = list(tables)
    sampled = np.atleast_2d(np.asarray(sampled, dtype=float))
    in_query_order = sampled[:, rows.query_order]
    num_sampled = sampled.sum(axis=1)
    per_query = np.add.reduceat(in_query_order, rows.group_starts, axis=1)
    has_answer = per_query > 0
    group_sizes = rows.group_sizes
    reference_table = tables[systems[0]]
    # per system the realistic ranks (subsets, rows) of every answer on each subset, and
    # per row the candidate count N (+ D_q) its micro moments take
    base_ranks = {system: tables[system][RANK_COLUMN].to_numpy(dtype=float) for system in systems}
    num_candidates = reference_table["num_candidates"].to_numpy(dtype=float)[None, :]
    if discarded_are_candidates:
        discarded = np.empty_like(sampled)
        discarded[:, rows.query_order] = np.repeat(group_sizes[None, :] - per_query, group_sizes, axis=1)
        num_candidates = num_candidates + discarded
        subset_ranks = {
            system: base_ranks[system][None, :]
            + overtaking_discarded(rows, tables[system]["relevant_above"].to_numpy(), sampled)
            for system in systems
        }
    else:
        subset_ranks = {system: np.broadcast_to(base_ranks[system], sampled.shape) for system in systems}
    num_queries = has_answer.sum(axis=1)
    lookup_row = rows.group_starts[None, :] + np.maximum(per_query, 1).astype(int) - 1
    # macro-pykeen weights: 1 / R_sub for each sampled answer, in table order
    share = np.where(has_answer, 1.0 / np.maximum(per_query, 1), 0.0)
    answer_share = np.repeat(share, group_sizes, axis=1)
    weights = np.zeros_like(sampled)
    weights[:, rows.query_order] = in_query_order * answer_share
    # per system, (subsets, queries): the smallest realistic rank among the sampled answers
    # (1 where the query has none: masked out by has_answer, and finite for every transform)
    best_ranks = []
    for system in systems:
        ranks = subset_ranks[system][:, rows.query_order]
        best = np.minimum.reduceat(np.where(in_query_order > 0, ranks, np.inf), rows.group_starts, axis=1)
        best_ranks.append(np.where(has_answer, best, 1.0))
    result = {}
    for metric in rows.metrics:
        transform = lookup(metric).metric.transform
        if discarded_are_candidates:
            # the task moments of each distinct N + D_q (element-wise: the same numbers as
            # on the whole (subsets, rows) array, which repeats a few hundred N many times)
            sizes, size_of = np.unique(num_candidates, return_inverse=True)
            first, second = (
                moment[size_of].reshape(num_candidates.shape) for moment in transform.task_moments(sizes)
            )
            expectations, variances = first, np.maximum(second - first * first, 0.0)
            # (subsets, systems): the sums over each subset's rows of f(the subset's rank)
            micro_sums = np.column_stack(
                [(sampled * transform.function(subset_ranks[system])).sum(axis=1) for system in systems]
            )
            pykeen_sums = np.column_stack(
                [(weights * transform.function(subset_ranks[system])).sum(axis=1) for system in systems]
            )
        else:
            expectations = reference_table[f"{metric}_expectation"].to_numpy(dtype=float)[None, :]
            variances = reference_table[f"{metric}_variance"].to_numpy(dtype=float)[None, :]
            values = np.column_stack([tables[system][metric].to_numpy(dtype=float) for system in systems])
            micro_sums, pykeen_sums = sampled @ values, weights @ values
        # micro: the mean over the sampled answers
        micro = micro_sums / num_sampled[:, None]
        result["micro", metric] = _variants(
            metric,
            micro,
            (sampled * expectations).sum(axis=1) / num_sampled,
            (sampled * variances).sum(axis=1) / num_sampled**2,
        )
        # macro-pykeen: per query the mean over its sampled answers, then over the queries
        pykeen = pykeen_sums / num_queries[:, None]
        result["macro-pykeen", metric] = _variants(
            metric, pykeen, (weights * expectations).sum(axis=1) / num_queries, np.full(len(sampled), np.nan)
        )
        # macro: f of the best sampled rank per query, moments from the best-rank tables
        transform = transform.function
        first, variance = best_rank[metric]
        macro = np.column_stack(
            [np.where(has_answer, transform(best), 0.0).sum(axis=1) / num_queries for best in best_ranks]
        )
        expectation = np.where(has_answer, first[lookup_row], 0.0).sum(axis=1) / num_queries
        macro_variance = np.where(has_answer, variance[lookup_row], 0.0).sum(axis=1) / num_queries**2
        result["macro", metric] = _variants(metric, macro, expectation, macro_variance)
    if all(key in reference_table.columns for key in IR_METRICS):
        query = np.repeat(np.arange(rows.group_starts.size), group_sizes)
        place = np.arange(query.size) - np.repeat(rows.group_starts, group_sizes)
        ap = np.empty((len(sampled), len(systems)))
        ndcg = np.empty_like(ap)
        for column, system in enumerate(systems):
            order = rows.place_orders[system]
            positions = tables[system]["position"].to_numpy(dtype=float)[rows.query_order][order]
            # position - place = 1 + the non-relevant candidates above the answer, a lower
            # bound of its position in any subset: answers beyond the cut-off never count,
            # and they are below every answer that does (a prefix of each query is kept)
            top = positions - place <= CUTOFF
            average_precision, gain, _ = subset_ap_ndcg(
                positions[top],
                in_query_order[:, order[top]],
                query[top],
                rows.group_starts.size,
                num_sampled=per_query,
                discarded_leave=not discarded_are_candidates,
            )
            ap[:, column] = np.nansum(average_precision, axis=1) / num_queries
            ndcg[:, column] = np.nansum(gain, axis=1) / num_queries
        result["macro", "ap_at_20"] = {"raw": ap}
        result["macro", "ndcg_at_20"] = {"raw": ndcg}
    return result


def draw_subsets(num_rows: int, fraction: float, repetitions: int, seed: int) -> np.ndarray:
    """(repetitions, num_rows) 0/1: each row a uniform subset of round(fraction n) rows (at
    least 1), from kgrank.evaluation.stats.seed_stream(seed, fraction in millionths, repetition)
    so that a draw does not depend on which other fractions are run."""
    size = min(num_rows, max(1, round(fraction * num_rows)))
    sampled = np.zeros((repetitions, num_rows))
    for repetition in range(repetitions):
        generator = seed_stream(seed, round(fraction * 1_000_000), repetition)
        sampled[repetition, generator.choice(num_rows, size=size, replace=False)] = 1.0
    return sampled


def stability(
    items_by_system: Mapping[str, pd.DataFrame],
    evaluations: Sequence[str],
    *,
    fractions: Sequence[float],
    repetitions: int,
    seed: int,
    dataset: str = "",
    protocol: str = ALL_KNOWN,
) -> pd.DataFrame:
    """Tau between the whole-set ranking and each subset's, as a tidy table with the
    columns STABILITY_COLUMNS (one row per evaluation, averaging, metric, variant,
    fraction and repetition); ``dataset`` fills the dataset column, so that tables of
    several datasets (each with its own `test` evaluation) can be stacked. ``protocol``
    names the protocol of the item tables, which decides what the discarded answers
    become (the module's docstring); the same draws serve every protocol."""
    if protocol not in PROTOCOLS:
        raise KgrankInputError(f"stability: protocol {protocol!r} is not one of {', '.join(PROTOCOLS)}")
    candidates = protocol == PAPER
    check_aligned(items_by_system)
    for fraction in fractions:
        if not 0 < fraction <= 1:
            raise KgrankInputError(
                f"stability: fraction {fraction} is not in (0, 1]; give fractions of the test set"
            )
    # the table's columns, one block of repetitions per (evaluation, fraction, averaging,
    # metric, variant): a DataFrame per block cost more than the taus
    blocks: list[tuple[tuple[str, str, str, str, float], np.ndarray]] = []
    for evaluation in evaluations:
        rows, tables = micro_rows(items_by_system, evaluation)
        best_rank = best_rank_tables(rows, rows.metrics, discarded_are_candidates=candidates)
        num_rows = rows.query_order.size
        whole = subset_values(
            rows, tables, np.ones((1, num_rows)), best_rank, discarded_are_candidates=candidates
        )
        for fraction in fractions:
            sampled = draw_subsets(num_rows, fraction, repetitions, seed)
            values = subset_values(rows, tables, sampled, best_rank, discarded_are_candidates=candidates)
            for (averaging, metric), variants in values.items():
                for variant, values in variants.items():
                    tau = kendall_tau_b_rows(whole[averaging, metric][variant][0], values)
                    blocks.append(((evaluation, averaging, metric, variant, fraction), tau))
    if not blocks:
        return pd.DataFrame(columns=list(STABILITY_COLUMNS))
    keys = [key for key, tau in blocks for _ in range(len(tau))]
    evaluation_of, averaging_of, metric_of, variant_of, fraction_of = zip(*keys, strict=True)
    return pd.DataFrame(
        {
            "protocol": protocol,
            "dataset": dataset,
            "evaluation": evaluation_of,
            "averaging": averaging_of,
            "metric": metric_of,
            "variant": variant_of,
            "fraction": np.asarray(fraction_of, dtype=float),
            "repetition": np.tile(np.arange(repetitions), len(blocks)),
            "tau": np.concatenate([tau for _, tau in blocks]),
        }
    )[list(STABILITY_COLUMNS)]


def stability_summary(taus: pd.DataFrame) -> pd.DataFrame:
    """Mean tau and its 5th and 95th percentiles over the repetitions, per protocol, dataset,
    evaluation, averaging, metric, variant and fraction (columns STABILITY_SUMMARY_COLUMNS)."""
    grouped = taus.groupby(list(STABILITY_KEYS), sort=False)["tau"]
    summary = grouped.agg(
        repetitions="size",
        # tau is undefined where a subset ties every system (a share of 1 % and Hits@1):
        # the mean is over the defined ones, so say how many there are
        defined="count",
        mean_tau="mean",
    ).reset_index()
    summary["tau_p05"], summary["tau_p95"] = _percentiles(taus["tau"].to_numpy(), grouped.ngroup().to_numpy())
    return summary[list(STABILITY_SUMMARY_COLUMNS)]


def _percentiles(tau: np.ndarray, group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 5th and 95th percentiles of the defined taus of each group (0..n-1), NaN where
    none is: Series.quantile's numbers (numpy's percentile, linear), taken in one pass
    instead of a pandas call per group. Written here because pandas' grouped quantile,
    which would do it in one call, differs from Series.quantile in the last digit (26 of
    600 random groups) and would change the published table."""
    order = np.argsort(group, kind="stable")
    bounds = np.searchsorted(group[order], np.arange(group.max() + 2 if group.size else 1))
    percentiles = np.full((len(bounds) - 1, 2), np.nan)
    for number, (start, end) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        defined = tau[order[start:end]]
        defined = defined[~np.isnan(defined)]
        if defined.size:
            # the quantiles as percentages, as pandas passes them to numpy
            percentiles[number] = np.percentile(defined, np.array([0.05, 0.95]) * 100.0, method="linear")
    return percentiles[:, 0], percentiles[:, 1]
