"""One scoring pass of a model over every query of the evaluation sets: the item table,
the run lists and the qrels.

A query of an evaluation is a unique (side, given entity, relation); its relevant answers
are the evaluation's answers of it. Its filter is its protocol's known triples plus its
relevant answers: `paper` (Zhou et al.) knows train and valid, so a test answer the
evaluated set lacks stays a candidate; `all-known` knows train, valid and test
(kgrank.studies.ir.settings). Each relevant answer is ranked against the entities outside
the filter, itself put back (the micro rank, as kgrank.engine.ranks.compute_ranks, which the
all-known protocol equals), and the query's run list holds every entity but the filtered
non-relevant ones, by score descending, ties by entity id ascending.

Every distinct (side, triple) of all evaluations is scored once, in blocks of the core's
one scoring loop (kgrank.engine.score_pass, through kgrank.engine.scoring.Scorer) with the triple itself
as the batch row, as compute_ranks scores it, so the product form's near ties are settled
around that answer and the micro ranks equal compute_ranks' bit for bit. The run list of a
query is taken from the row of its answer with the smallest entity id.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kgrank.data.rank_table import RANK_TABLE_COLUMNS, SIDES
from kgrank.defaults import DEFAULT_FILTER_SPLITS, DEFAULT_HITS
from kgrank.engine.candidates import KnownAnswers, known_answers
from kgrank.errors import KgrankInputError
from kgrank.evaluation import metrics
from kgrank.evaluation.moments import best_rank_moments_of
from kgrank.studies.ir import trec
from kgrank.studies.ir.settings import ALL_KNOWN, protocol_filter_splits

# torch (and kgrank.engine.ranks, which loads it) is imported in the functions that score: the
# study's analyses read this module's columns and need not pay for torch
if TYPE_CHECKING:
    import torch

ITEM_ID_COLUMNS = (
    "protocol",
    "evaluation",
    "averaging",
    "item",
    "query",
    "side",
    "relation",
    "num_relevant",
    "num_candidates",
    "position",
    "relevant_above",
    "weight",
)
MICRO_COLUMNS = (
    "evaluation",
    "query",
    "side",
    "head",
    "relation",
    "tail",
    "answer",
    "optimistic",
    "pessimistic",
    "num_other",
    "position",
    "relevant_above",
)


def metric_keys(hits: Sequence[int] = DEFAULT_HITS) -> list[str]:
    """The metric keys of the item table: MR, MRR and Hits@k for each k."""
    return ["arithmetic_mean_rank", "inverse_harmonic_mean_rank", *(f"hits_at_{k}" for k in hits)]


def item_columns(hits: Sequence[int] = DEFAULT_HITS) -> list[str]:
    """Every column of the item table, in order."""
    measured = [f"{key}{suffix}" for key in metric_keys(hits) for suffix in ("", "_expectation", "_variance")]
    return [*ITEM_ID_COLUMNS, *measured, *trec.MEASURE_COLUMNS[1:]]


@dataclass(frozen=True)
class EvaluationPass:
    """What one pass gives: the item table, the micro detail (MICRO_COLUMNS), the run lists
    (evaluation + trec.RUN_COLUMNS, ``run_depth`` deep, for the exported evaluations) and the
    qrels (evaluation, query, side, entity, for the same evaluations)."""

    items: pd.DataFrame
    micro: pd.DataFrame
    runs: pd.DataFrame
    qrels: pd.DataFrame


def plan_items(evaluations: pd.DataFrame) -> pd.DataFrame:
    """One row per (evaluation, side, relevant triple) with its query id: dense per
    evaluation in the order (side, relation, given), and the answer entity."""
    frames = []
    for side in SIDES:
        given, answer = ("tail", "head") if side == "head" else ("head", "tail")
        frames.append(
            evaluations.assign(side=side, given=evaluations[given], answer=evaluations[answer])[
                ["evaluation", "side", "head", "relation", "tail", "given", "answer"]
            ]
        )
    items = pd.concat(frames, ignore_index=True).drop_duplicates()
    items = items.sort_values(["evaluation", "side", "relation", "given", "answer"], kind="stable")
    keys = items[["side", "relation", "given"]]
    new_query = keys.ne(keys.shift()).any(axis=1) | items["evaluation"].ne(items["evaluation"].shift())
    items["query"] = new_query.astype(np.int64).groupby(items["evaluation"]).cumsum() - 1
    return items.reset_index(drop=True)


def _run_order(run_scores: torch.Tensor, depth: int) -> list[np.ndarray]:
    """Per row, the first ``depth`` entity ids of the run list: non-NaN entries by score
    descending, ties by id ascending.

    A full sort of every row costs most of a pass on FB15k-237, so the ``depth``-th largest
    score is found first (torch.topk, whose order within ties is unspecified) and only the
    entries at or above it, all ties of the cut included, are ordered exactly (a stable
    sort keeps the ascending id order within ties).
    """
    import torch

    filled = torch.nan_to_num(run_scores, nan=-torch.inf)
    threshold = torch.topk(filled, k=min(depth, filled.shape[1]), dim=1).values[:, -1:]
    above = (filled >= threshold).numpy()
    scores = run_scores.numpy()
    orders = []
    for row, mask in zip(scores, above, strict=True):
        ids = np.flatnonzero(mask & ~np.isnan(row))
        orders.append(ids[np.argsort(-row[ids], kind="stable")][:depth])
    return orders


@dataclass(frozen=True)
class _RowCounts:
    """What the items of every evaluation share about a batch of score rows, one row per
    (side, triple), whose answer is the triple's entity on that side: the answer's score,
    how many entities score above it, how many tie with it (the answer included), and how
    many of those ties have a smaller entity id than the answer."""

    true_scores: torch.Tensor
    above: np.ndarray
    tied: np.ndarray
    tied_before: np.ndarray


def _row_counts(scores: torch.Tensor, answer_ids: np.ndarray) -> _RowCounts:
    """The dense work of a batch: every score against its row's answer, once for all
    evaluations and protocols, which then correct the counts entry by entry
    (:func:`_evaluate_block`)."""
    import torch

    from kgrank.engine.ranks import compared, count_above
    from kgrank.engine.scoring import nonzero_entries

    num_rows = scores.shape[0]
    answer_ids = torch.as_tensor(answer_ids)
    true_scores = scores[torch.arange(num_rows), answer_ids]
    column = true_scores.unsqueeze(1)
    above = count_above(scores, column).numpy()
    # ties are few: their coordinates cost less than a second dense count (numpy's
    # comparison and entries, as the rank engine takes them)
    tie_rows, tie_entities = nonzero_entries(compared(scores, column, "=="))
    before = (tie_entities < answer_ids[tie_rows]).numpy()
    tie_rows = tie_rows.numpy()
    return _RowCounts(
        true_scores,
        above,
        np.bincount(tie_rows, minlength=num_rows),
        np.bincount(tie_rows[before], minlength=num_rows),
    )


@dataclass(frozen=True)
class _EntryCounts:
    """Per item, among some of its entities: how many score above its answer, how many
    tie with it, how many of those ties have a smaller id than the answer, and how many
    entities there are."""

    above: np.ndarray
    tied: np.ndarray
    tied_before: np.ndarray
    entries: np.ndarray


def _entry_counts(
    scores: torch.Tensor,
    true_scores: torch.Tensor,
    rows: np.ndarray,
    answers: np.ndarray,
    entries: tuple[np.ndarray, np.ndarray],
) -> _EntryCounts:
    """:class:`_EntryCounts` of the (item, entity) ``entries``; item ``i`` is score row
    ``rows[i]`` with answer ``answers[i]`` and answer score ``true_scores[i]``."""
    import torch

    items, entities = entries
    entry_scores = scores[torch.as_tensor(rows[items]), torch.as_tensor(entities)]
    entry_true = true_scores[torch.as_tensor(items)]
    higher = (entry_scores > entry_true).numpy()
    tied = (entry_scores == entry_true).numpy()
    before = tied & (entities < answers[items])
    num_items = len(rows)
    return _EntryCounts(
        np.bincount(items[higher], minlength=num_items),
        np.bincount(items[tied], minlength=num_items),
        np.bincount(items[before], minlength=num_items),
        np.bincount(items, minlength=num_items),
    )


def _rank_block(
    scores: torch.Tensor,
    counts: _RowCounts,
    rows: np.ndarray,
    answers: np.ndarray,
    true_scores: torch.Tensor,
    filtered: tuple[np.ndarray, np.ndarray],
    relevant: _EntryCounts,
    representative: np.ndarray,
    depth: int,
) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
    """Ranks, positions and run lists of a block's items under one protocol's
    ``filtered`` (item, entity) entries.

    The candidates of a position are the row without the filtered entries (the relevant
    answers stay); those of a micro rank leave out the relevant answers too, the item's
    own included. Both are the row's counts less those of the left-out entries, which
    are disjoint (the filter excludes the relevant answers)."""
    import torch

    removed = _entry_counts(scores, true_scores, rows, answers, filtered)
    above = counts.above[rows] - removed.above
    tied_before = counts.tied_before[rows] - removed.tied_before
    optimistic = above - relevant.above + 1
    other_ties = counts.tied[rows] - removed.tied - relevant.tied  # the answer is one of relevant.tied
    num_entities = scores.shape[1]
    orders: list[np.ndarray] = []
    if representative.any():
        chosen = np.flatnonzero(representative)
        run = scores[torch.as_tensor(rows[chosen])]  # a copy: advanced indexing
        slot = np.full(len(rows), -1)
        slot[chosen] = np.arange(len(chosen))
        items, entities = filtered
        keep = slot[items] >= 0
        run[torch.as_tensor(slot[items][keep]), torch.as_tensor(entities[keep])] = float("nan")
        orders = _run_order(run, depth)
    return {
        "optimistic": optimistic,
        "pessimistic": optimistic + other_ties,
        "num_other": num_entities - removed.entries - relevant.entries,
        "position": above + tied_before + 1,
    }, orders


def _evaluate_block(
    scores: torch.Tensor,
    counts: _RowCounts,
    rows: np.ndarray,
    triples: np.ndarray,
    side: str,
    answers: np.ndarray,
    known: Mapping[str, KnownAnswers],
    relevant: KnownAnswers,
    representative: np.ndarray,
    depth: int,
) -> dict[str, tuple[dict[str, np.ndarray], list[np.ndarray]]]:
    """Per protocol, the ranks, positions and run lists of one block of items of one
    evaluation and side, each protocol filtering its own ``known`` answers.

    ``scores`` is the batch of score rows and ``counts`` their dense counts; item ``i``
    is row ``rows[i]``. A protocol's filter is its query's known answers that are not
    relevant answers of the evaluation: a few entries per item, so each protocol costs
    the counts of those entries, not a pass over the rows. The counts are integers, so
    the ranks equal those of a dense count over the filtered rows exactly. Where a
    protocol's filter equals one already ranked (every item of FB-Test-O, whose relevant
    answers are all its test answers) the ranks and run lists are taken over instead of
    recomputed.
    """
    import torch

    num_entities = scores.shape[1]
    answers = np.asarray(answers, dtype=np.int64)
    true_scores = counts.true_scores[torch.as_tensor(rows)]
    relevant_items, relevant_entities = relevant.answers(side, triples)
    relevant_counts = _entry_counts(scores, true_scores, rows, answers, (relevant_items, relevant_entities))
    relevant_keys = relevant_items.astype(np.int64) * num_entities + relevant_entities
    results: dict[str, tuple[dict[str, np.ndarray], list[np.ndarray]]] = {}
    filters: list[tuple[str, np.ndarray]] = []
    for protocol, answers_known in known.items():
        known_items, known_entities = answers_known.answers(side, triples)
        keys = known_items.astype(np.int64) * num_entities + known_entities
        # unique (a CSR row's entries); sorted, so that equal filters have equal keys
        keys = np.sort(keys[~np.isin(keys, relevant_keys, assume_unique=True)])
        same = next((name for name, other in filters if np.array_equal(other, keys)), None)
        if same is None:
            filtered = (keys // num_entities, keys % num_entities)
            values, orders = _rank_block(
                scores, counts, rows, answers, true_scores, filtered, relevant_counts, representative, depth
            )
            # the competition rank of each answer among its query's relevant answers in its
            # own row (0 = none scored above it; equal scores share it): what a subset needs
            # to know which discarded answers of the query overtake it (stability under `paper`)
            values["relevant_above"] = relevant_counts.above
            filters.append((protocol, keys))
            results[protocol] = (values, orders)
        else:
            results[protocol] = results[same]  # the same object: the caller tells reuse by identity
    return results


def protocol_filters(known: KnownAnswers | Mapping[str, KnownAnswers]) -> dict[str, KnownAnswers]:
    """The known answers per protocol; a bare KnownAnswers is the one protocol `all-known`
    (every known triple filtered, kgrank's protocol before issue 32)."""
    if isinstance(known, KnownAnswers):
        return {ALL_KNOWN: known}
    if not known:
        raise KgrankInputError("ir evaluation: no protocol given; pass the known answers of at least one")
    return dict(known)


def evaluation_pass(
    model: Any,
    known: KnownAnswers | Mapping[str, KnownAnswers],
    evaluations: pd.DataFrame,
    *,
    run_depth: int = 100,
    export: Sequence[str] = (),
    batch_size: int = 256,
    progress: bool = True,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Score every distinct (side, triple) of ``evaluations`` once
    (:func:`kgrank.engine.score_pass.score_pass` of ``model``: a PyKEEN model, or any score function
    ``((n, 3) triples, side) -> (n, entities) scores``), and rank each evaluation's items
    under every protocol of ``known`` (protocol -> its known answers; see
    :func:`protocol_filters`) as the blocks arrive.

    Returns the micro detail (protocol + MICRO_COLUMNS) and the run lists (protocol,
    evaluation + trec.RUN_COLUMNS; ``protocol``, ``evaluation`` and ``side`` categorical, as a
    full-depth run has tens of millions of rows): ``run_depth`` deep for the ``export``
    evaluations, MEASURE_DEPTH deep for the others (enough for AP@20 and nDCG@20). The run
    lists of a later protocol are left out for an evaluation where they equal the first
    protocol's (FB-Test-O: 23 million rows per protocol), the first protocol's standing for them.
    """
    from kgrank.engine.score_pass import ScoreBlock, score_pass

    filters = protocol_filters(known)
    protocols = list(filters)
    first_known = next(iter(filters.values()))
    items = plan_items(evaluations)
    # rows sorted by side first, so that each side's rows form one contiguous range of row ids
    rows = (
        items[["side", "head", "relation", "tail"]]
        .drop_duplicates()
        .sort_values(["side", "relation", "head", "tail"])
        .reset_index(drop=True)
    )
    rows["row"] = np.arange(len(rows))
    items = items.merge(rows, on=["side", "head", "relation", "tail"], how="left")
    # the run list of a query comes from its first item (smallest answer id)
    items["representative"] = ~items.duplicated(["evaluation", "query"])
    relevant = {
        name: KnownAnswers(
            [frame[["head", "relation", "tail"]].to_numpy()],
            first_known.num_entities,
            first_known.num_relations,
        )
        for name, frame in evaluations.groupby("evaluation", sort=False)
    }
    names = sorted(evaluations["evaluation"].unique())
    by_evaluation = {
        name: frame.sort_values("row") for name, frame in items.groupby("evaluation", sort=False)
    }
    measured: list[pd.DataFrame] = []
    # (protocol, evaluation) -> its blocks' run arrays; a later protocol's are kept only for
    # the evaluations where some block differs from the first protocol's (``differing``)
    run_parts: dict[tuple[str, str], list[tuple[np.ndarray, ...]]] = {}
    differing: set[tuple[str, str]] = set()

    def measure_block(block: ScoreBlock) -> None:
        side, scores = block.side, block.scores
        batch = side_rows.iloc[block.positions[0] : block.positions[-1] + 1]
        first_row, last_row = int(batch["row"].iloc[0]), int(batch["row"].iloc[-1])
        true_entities = batch["head" if side == "head" else "tail"].to_numpy(dtype=np.int64, copy=True)
        counts = _row_counts(scores, true_entities)
        for name, frame in by_evaluation.items():
            positions = frame["row"].to_numpy()
            low, high = np.searchsorted(positions, [first_row, last_row + 1])
            if low == high:
                continue
            block_rows = frame.iloc[low:high]
            block_triples = block_rows[["head", "relation", "tail"]].to_numpy(dtype=np.int64, copy=True)
            representative = block_rows["representative"].to_numpy()
            depth = run_depth if name in export else trec.MEASURE_DEPTH
            by_protocol = _evaluate_block(
                scores,
                counts,
                block_rows["row"].to_numpy() - first_row,
                block_triples,
                side,
                block_rows["answer"].to_numpy(),
                filters,
                relevant[name],
                representative,
                depth,
            )
            chosen = block_rows[representative]
            plain = block_rows.drop(columns=["representative", "row", "given"])
            first_result = by_protocol[protocols[0]]
            for protocol, result in by_protocol.items():
                values, orders = result
                measured.append(plain.assign(protocol=protocol, **values))
                if protocol != protocols[0] and result is not first_result:
                    differing.add((protocol, name))
                if not len(orders):
                    continue
                lengths = np.array([len(order) for order in orders])
                # codes, not categoricals: a DataFrame per block costs more than the ranking
                # on small sets; the categoricals are built once at the end
                run_parts.setdefault((protocol, name), []).append(
                    (
                        np.full(lengths.sum(), protocols.index(protocol), dtype=np.int8),
                        np.full(lengths.sum(), names.index(name), dtype=np.int16),
                        np.repeat(chosen["query"].to_numpy(), lengths),
                        np.full(lengths.sum(), SIDES.index(side), dtype=np.int8),
                        np.concatenate(orders),
                        np.concatenate([np.arange(1, n + 1) for n in lengths]),
                    )
                )

    for side in SIDES:
        # a row is one (side, triple): each side's rows are their own pass of the one loop
        side_rows = rows[rows["side"] == side]
        if side_rows.empty:
            continue
        score_pass(
            model,
            side_rows[["head", "relation", "tail"]].to_numpy(dtype=np.int64),
            [measure_block],
            sides=(side,),
            batch_size=batch_size,
            progress=progress,
            description=f"ir evaluation, {side}s",
        )
    micro = pd.concat(measured, ignore_index=True)
    micro["protocol"] = pd.Categorical(micro["protocol"], protocols)
    micro = micro.sort_values(["protocol", "evaluation", "query", "answer"], kind="stable").reset_index(
        drop=True
    )
    micro["protocol"] = micro["protocol"].astype(str)
    kept = [
        part
        for (protocol, name), parts in run_parts.items()
        if protocol == protocols[0] or (protocol, name) in differing
        for part in parts
    ]
    columns = list(zip(*kept, strict=True)) if kept else [[np.empty(0, dtype=np.int64)]] * 6
    protocol_codes, evaluation_codes, query, side_codes, entity, position = (
        np.concatenate(parts) for parts in columns
    )
    runs = pd.DataFrame(
        {
            # categorical: a full-depth run has tens of millions of rows
            "protocol": pd.Categorical.from_codes(protocol_codes, protocols),
            "evaluation": pd.Categorical.from_codes(evaluation_codes, names),
            "query": query,
            "side": pd.Categorical.from_codes(side_codes, list(SIDES)),
            "entity": entity,
            "position": position,
        }
    ).sort_values(["protocol", "evaluation", "query", "position"])
    return micro[["protocol", *MICRO_COLUMNS]], runs.reset_index(drop=True)


def _moment_columns(
    keys: Sequence[str],
    ranks: np.ndarray,
    first_second: Callable[[list[metrics.Metric]], list[tuple[np.ndarray, np.ndarray]]],
) -> dict[str, np.ndarray]:
    columns = {}
    chosen = [metrics.lookup(key).metric for key in keys]
    for key, metric, (first, second) in zip(keys, chosen, first_second(chosen), strict=True):
        columns[key] = metric.transform.function(np.asarray(ranks, dtype=float))
        columns[f"{key}_expectation"] = first
        columns[f"{key}_variance"] = np.maximum(second - first * first, 0.0)
    return columns


def _by_evaluation(frame: pd.DataFrame, columns: Sequence[str]) -> dict[str, pd.DataFrame]:
    return {
        str(name): part[list(columns)].reset_index(drop=True)
        for name, part in frame.groupby("evaluation", sort=False, observed=True)
    }


def item_table(
    micro: pd.DataFrame, runs: pd.DataFrame, labels: Sequence[str], hits: Sequence[int] = DEFAULT_HITS
) -> pd.DataFrame:
    """The item table (item_columns) from a pass's micro detail and run lists: the items of
    every protocol, protocol by protocol in the pass's order (see :func:`protocol_items`).

    An evaluation whose micro detail and run lists are the same under a later protocol as
    under the first (FB-Test-O: the protocols coincide) takes the first one's items: its
    AP@20 and nDCG@20 through ir-measures are most of this step's time on FB15k-237."""
    protocols = list(dict.fromkeys(micro["protocol"]))
    micro_columns = [column for column in micro.columns if column != "protocol"]
    run_columns = [column for column in runs.columns if column != "protocol"]
    first_micro = micro[micro["protocol"] == protocols[0]]
    first_runs = runs[runs["protocol"] == protocols[0]]
    first = protocol_items(first_micro, first_runs, labels, hits)
    frames = [first.assign(protocol=protocols[0])]
    reference_micro = _by_evaluation(first_micro, micro_columns)
    averaging_order = {name: place for place, name in enumerate(("micro", "macro", "macro-pykeen"))}
    for protocol in protocols[1:]:
        chosen_micro = micro[micro["protocol"] == protocol]
        chosen_runs = runs[runs["protocol"] == protocol]
        own_micro = _by_evaluation(chosen_micro, micro_columns)
        own_runs = _by_evaluation(chosen_runs, run_columns)
        # the pass leaves out a later protocol's runs where they equal the first one's
        same = [
            name
            for name, frame in own_micro.items()
            if name in reference_micro
            and frame.equals(reference_micro[name])
            and (
                name not in own_runs
                or own_runs[name].equals(
                    first_runs.loc[first_runs["evaluation"] == name, run_columns].reset_index(drop=True)
                )
            )
        ]
        differing = chosen_micro[~chosen_micro["evaluation"].isin(same)]
        parts = [first[first["evaluation"].isin(same)]]
        if len(differing):
            parts.append(
                protocol_items(differing, chosen_runs[~chosen_runs["evaluation"].isin(same)], labels, hits)
            )
        table = pd.concat(parts, ignore_index=True)
        # the first protocol's row order: averaging block, evaluation, item
        table = table.sort_values(
            ["averaging", "evaluation", "item"],
            key=lambda column: column.map(averaging_order) if column.name == "averaging" else column,
            kind="stable",
        )
        frames.append(table.reset_index(drop=True).assign(protocol=protocol))
    return pd.concat(frames, ignore_index=True).reindex(columns=item_columns(hits))


def protocol_items(
    micro: pd.DataFrame, runs: pd.DataFrame, labels: Sequence[str], hits: Sequence[int] = DEFAULT_HITS
) -> pd.DataFrame:
    """The item table of one protocol from its micro detail and run lists.

    micro: one item per relevant answer, its realistic rank among num_other + 1 candidates;
    macro: one item per query, the best realistic rank of its answers among
    num_other + num_relevant, moments from best_rank_moments, AP@20 and nDCG@20 from
    ir-measures on the run cut at depth 20; macro-pykeen: the micro items weighted
    1 / num_relevant (variance NaN: the answers of a query are not independent).
    """
    keys = metric_keys(hits)
    micro = micro.copy()
    micro["realistic"] = (micro["optimistic"] + micro["pessimistic"]) / 2.0
    micro["num_relevant"] = micro.groupby(["evaluation", "query"])["answer"].transform("size")
    num_candidates = micro["num_other"].to_numpy() + 1
    micro_values = _moment_columns(
        keys,
        micro["realistic"].to_numpy(),
        lambda chosen: [metric.transform.task_moments(num_candidates) for metric in chosen],
    )
    micro_rows = pd.DataFrame(
        {**_item_ids(micro, num_candidates), "averaging": "micro", "weight": 1.0, **micro_values}
    )
    pykeen_rows = micro_rows.assign(averaging="macro-pykeen", weight=1.0 / micro_rows["num_relevant"])
    for key in keys:
        pykeen_rows[f"{key}_variance"] = np.nan

    macro = (
        micro.groupby(["evaluation", "query"], sort=True)
        .agg(
            side=("side", "first"),
            relation=("relation", "first"),
            num_relevant=("num_relevant", "first"),
            num_other=("num_other", "first"),
            # the best relevant answer's realistic rank; where relevant answers tie with each
            # other and with others at the top, the expected first relevant place is a little
            # better (two relevant and one other tied: 4/3, not 1.5); float scores of trained
            # models tie at under 2 % of tasks (study `ambiguity`), so this stays the smallest rank
            realistic=("realistic", "min"),
            position=("position", "min"),
            relevant_above=("relevant_above", "min"),
        )
        .reset_index()
    )
    num_other = macro["num_other"].to_numpy()
    num_relevant = macro["num_relevant"].to_numpy()
    macro_values = _moment_columns(
        keys,
        macro["realistic"].to_numpy(),
        lambda chosen: best_rank_moments_of(
            [metric.transform.function for metric in chosen], num_other, num_relevant
        ),
    )
    measures = _macro_measures(micro, runs, labels)
    macro = macro.merge(measures, on=["evaluation", "query"], how="left")
    macro_rows = pd.DataFrame(
        {
            **_item_ids(macro, num_other + num_relevant),
            "averaging": "macro",
            "weight": 1.0,
            **macro_values,
            **{column: macro[column].to_numpy() for column in trec.MEASURE_COLUMNS[1:]},
        }
    )
    table = pd.concat([micro_rows, macro_rows, pykeen_rows], ignore_index=True)
    return table.reindex(columns=item_columns(hits))


def _item_ids(rows: pd.DataFrame, num_candidates: np.ndarray) -> dict[str, np.ndarray]:
    """The id columns of one item per row of ``rows``, numbered within each evaluation."""
    copied = ("evaluation", "query", "side", "relation", "num_relevant", "position", "relevant_above")
    return {
        **{column: rows[column].to_numpy() for column in copied},
        "item": rows.groupby("evaluation").cumcount().to_numpy(),
        "num_candidates": num_candidates,
    }


def qrels_of(micro: pd.DataFrame) -> pd.DataFrame:
    """The relevant answers of every query (evaluation, query, side, entity): the same under
    every protocol (the evaluated set's answers), so those of the first one."""
    if "protocol" in micro.columns:
        micro = micro[micro["protocol"] == micro["protocol"].iloc[0]]
    return micro[["evaluation", "query", "side", "answer"]].rename(columns={"answer": "entity"})


def _macro_measures(micro: pd.DataFrame, runs: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """evaluation, query, ap_at_20, ndcg_at_20 of every query, on the run cut at depth 20."""
    frames = []
    qrels = qrels_of(micro)
    shallow = runs[runs["position"] <= trec.MEASURE_DEPTH]
    for name, run in shallow.groupby("evaluation", sort=False, observed=True):
        measured = trec.per_query_measures(
            trec.run_frame(run, labels),
            trec.qrels_frame(qrels[qrels["evaluation"] == name], labels),
        )
        query = measured["qid"].str.split("-", n=1).str[1].astype(np.int64)
        frames.append(measured.drop(columns="qid").assign(evaluation=name, query=query))
    return pd.concat(frames, ignore_index=True)


def evaluate_scores(
    model: Any,
    known: KnownAnswers | Mapping[str, KnownAnswers],
    evaluations: pd.DataFrame,
    labels: Sequence[str],
    *,
    hits: Sequence[int] = DEFAULT_HITS,
    run_depth: int = 100,
    export: Sequence[str] = (),
    batch_size: int = 256,
    progress: bool = True,
) -> EvaluationPass:
    """The whole pass from a score function: items, micro detail, run lists and qrels
    (run lists and qrels of the ``export`` evaluations only, run lists ``run_depth`` deep),
    under every protocol of ``known`` (:func:`protocol_filters`)."""
    micro, runs = evaluation_pass(
        model,
        known,
        evaluations,
        run_depth=run_depth,
        export=export,
        batch_size=batch_size,
        progress=progress,
    )
    items = item_table(micro, runs, labels, hits)
    exported_runs = runs[runs["evaluation"].isin(list(export))].reset_index(drop=True)
    qrels = qrels_of(micro)
    return EvaluationPass(
        items=items,
        micro=micro,
        runs=exported_runs,
        qrels=qrels[qrels["evaluation"].isin(list(export))].reset_index(drop=True),
    )


def entity_labels(factories: Any) -> list[str]:
    """Entity labels in id order (the docnos of the TREC files)."""
    entity_to_id = factories.training.entity_to_id
    return sorted(entity_to_id, key=entity_to_id.get)


def evaluate_model(
    model: Any,
    factories: Any,
    evaluations: pd.DataFrame,
    *,
    filter_splits: Sequence[str] = DEFAULT_FILTER_SPLITS,
    hits: Sequence[int] = DEFAULT_HITS,
    run_depth: int = 100,
    export: Sequence[str] = (),
    batch_size: int = 256,
    progress: bool = True,
) -> EvaluationPass:
    """One pass of a trained model (``kgrank.training.train.load_model``) over ``evaluations``
    (kgc_sparsity's EVALUATION_COLUMNS) under both protocols, each filtering its
    :func:`kgrank.studies.ir.settings.protocol_filter_splits` of ``filter_splits``."""
    filters = {
        protocol: known_answers(factories, splits)
        for protocol, splits in protocol_filter_splits(filter_splits).items()
    }
    return evaluate_scores(
        model,
        filters,
        evaluations,
        entity_labels(factories),
        hits=hits,
        run_depth=run_depth,
        export=export,
        batch_size=batch_size,
        progress=progress,
    )


def micro_rank_table(
    micro: pd.DataFrame, evaluation: str, seed: int = 0, protocol: str | None = None
) -> pd.DataFrame:
    """The micro items of one evaluation as a kgrank rank table (RANK_TABLE_COLUMNS), so
    that kgrank.evaluation.metrics.evaluate_rank_table computes every registry metric on it.
    ``triple_id`` numbers the evaluation's distinct triples; the random rank is drawn as
    compute_ranks draws it (seeded, in table order: all head rows, then all tail rows).
    ``protocol`` picks one protocol's rows (default: the first of the pass)."""
    from kgrank.engine.ranks import random_tie_ranks

    if "protocol" in micro.columns:
        protocol = micro["protocol"].iloc[0] if protocol is None else protocol
        micro = micro[micro["protocol"] == protocol]
    selected = micro[micro["evaluation"] == evaluation]
    if selected.empty:
        raise KgrankInputError(f"evaluation {evaluation!r}: no items in this pass; choose one it scored")
    triples = (
        selected[["head", "relation", "tail"]].drop_duplicates().sort_values(["head", "relation", "tail"])
    )
    triples["triple_id"] = np.arange(len(triples))
    table = selected.merge(triples, on=["head", "relation", "tail"])
    table["side"] = pd.Categorical(table["side"], categories=list(SIDES))
    table = table.sort_values(["side", "triple_id"]).reset_index(drop=True)
    table["side"] = table["side"].astype(str)
    optimistic = table["optimistic"].to_numpy(dtype=np.int64)
    pessimistic = table["pessimistic"].to_numpy(dtype=np.int64)
    table["realistic"] = (optimistic + pessimistic) / 2.0
    table["random"] = random_tie_ranks(optimistic, pessimistic, seed)
    table["num_candidates"] = table["num_other"].to_numpy() + 1
    return table[list(RANK_TABLE_COLUMNS)]


def micro_metrics(
    micro: pd.DataFrame,
    evaluations: Sequence[str],
    hits: Sequence[int],
    seed: int,
    *,
    dataset: str,
    model: str,
) -> pd.DataFrame:
    """Every registry metric (kgrank.evaluation.metrics.evaluate_rank_table) of the micro items of
    each protocol and evaluation, as one tidy table led by dataset, model, protocol and
    evaluation; the random rank of each evaluation is drawn with ``seed``
    (:func:`micro_rank_table`), the same draw under every protocol."""
    chosen = metrics.default_metrics(hits)
    frames = []
    for protocol in dict.fromkeys(micro["protocol"]):
        for evaluation in evaluations:
            ranks = micro_rank_table(micro, evaluation, seed, protocol)
            table = metrics.evaluate_rank_table(ranks, chosen)
            frames.append(table.assign(protocol=protocol, evaluation=evaluation))
    table = pd.concat(frames, ignore_index=True)
    table.insert(0, "evaluation", table.pop("evaluation"))
    table.insert(0, "protocol", table.pop("protocol"))
    table.insert(0, "model", model)
    table.insert(0, "dataset", dataset)
    return table
