"""Part 2: tied scores (McSherry & Najork 2008; kge issue 221; trec_eval issue 22), on the
core's :mod:`kgrank.engine.ties`.

Two steps. (1) The rank width ``pessimistic - optimistic`` of every task of every evaluated
pair's rank table (external systems included): how often the true answer ties with another
candidate and how wide the block is; no scoring. (2) Per trained pair, a scoring pass over
the test tasks (every test triple, or a seeded subsample of them, the same for every model
of a dataset) under three scorers: the model's own scores, the same scores quantised to
``decimals`` decimals, and a constant score (every candidate tied). For each scorer and each
tie tolerance (:func:`kgrank.engine.ties.ranks_with_tolerance`, math.isclose semantics) the
filtered ranks give the mean width, the share of tied tasks and the MRR of optimistic,
realistic and pessimistic ranks. And each task becomes an IR query: its true answer the one
relevant document, its other filtered candidates non-relevant, the run its top ``depth``
candidates with their scores, extended to the end of the tie group at the cut-off so that
the group is whole. On these runs trec_eval's values (ir-measures/pytrec_eval, ties broken
by document id) under random renamings of the entities are set against the tie-neutral ones
(:func:`kgrank.engine.ties.trec_tie_sensitivity`). The IR part uses exact score equality, as
trec_eval does; the tolerance speaks of ranks only.

Cost. trec_eval through ir-measures costs ~7.5 µs per run row (measured: 1.45M rows, 11 s),
and a constant scorer's run holds every candidate (14,541 per query on FB15k-237, 40,943 on
WN18RR). So each scorer's queries are taken in the seeded order of the tasks until the next
one's run would pass ``max_run_rows`` rows (or ``max_queries`` queries): a prefix of a random
order, stopped at the first query that does not fit rather than skipping it, so that the
queries kept are not chosen for their short tie groups.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from kgrank.engine.ties import (
    EXACT,
    Tolerance,
    constant_scores,
    parse_measures,
    parse_tolerance,
    quantised_scores,
    rank_width_summary,
    ranks_with_tolerance,
    trec_tie_sensitivity,
)
from kgrank.errors import KgrankInputError
from kgrank.evaluation.stats import seed_sequence, seed_stream
from kgrank.studies.protocols.inputs import TIES_COLUMNS, TIES_WIDTH_COLUMNS
from kgrank.studies.protocols.settings import SCORERS

if TYPE_CHECKING:
    import torch

    from kgrank.engine.candidates import KnownAnswers

# the statistics of one (scorer, measure) of the IR part, as TieSensitivity's per_system has them
IR_STATISTICS = ("trec_eval", "minimum", "maximum", "spread", "changed_share", "tie_neutral")
RANKS_MEASURE_WIDTH, RANKS_MEASURE_MRR = "rank_width", "MRR"


@dataclass(frozen=True)
class TiesSettings:
    """What the scoring pass of part 2 computes; the profiles differ in ``max_test_triples``,
    ``max_queries``, ``max_run_rows`` and ``renamings`` (:meth:`limits`)."""

    scorers: tuple[str, ...]
    decimals: int
    tolerances: tuple[str, ...]
    max_test_triples: int | None
    depth: int
    measures: tuple[str, ...]
    renamings: int
    max_queries: int | None
    max_run_rows: int
    seed: int
    profile: str

    def __post_init__(self) -> None:
        if (
            not self.scorers
            or len(set(self.scorers)) != len(self.scorers)
            or set(self.scorers) - set(SCORERS)
        ):
            raise KgrankInputError(
                f"studies.protocols.ties.scorers {list(self.scorers)}: name each of {', '.join(SCORERS)} "
                "at most once"
            )
        names = [parse_tolerance(text).name for text in self.tolerances]
        if not names or len(set(names)) != len(names):
            raise KgrankInputError(
                f"studies.protocols.ties.tolerances {list(self.tolerances)}: pass at least one, each once"
            )
        for name in ("depth", "renamings", "max_run_rows", "max_test_triples", "max_queries"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise KgrankInputError(f"studies.protocols.ties.{name} {value}: pass 1 or more")
        cutoffs = [m.params.get("cutoff") or 0 for m in parse_measures(self.measures)]
        if max(cutoffs) > self.depth:
            raise KgrankInputError(
                f"studies.protocols.ties.depth {self.depth} is below the cut-off {max(cutoffs)} of "
                f"{list(self.measures)}; pass a depth of at least {max(cutoffs)}"
            )

    def parsed_tolerances(self) -> list[Tolerance]:
        return [parse_tolerance(text) for text in self.tolerances]

    def limits(self) -> str:
        """What the laptop and paper profiles set differently, in one phrase."""
        triples = (
            "every test triple"
            if self.max_test_triples is None
            else (f"at most {self.max_test_triples} test triples per dataset (seeded)")
        )
        queries = "" if self.max_queries is None else f"at most {self.max_queries} queries, "
        return (
            f"{triples}; IR queries per scorer: {queries}runs of at most {self.max_run_rows} rows; "
            f"{self.renamings} renamings"
        )

    def describe(self) -> str:
        return f"{self.profile}; {self.limits()}"


def _row(dataset: str, model: str, scorer: str, tolerance: str, measure: str, statistic: str,
         value: float, tasks: int, settings: str) -> dict:  # fmt: skip
    return {
        "dataset": dataset,
        "model": model,
        "scorer": scorer,
        "tolerance": tolerance,
        "measure": measure,
        "statistic": statistic,
        "value": float(value),
        "tasks": int(tasks),
        "settings": settings,
    }


# ---------------------------------------------------------------------------------------
# step 1: rank widths from the rank tables
# ---------------------------------------------------------------------------------------


def width_table(tables: Mapping[tuple[str, str], pd.DataFrame]) -> pd.DataFrame:
    """:func:`kgrank.engine.ties.rank_width_summary` of every (dataset, model) rank table."""
    if not tables:
        raise KgrankInputError("--ranks: no rank table given; pass <dataset>/<model>.parquet files")
    frames = [
        rank_width_summary(table).assign(dataset=dataset, model=model)
        for (dataset, model), table in tables.items()
    ]
    return pd.concat(frames, ignore_index=True)[list(TIES_WIDTH_COLUMNS)]


# ---------------------------------------------------------------------------------------
# step 2: the scoring pass of one trained pair
# ---------------------------------------------------------------------------------------


def chosen_triples(num_triples: int, max_test_triples: int | None, seed: int, dataset: str) -> np.ndarray:
    """Test triple indices in a seeded random order (its own stream per dataset, so every
    model of a dataset gets the same triples in the same order), cut to ``max_test_triples``."""
    order = seed_stream(seed, "protocols-ties", dataset).permutation(num_triples)
    return order if max_test_triples is None else order[:max_test_triples]


def stress_scores(scores: torch.Tensor, scorer: str, decimals: int) -> torch.Tensor:
    """The block a scorer gives: the model's scores, quantised, or constant (a new tensor)."""
    if scorer == "model":
        return scores.clone()
    if scorer == "quantised":
        return quantised_scores(scores, decimals)
    if scorer == "constant":
        return constant_scores(scores)
    raise KgrankInputError(f"scorer {scorer!r}: use one of {', '.join(SCORERS)}")


def top_run(filtered: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(entity ids, scores) of one task's run: its filtered candidates (non-NaN) scoring at
    least the ``depth``-th highest score, i.e. the top ``depth`` extended to the end of the
    tie group at the cut-off (every candidate when it has ``depth`` or fewer)."""
    candidates = np.flatnonzero(~np.isnan(filtered))
    values = filtered[candidates]
    if len(values) > depth:
        threshold = np.partition(values, len(values) - depth)[len(values) - depth]
        kept = values >= threshold
        candidates, values = candidates[kept], values[kept]
    return candidates, values


class _RunBudget:
    """Queries of one scorer taken in order until the next run would pass the budget."""

    def __init__(self, max_queries: int | None, max_rows: int):
        self.max_queries, self.max_rows = max_queries, max_rows
        self.rows, self.closed = 0, False
        self.frames: list[pd.DataFrame] = []
        self.queries: list[tuple[str, int]] = []

    def offer(self, query: str, truth: int, entities: np.ndarray, values: np.ndarray) -> None:
        if self.closed:
            return
        if (self.max_queries is not None and len(self.queries) >= self.max_queries) or (
            self.rows + len(entities) > self.max_rows
        ):
            self.closed = True  # stop, never skip: the queries kept stay a random prefix
            return
        self.rows += len(entities)
        self.queries.append((query, truth))
        self.frames.append(pd.DataFrame({"query_id": query, "doc_id": entities, "score": values}))

    def run_and_qrels(self) -> tuple[pd.DataFrame, pd.DataFrame]:
        run = pd.concat(self.frames, ignore_index=True)
        qrels = pd.DataFrame(self.queries, columns=["query_id", "doc_id"]).assign(relevance=1)
        return run, qrels


def pair_ties(
    score: Any,
    test_triples: np.ndarray,
    known: KnownAnswers,
    dataset: str,
    model: str,
    settings: TiesSettings,
    *,
    batch_size: int = 256,
) -> pd.DataFrame:
    """Part 2's scoring pass of one (dataset, model): the tidy rows (TIES_COLUMNS).

    ``score``: the PyKEEN model (``model`` is its name), or any score function
    ``(triples, side) -> (n, entities)`` float scores, scored in one
    :func:`kgrank.engine.score_pass.score_pass` over the chosen test triples; ``known`` is a
    :class:`kgrank.engine.candidates.KnownAnswers` (the filter).
    Rank rows (measure ``rank_width``: statistics ``mean``, ``tied_share``; measure ``MRR``:
    one statistic per rank type) per scorer and tolerance over every chosen task; IR rows
    (tolerance ``exact``) per scorer and measure: IR_STATISTICS over the scorer's queries."""
    # here: the tables and widths of `protocols-ties` need no torch
    from kgrank.engine.ranks import ranks_from_scores
    from kgrank.engine.score_pass import ScoreBlock, score_pass
    from kgrank.evaluation.metrics import lookup

    test_triples = np.asarray(test_triples, dtype=np.int64)
    if test_triples.ndim != 2 or test_triples.shape[1] != 3 or len(test_triples) == 0:
        raise KgrankInputError(
            f"{dataset}: no test triples (shape {test_triples.shape}); rebuild the dataset"
        )
    order = chosen_triples(len(test_triples), settings.max_test_triples, settings.seed, dataset)
    tolerances = settings.parsed_tolerances()
    ranks: dict[tuple[str, str], dict[str, list[np.ndarray]]] = {
        (scorer, t.name): {"optimistic": [], "pessimistic": []}
        for scorer in settings.scorers
        for t in tolerances
    }
    budgets = {scorer: _RunBudget(settings.max_queries, settings.max_run_rows) for scorer in settings.scorers}

    def rank_with_tolerances(block: ScoreBlock) -> None:
        triple_ids = order[block.positions]
        filters = (block.filter_rows, block.filter_cols)
        for scorer in settings.scorers:
            stressed = stress_scores(block.scores, scorer, settings.decimals)
            for tolerance in tolerances:
                # ranks_with_tolerance filters its block in place (NaN on the known
                # answers but the true one): each tolerance gets its own copy, and the
                # last filtered copy gives the IR runs
                filtered = stressed.clone()
                if tolerance.name == EXACT:
                    # the same ranks (kgrank.engine.ties' docstring and tests), without the
                    # float64 tie mask that is most of this pass's cost
                    result = ranks_from_scores(filtered, block.true_entities, *filters)
                else:
                    result = ranks_with_tolerance(
                        filtered, block.true_entities, *filters,
                        absolute=tolerance.absolute, relative=tolerance.relative,
                    )  # fmt: skip
                for name in ("optimistic", "pessimistic"):
                    ranks[(scorer, tolerance.name)][name].append(result[name])
            budget = budgets[scorer]
            if budget.closed:
                continue
            filtered = filtered.double().numpy()
            for row, triple in enumerate(triple_ids):
                entities, values = top_run(filtered[row], settings.depth)
                budget.offer(f"{block.side}:{int(triple)}", int(block.true_entities[row]), entities, values)

    # batch by batch (head, then tail of each), the order in which the run budget takes queries
    score_pass(
        score, test_triples[order], [rank_with_tolerances], known=known, batch_size=batch_size, by_batch=True
    )
    described = settings.describe()
    mrr = lookup("inverse_harmonic_mean_rank").metric
    rows = []
    for (scorer, tolerance), columns in ranks.items():
        optimistic = np.concatenate(columns["optimistic"]).astype(float)
        pessimistic = np.concatenate(columns["pessimistic"]).astype(float)
        width = pessimistic - optimistic
        values = {
            (RANKS_MEASURE_WIDTH, "mean"): width.mean(),
            (RANKS_MEASURE_WIDTH, "tied_share"): (width > 0).mean(),
            (RANKS_MEASURE_MRR, "optimistic"): mrr.value(optimistic),
            (RANKS_MEASURE_MRR, "realistic"): mrr.value((optimistic + pessimistic) / 2),
            (RANKS_MEASURE_MRR, "pessimistic"): mrr.value(pessimistic),
        }
        rows += [
            _row(dataset, model, scorer, tolerance, measure, statistic, value, len(width), described)
            for (measure, statistic), value in values.items()
        ]
    for scorer in settings.scorers:
        budget = budgets[scorer]
        if not budget.queries:
            raise KgrankInputError(
                f"studies.protocols.ties.max_run_rows {settings.max_run_rows}: the first {scorer} run of "
                f"{dataset}/{model} is longer; raise it above the dataset's entity count"
            )
        run, qrels = budget.run_and_qrels()
        renaming_seed = int(
            seed_sequence(settings.seed, "protocols-ties", dataset, model, scorer).generate_state(1)[0]
        )
        sensitivity = trec_tie_sensitivity(run, qrels, settings.measures, settings.renamings, renaming_seed)
        for record in sensitivity.per_system.itertuples(index=False):
            for statistic in IR_STATISTICS:
                rows.append(
                    _row(dataset, model, scorer, EXACT, str(record.measure), statistic,
                         float(getattr(record, statistic)), len(qrels), described)
                )  # fmt: skip
        rows.append(
            _row(dataset, model, scorer, EXACT, "run", "rows", float(len(run)), len(qrels), described)
        )
    return pd.DataFrame(rows, columns=list(TIES_COLUMNS))
