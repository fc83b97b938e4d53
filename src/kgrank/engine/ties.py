"""Tied scores in rank-based evaluation: how wide the tie blocks are, a tolerance deciding
when two scores tie, stress scorers that make ties on purpose, and tie-neutral IR measures.

Why ties matter. Link prediction reports optimistic, pessimistic and realistic ranks, so a
tie block is visible as the rank width ``pessimistic - optimistic`` (PyKEEN PR 851 asks for
it as a tie indicator). Scores that differ only by floating-point noise do not tie exactly,
which let a degenerate model reach MRR 0.723 on WN18RR in LibKGE (kge issue 221); a tie
tolerance (:func:`ranks_with_tolerance`) makes such near-ties count as ties. trec_eval
breaks score ties by document id (descending strcmp of docno), so two runs that differ only
in entity names get different nDCG (trec_eval issue 22, ir-measures issue 18);
:func:`tie_neutral_measures` gives the expected value of AP@k, nDCG@k, RR and P@k over the
uniformly random orders of every tie group instead (McSherry & Najork, ECIR 2008), computed
exactly from the group sizes, and :func:`trec_tie_sensitivity` measures how far trec_eval's
own values move when the documents are renamed. For a rank table, where each task has one
true answer, :func:`tie_neutral_values` gives the same expectation of MRR, Hits@k or MR from
the optimistic and pessimistic ranks alone.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import ir_measures
import numpy as np
import pandas as pd
from scipy.stats import nhypergeom

from kgrank.data.rank_table import SIDES_AND_BOTH, select_side
from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import Metric, lookup, mean_metric
from kgrank.evaluation.stats import seed_stream

if TYPE_CHECKING:
    import torch

# --- 1. Rank width -----------------------------------------------------------------------

RANK_WIDTH_COLUMNS = ("side", "num_tasks", "mean_width", "tied_share", "max_width")


def rank_widths(table: pd.DataFrame) -> np.ndarray:
    """The width ``pessimistic - optimistic`` of every task of a rank table: 0 when no
    candidate ties with the true answer, else the number of candidates tied with it."""
    missing = [column for column in ("optimistic", "pessimistic") if column not in table.columns]
    if missing:
        raise KgrankInputError(
            f"rank table lacks column(s) {missing}; "
            "pass a kgrank rank table with optimistic and pessimistic ranks"
        )
    width = table["pessimistic"].to_numpy() - table["optimistic"].to_numpy()
    if (width < 0).any():
        row = int(np.flatnonzero(width < 0)[0])
        raise KgrankInputError(
            f"rank table row {row}: pessimistic rank {table['pessimistic'].iloc[row]} is below "
            f"the optimistic {table['optimistic'].iloc[row]}; recompute the ranks"
        )
    return width


def rank_width_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Mean rank width, share of tasks with a tie (width > 0) and the largest width, per
    side present in the table and for both sides together (columns RANK_WIDTH_COLUMNS)."""
    if "side" not in table.columns:
        raise KgrankInputError("rank table lacks the column 'side'; pass a kgrank rank table")
    present = set(table["side"].unique())
    rows = []
    for side in SIDES_AND_BOTH:
        if side != "both" and side not in present:
            continue
        width = rank_widths(select_side(table, side))
        if len(width) == 0:
            raise KgrankInputError("rank table has no rows; rerun `kgrank ranks`")
        rows.append(
            {
                "side": side,
                "num_tasks": len(width),
                "mean_width": float(width.mean()),
                "tied_share": float((width > 0).mean()),
                "max_width": int(width.max()),
            }
        )
    return pd.DataFrame(rows, columns=list(RANK_WIDTH_COLUMNS))


TIE_NEUTRAL_RANK_COLUMNS = (
    "side",
    "metric",
    "label",
    "optimistic",
    "realistic",
    "pessimistic",
    "tie_neutral",
    "tied_share",
)


def tie_neutral_values(optimistic: object, pessimistic: object, metric: str | Metric) -> np.ndarray:
    """Per task, the expected f(r) of an arithmetic-mean metric (MRR, Hits@k, MR) over the
    uniformly random orders of the candidates tied with the true answer, whose rank is then
    uniform on [optimistic, pessimistic]: McSherry & Najork's tie-neutral value for one
    relevant answer (the realistic rank is the mean rank, not the mean of f). Exact: the
    mean of f over the block, from the cumulative sums of f(1), f(2), ... (an untied task
    takes f of its rank directly)."""
    chosen = mean_metric(metric, "tie-neutral values")
    given = [np.asarray(ranks, dtype=float).reshape(-1) for ranks in (optimistic, pessimistic)]
    if any((values != np.round(values)).any() for values in given):
        raise KgrankInputError(
            "tie-neutral values need whole optimistic and pessimistic ranks (a realistic rank such as 2.5 "
            "does not say the tie's width); give both"
        )
    low, high = (values.astype(np.int64) for values in given)
    if low.shape != high.shape or low.size == 0 or (low < 1).any() or (high < low).any():
        raise KgrankInputError(
            "tie-neutral values need one optimistic and one pessimistic rank per task, "
            "1 <= optimistic <= pessimistic; recompute the ranks"
        )
    function = chosen.transform.function
    cumulative = np.concatenate([[0.0], np.cumsum(function(np.arange(1, int(high.max()) + 1, dtype=float)))])
    tied = high > low
    values = function(low.astype(float))
    values[tied] = (cumulative[high[tied]] - cumulative[low[tied] - 1]) / (high[tied] - low[tied] + 1)
    return values


def tie_neutral_table(
    table: pd.DataFrame, metrics: Iterable[str] = ("mrr", "hits@1", "hits@3", "hits@10"), side: str = "both"
) -> pd.DataFrame:
    """Each metric of a rank table under the optimistic, realistic and pessimistic ranks
    and tie-neutrally (:func:`tie_neutral_values`, averaged over the tasks), with the share
    of tasks tied, per side (``both``, ``head``, ``tail`` or ``all``: the three); columns
    TIE_NEUTRAL_RANK_COLUMNS. How much the choice of tie rule moves a value."""
    sides = ("both", "head", "tail") if side == "all" else (side,)
    rows = []
    for which in sides:
        subset = select_side(table, which)
        if subset.empty:
            raise KgrankInputError(f"side {which}: the rank table has no row of this side; pick another side")
        optimistic, pessimistic = subset["optimistic"].to_numpy(), subset["pessimistic"].to_numpy()
        tied_share = float(np.mean(rank_widths(subset) > 0))
        for name in metrics:
            named = lookup(name)
            metric = mean_metric(named.metric, "tie-neutral values")
            rows.append(
                {
                    "side": which,
                    "metric": metric.key,
                    "label": named.label,
                    **{
                        rank_type: float(metric.value(subset[rank_type].to_numpy(dtype=float)))
                        for rank_type in ("optimistic", "realistic", "pessimistic")
                    },
                    "tie_neutral": float(np.mean(tie_neutral_values(optimistic, pessimistic, metric))),
                    "tied_share": tied_share,
                }
            )
    return pd.DataFrame(rows, columns=list(TIE_NEUTRAL_RANK_COLUMNS))


# --- 2. Tie tolerance --------------------------------------------------------------------


def _check_tolerance(absolute: float, relative: float) -> None:
    for name, value in (("absolute", absolute), ("relative", relative)):
        if not (np.isfinite(value) and value >= 0):
            raise KgrankInputError(
                f"{name} tie tolerance {value!r} must be finite and >= 0; pass e.g. 0 or 1e-6"
            )


def tie_mask(
    candidates: torch.Tensor, true_scores: torch.Tensor, absolute: float = 0.0, relative: float = 0.0
) -> torch.Tensor:
    """Which candidate scores tie with the true score (broadcast): equal, or both finite and
    ``|c - s| <= max(absolute, relative * max(|c|, |s|))``.

    These are the semantics of Python's ``math.isclose`` (PEP 485), not of ``numpy.isclose``
    (``|c - s| <= atol + rtol * |s|``): numpy's test is asymmetric, so whether a candidate
    ties would depend on which of the two is the true answer, and it adds the two
    tolerances; a tie should be a symmetric relation with each tolerance meaning what it
    says on its own. Infinities tie only with themselves (as in ``math.isclose``), NaN
    (filtered candidates) with nothing. The comparison runs in float64, so a float32 block
    gives the same answer as ``math.isclose`` on its values.
    """
    import torch  # here: the rank-width and IR functions need no torch

    _check_tolerance(absolute, relative)
    exact = candidates == true_scores
    candidates, true_scores = candidates.double(), true_scores.double()
    bound = torch.clamp(relative * torch.maximum(candidates.abs(), true_scores.abs()), min=absolute)
    both_finite = torch.isfinite(candidates) & torch.isfinite(true_scores)
    return exact | (both_finite & ((candidates - true_scores).abs() <= bound))


EXACT = "exact"
TOLERANCE_KINDS = ("absolute", "relative")


@dataclass(frozen=True)
class Tolerance:
    """When two scores tie: ``exact`` (equality), or ``absolute:<a>`` / ``relative:<r>``
    (math.isclose's abs_tol / rel_tol, see :func:`kgrank.engine.ties.tie_mask`)."""

    name: str
    absolute: float = 0.0
    relative: float = 0.0

    @property
    def exact(self) -> bool:
        """Whether a tie is equality (no tolerance)."""
        return self.absolute == 0.0 and self.relative == 0.0


def parse_tolerance(text: str) -> Tolerance:
    """A :class:`Tolerance` from ``exact``, ``absolute:1e-6`` or ``relative:1e-3``."""
    if text == EXACT:
        return Tolerance(EXACT)
    kind, _, amount = text.partition(":")
    try:
        value = float(amount)
    except ValueError:
        value = float("nan")
    if kind not in TOLERANCE_KINDS or not (np.isfinite(value) and value > 0):
        raise KgrankInputError(
            f"tie tolerance {text!r}: pass exact, absolute:<a> or relative:<r> with a positive number, "
            "e.g. relative:1e-6"
        )
    return Tolerance(f"{kind}:{value:g}", **{kind: value})


def ranks_with_tolerance(
    scores: torch.Tensor,
    true_entities: torch.Tensor,
    filter_rows: Any = None,
    filter_cols: Any = None,
    *,
    absolute: float = 0.0,
    relative: float = 0.0,
) -> dict[str, np.ndarray]:
    """:func:`kgrank.engine.ranks.ranks_from_scores` with a tie tolerance (see :func:`tie_mask`).

    optimistic = 1 + #{c > s and c does not tie s}; pessimistic = #{c >= s or c ties s}, the
    true entity included. With both tolerances 0 (the default) a tie is equality and the
    ranks are exactly those of ``ranks_from_scores``. Same arguments and side effect:
    filtered entries of ``scores`` become NaN in place; NaN scores are refused.
    """
    import torch  # here: the rank-width and IR functions need no torch

    from kgrank.engine.score_pass import filter_scores, refuse_nan

    _check_tolerance(absolute, relative)
    refuse_nan(scores)
    # filtered in place and the candidates counted as the rank engine does (not through
    # kgrank.engine.ranks, which calls this module for its tolerant ranks)
    num_candidates = filter_scores(scores, true_entities, filter_rows, filter_cols)
    true_column = scores[torch.arange(scores.shape[0]), true_entities].unsqueeze(1)
    tied = tie_mask(scores, true_column, absolute, relative)
    optimistic = ((scores > true_column) & ~tied).sum(dim=1) + 1
    pessimistic = ((scores >= true_column) | tied).sum(dim=1)
    return {
        "optimistic": optimistic.numpy(),
        "pessimistic": pessimistic.numpy(),
        "num_candidates": num_candidates.numpy(),
    }


# --- 3. Stress scorers -------------------------------------------------------------------


def constant_scores(scores: torch.Tensor, value: float = 0.0) -> torch.Tensor:
    """A scorer that ties every candidate: each task gets optimistic rank 1, pessimistic N
    and realistic (N + 1) / 2 (N its candidates), the worst case for the optimistic rank."""
    import torch  # here: the rank-width and IR functions need no torch

    return torch.full_like(scores, value)


def quantised_scores(scores: torch.Tensor, decimals: int) -> torch.Tensor:
    """Scores rounded to ``decimals`` decimals (negative: to tens, hundreds ...), half to
    even. Rounding is monotone, so it only merges scores into ties: the optimistic rank
    can only fall and the pessimistic only rise."""
    if isinstance(decimals, bool) or not isinstance(decimals, (int, np.integer)):
        raise KgrankInputError(f"decimals {decimals!r} must be an integer; pass e.g. 3")
    import torch  # here: the rank-width and IR functions need no torch

    return torch.round(scores, decimals=int(decimals))


# --- 4. Tie-neutral IR measures ----------------------------------------------------------

RUN_FRAME_COLUMNS = ("query_id", "doc_id", "score")
QRELS_FRAME_COLUMNS = ("query_id", "doc_id", "relevance")
TIE_NEUTRAL_COLUMNS = ("query_id", "measure", "value")
# the measures with an exact tie-neutral value here, by ir-measures name
SUPPORTED_MEASURES = ("AP", "nDCG", "RR", "P")


def parse_measures(measures: Iterable[Any]) -> list[Any]:
    """ir-measures measure objects from objects or names (``"nDCG@20"``), refusing any but
    AP[@k], nDCG[@k], RR[@k] and P@k with their default parameters."""
    parsed = []
    for measure in measures:
        try:
            measure = ir_measures.parse_measure(measure) if isinstance(measure, str) else measure
        except (ValueError, NameError, SyntaxError, TypeError) as error:
            raise KgrankInputError(
                f"measure {measure!r} is not an ir-measures name ({error}); pass e.g. 'nDCG@20'"
            ) from None
        name = getattr(measure, "NAME", None)
        params = dict(getattr(measure, "params", {}))
        cutoff = params.pop("cutoff", None)
        if name not in SUPPORTED_MEASURES or params or (name == "P" and cutoff is None):
            raise KgrankInputError(
                f"measure {measure!r} has no tie-neutral value here; pass AP[@k], nDCG[@k], RR[@k] or P@k "
                "with default parameters"
            )
        if cutoff is not None and (isinstance(cutoff, bool) or not isinstance(cutoff, int) or cutoff < 1):
            raise KgrankInputError(f"measure {measure}: cutoff {cutoff!r} must be a positive integer")
        parsed.append(measure)
    if not parsed:
        raise KgrankInputError("no measures given; pass e.g. ['nDCG@20', 'AP@20', 'RR', 'P@10']")
    return parsed


def _check_frame(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise KgrankInputError(f"{what} lacks column(s) {missing}; pass a frame with columns {list(columns)}")
    duplicated = frame.duplicated(["query_id", "doc_id"])
    if duplicated.any():
        row = frame[duplicated].iloc[0]
        raise KgrankInputError(
            f"{what} lists document {row['doc_id']!r} twice for query {row['query_id']!r}; "
            "keep one row per pair"
        )


class _RankedRun(NamedTuple):
    """A run sorted by query and descending score, with its tie groups (one row a document)."""

    query: np.ndarray  # the query's code (index into query_ids) of each row
    position: np.ndarray  # 1-based rank of the row within its query
    group: np.ndarray  # tie group of the row (a dense id over the whole run)
    group_query: np.ndarray  # per group: its query's code
    group_size: np.ndarray  # per group: number of documents
    group_relevant: np.ndarray  # per group: relevant documents (relevance >= 1)
    group_gain: np.ndarray  # per group: summed gains (relevance clipped at 0)
    group_start: np.ndarray  # per group: documents of its query ranked above it
    relevant_above: np.ndarray  # per group: relevant documents of its query ranked above it


def _rank_run(query: np.ndarray, score: np.ndarray, relevance: np.ndarray) -> _RankedRun:
    order = np.lexsort((-score, query))
    query, score, relevance = query[order], score[order], relevance[order]
    first_of_query = np.r_[True, query[1:] != query[:-1]]
    query_start = np.maximum.accumulate(np.where(first_of_query, np.arange(len(query)), 0))
    position = np.arange(len(query)) - query_start + 1
    group = np.cumsum(first_of_query | np.r_[True, score[1:] != score[:-1]]) - 1
    relevant = (relevance >= 1).astype(np.int64)
    # relevant documents strictly above each row within its query
    running = np.cumsum(relevant)
    relevant_above_row = running - relevant - (running - relevant)[query_start]
    group_first = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    return _RankedRun(
        query=query,
        position=position,
        group=group,
        group_query=query[group_first],
        group_size=np.bincount(group),
        group_relevant=np.bincount(group, weights=relevant).astype(np.int64),
        group_gain=np.bincount(group, weights=np.maximum(relevance, 0).astype(float)),
        group_start=position[group_first] - 1,
        relevant_above=relevant_above_row[group_first],
    )


def _ideal_dcg(
    qrels_query: np.ndarray, qrels_gain: np.ndarray, num_queries: int, cutoff: float
) -> np.ndarray:
    """trec_eval's ideal DCG@cutoff per query: the judged gains sorted descending."""
    order = np.lexsort((-qrels_gain, qrels_query))
    query, gain = qrels_query[order], qrels_gain[order]
    first = np.r_[True, query[1:] != query[:-1]]
    position = np.arange(len(query)) - np.maximum.accumulate(np.where(first, np.arange(len(query)), 0)) + 1
    kept = position <= cutoff
    return np.bincount(query[kept], weights=gain[kept] / np.log2(position[kept] + 1), minlength=num_queries)


def tie_neutral_measures(run: pd.DataFrame, qrels: pd.DataFrame, measures: Iterable[Any]) -> pd.DataFrame:
    """Expected AP[@k], nDCG[@k], RR[@k] and P@k of every query over uniformly random orders
    of each group of tied scores, exactly (one row per query and measure, TIE_NEUTRAL_COLUMNS).

    ``run``: query_id, doc_id, score (ir-measures' layout); ``qrels``: query_id, doc_id,
    relevance. Every measure is trec_eval's (as ir-measures computes it with pytrec_eval):
    a document is relevant with relevance >= 1; unjudged documents are not relevant;
    queries are those of the run that have qrels (as in ir-measures: a qrels query absent
    from the run gets no row); a query without relevant documents scores 0.

    - P@k = (relevant among the top k) / k, k even when fewer documents were retrieved.
    - AP@k (trec_eval ``map_cut_k``) = sum over relevant documents at rank i <= k of
      precision@i, divided by R, the number of relevant documents in the qrels (not
      min(R, k): trec_eval normalises map_cut by R; checked in the tests). No cutoff: ``map``.
    - nDCG@k (trec_eval ``ndcg_cut_k``): gain = relevance (negative clipped to 0), discount
      1 / log2(rank + 1), divided by the ideal DCG@k of the qrels' gains sorted descending.
    - RR[@k] = 1 / rank of the first relevant document (0 if none within k).

    How (McSherry & Najork 2008, redone here in a vectorised form). A tie group g of
    n_g documents, r_g relevant, gain sum G_g, occupies the ranks t_g + 1 .. t_g + n_g in
    every order; a uniformly random order within it puts a relevant document at each of its
    ranks with probability r_g / n_g and an expected gain G_g / n_g there. P@k and nDCG@k are
    sums over ranks of these marginals (their normalisers k and the ideal DCG do not depend
    on the order), so their expectations are the same sums of expected values. AP@k =
    (1/R) sum_{i<=k} rel_i (1 + sum_{j<i} rel_j) / i needs the pair probabilities
    P(rel_i and rel_j): for rank i at place m of group g, the j < i of earlier groups hold
    exactly B_g relevant documents (B_g deterministic), and the m - 1 places before it in
    its own group hold a relevant one with probability (r_g - 1)/(n_g - 1) given rel_i, so
    E[AP@k] = (1/R) sum_{i<=k} (r_g/n_g) (1 + B_g + (m - 1)(r_g - 1)/(n_g - 1)) / i. The
    normaliser R counts the qrels, not the order, so this is the exact expectation; a
    measure normalised by a random quantity (e.g. relevant documents retrieved in the top k)
    would need the expectation of a ratio, and none of these four does. RR: only the first
    group with a relevant document matters; the place of its first relevant document is 1 +
    a negative hypergeometric variable (irrelevant documents drawn before the first relevant
    one), whose pmf scipy gives (to about 1e-14 absolute; sums are exact otherwise).

    Exact only for the list as given: a run cut at a depth inside a tie group has lost the
    group's other documents, and its tie-neutral value is that of the cut list.
    """
    measures = parse_measures(measures)
    _check_frame(run, RUN_FRAME_COLUMNS, "run")
    _check_frame(qrels, QRELS_FRAME_COLUMNS, "qrels")
    score = run["score"].to_numpy(dtype=float)
    if np.isnan(score).any():
        raise KgrankInputError("run holds NaN scores; drop those rows or give them a score")
    judged_queries = pd.unique(qrels["query_id"])
    run = run[run["query_id"].isin(judged_queries)]
    query_ids = pd.unique(run["query_id"])
    if len(query_ids) == 0:
        return pd.DataFrame(columns=list(TIE_NEUTRAL_COLUMNS))
    qrels = qrels[qrels["query_id"].isin(query_ids)]
    query_index = pd.Index(query_ids)
    relevance = (
        run[["query_id", "doc_id"]]
        .merge(qrels[["query_id", "doc_id", "relevance"]], on=["query_id", "doc_id"], how="left")["relevance"]
        .fillna(0)
        .to_numpy(dtype=float)
    )
    ranked = _rank_run(
        query_index.get_indexer(run["query_id"]), run["score"].to_numpy(dtype=float), relevance
    )
    num_queries = len(query_ids)
    qrels_query = query_index.get_indexer(qrels["query_id"])
    qrels_relevance = qrels["relevance"].to_numpy(dtype=float)
    num_relevant = np.bincount(qrels_query, weights=qrels_relevance >= 1, minlength=num_queries)

    group = ranked.group
    size, relevant = ranked.group_size[group], ranked.group_relevant[group]
    place = ranked.position - ranked.group_start[group]  # 1-based place within the tie group
    expected_relevant = relevant / size
    expected_gain = ranked.group_gain[group] / size
    # place 1 of a group has no predecessor inside it; the max() only avoids 0/0 for singletons
    same_group_pairs = (place - 1) * (relevant - 1) / np.maximum(size - 1, 1)
    ap_terms = expected_relevant * (1 + ranked.relevant_above[group] + same_group_pairs) / ranked.position
    dcg_terms = expected_gain / np.log2(ranked.position + 1)
    # the first tie group with a relevant document, per query (-1: none); groups are
    # numbered in rank order within a query, so the first one listed is the top one
    first_relevant_group = np.full(num_queries, -1)
    groups_with_relevant = np.flatnonzero(ranked.group_relevant > 0)
    queries_with_relevant, first_index = np.unique(
        ranked.group_query[groups_with_relevant], return_index=True
    )
    first_relevant_group[queries_with_relevant] = groups_with_relevant[first_index]
    in_first = group == first_relevant_group[ranked.query]
    rr_terms = np.zeros(len(group))
    rr_terms[in_first] = (
        nhypergeom.pmf(place[in_first] - 1, size[in_first], size[in_first] - relevant[in_first], 1)
        / ranked.position[in_first]
    )

    rows = []
    for measure in measures:
        cutoff = measure.params.get("cutoff")
        limit = np.inf if cutoff is None else cutoff
        kept = ranked.position <= limit

        def summed(terms: np.ndarray, kept: np.ndarray = kept) -> np.ndarray:
            return np.bincount(ranked.query[kept], weights=terms[kept], minlength=num_queries)

        if measure.NAME == "P":
            value = summed(expected_relevant) / cutoff
        elif measure.NAME == "AP":
            value = np.divide(
                summed(ap_terms), num_relevant, out=np.zeros(num_queries), where=num_relevant > 0
            )
        elif measure.NAME == "nDCG":
            ideal = _ideal_dcg(qrels_query, np.maximum(qrels_relevance, 0), num_queries, limit)
            value = np.divide(summed(dcg_terms), ideal, out=np.zeros(num_queries), where=ideal > 0)
        else:  # RR
            value = summed(rr_terms)
        rows.append(pd.DataFrame({"query_id": query_ids, "measure": str(measure), "value": value}))
    return pd.concat(rows, ignore_index=True)


def mean_over_queries(per_query: pd.DataFrame) -> pd.DataFrame:
    """The mean of each measure over its queries (columns measure, value, num_queries), as
    trec_eval's ``all`` line: every query of the table weighs the same."""
    grouped = per_query.groupby("measure", sort=False)["value"]
    return pd.DataFrame({"value": grouped.mean(), "num_queries": grouped.size()}).reset_index()


# --- 5. How far trec_eval's tie order moves a measure ------------------------------------

SENSITIVITY_COLUMNS = ("measure", "trec_eval", "minimum", "maximum", "spread", "changed", "tie_neutral")


class TieSensitivity(NamedTuple):
    """trec_eval's values under renamed documents against the tie-neutral ones.

    ``per_query``: query_id + SENSITIVITY_COLUMNS, one row per query and measure;
    ``per_system``: SENSITIVITY_COLUMNS + ``changed_share`` (share of queries whose value
    changed), one row per measure, of the mean over queries. ``trec_eval`` is the value
    under the given names, ``minimum``/``maximum`` run over it and every renaming,
    ``spread`` = maximum - minimum, ``changed`` = spread > 0.
    """

    per_query: pd.DataFrame
    per_system: pd.DataFrame


def _as_strings(frame: pd.DataFrame) -> pd.DataFrame:
    # ir-measures (and TREC files) name queries and documents by strings
    return frame.assign(query_id=frame["query_id"].astype(str), doc_id=frame["doc_id"].astype(str))


def trec_values(run: pd.DataFrame, qrels: pd.DataFrame, measures: Iterable[Any]) -> pd.DataFrame:
    """trec_eval's value of every measure per query (TIE_NEUTRAL_COLUMNS), by ir-measures
    with its pytrec_eval backend: ties broken by document id, as trec_eval does.

    RR@k is refused: trec_eval's ``recip_rank`` has no cutoff, and ir-measures 0.4.3's
    pytrec_eval backend silently drops it (RR@1 gives RR) and mislabels the values when RR
    is asked with several cutoffs at once; its tie-neutral value is still available."""
    measures = parse_measures(measures)
    with_cutoff = [measure for measure in measures if measure.NAME == "RR" and "cutoff" in measure.params]
    if with_cutoff:
        raise KgrankInputError(
            f"measure {with_cutoff[0]}: trec_eval's reciprocal rank has no cutoff; pass RR instead"
        )
    _check_frame(run, RUN_FRAME_COLUMNS, "run")
    _check_frame(qrels, QRELS_FRAME_COLUMNS, "qrels")
    # trec_eval (form_res_rels.c) sets a query's number of relevance levels from its levels
    # >= 0 only, and otherwise keeps the previous query's, process-wide: for a query whose
    # every level is negative ("in the pool, unjudged") nDCG then reads counts past its
    # buffer, which gives a wrong value or loops for minutes.
    highest = qrels.groupby("query_id", sort=False)["relevance"].max()
    unjudged = highest.index[highest < 0]
    if len(unjudged):
        raise KgrankInputError(
            f"qrels: query {unjudged[0]!r} has no relevance level >= 0, on which trec_eval reads "
            "another query's levels (wrong nDCG or a hang); judge one of its documents or drop the query"
        )
    rows = [
        (metric.query_id, str(metric.measure), metric.value)
        for metric in ir_measures.pytrec_eval.iter_calc(measures, _as_strings(qrels), _as_strings(run))
    ]
    return pd.DataFrame(rows, columns=list(TIE_NEUTRAL_COLUMNS))


def trec_tie_sensitivity(
    run: pd.DataFrame, qrels: pd.DataFrame, measures: Iterable[Any], num_renamings: int, seed: int
) -> TieSensitivity:
    """trec_eval's measures under ``num_renamings`` random renamings of the documents,
    against the tie-neutral values.

    A renaming is a uniformly random permutation of the document ids (of the run and the
    qrels together) applied to both, so every system sees the same documents under other
    names: only the order trec_eval gives tied documents (by id) can change, and any change
    of a value is the tie order's doing. The tie-neutral value does not depend on the names.
    """
    if (
        isinstance(num_renamings, bool)
        or not isinstance(num_renamings, (int, np.integer))
        or num_renamings < 1
    ):
        raise KgrankInputError(f"num_renamings {num_renamings!r} must be a positive integer; pass e.g. 10")
    measures = parse_measures(measures)
    run, qrels = _as_strings(run), _as_strings(qrels)
    names = pd.unique(pd.concat([run["doc_id"], qrels["doc_id"]], ignore_index=True))
    run_codes = pd.Index(names).get_indexer(run["doc_id"])
    qrels_codes = pd.Index(names).get_indexer(qrels["doc_id"])
    # the house seed derivation (kgrank.evaluation.stats), one named stream for the renamings
    generator = seed_stream(seed, "tie-renamings")
    values = [trec_values(run, qrels, measures).assign(renaming=0)]
    for renaming in range(1, num_renamings + 1):
        renamed = names[generator.permutation(len(names))]
        values.append(
            trec_values(
                run.assign(doc_id=renamed[run_codes]), qrels.assign(doc_id=renamed[qrels_codes]), measures
            ).assign(renaming=renaming)
        )
    trec = pd.concat(values, ignore_index=True)
    neutral = tie_neutral_measures(run, qrels, measures).rename(columns={"value": "tie_neutral"})

    def spread(frame: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
        grouped = frame.groupby(keys, sort=False)["value"]
        table = pd.DataFrame(
            {
                "trec_eval": frame[frame["renaming"] == 0].set_index(keys)["value"],
                "minimum": grouped.min(),
                "maximum": grouped.max(),
            }
        )
        table["spread"] = table["maximum"] - table["minimum"]
        table["changed"] = table["spread"] > 0
        return table.reset_index()

    per_query = spread(trec, ["query_id", "measure"]).merge(neutral, on=["query_id", "measure"], how="left")
    system_means = trec.groupby(["measure", "renaming"], sort=False)["value"].mean().reset_index()
    per_system = spread(system_means, ["measure"]).merge(
        mean_over_queries(neutral.rename(columns={"tie_neutral": "value"}))[["measure", "value"]].rename(
            columns={"value": "tie_neutral"}
        ),
        on="measure",
        how="left",
    )
    per_system["changed_share"] = per_system["measure"].map(per_query.groupby("measure")["changed"].mean())
    return TieSensitivity(
        per_query=per_query[["query_id", *SENSITIVITY_COLUMNS]],
        per_system=per_system[[*SENSITIVITY_COLUMNS, "changed_share"]],
    )
