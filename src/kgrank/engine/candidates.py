"""Known answers and candidate counts: what the filtered setting removes from each ranking.

Under the random model every metric's expectation and variance depend only on the
candidate counts N_i, and in the filtered setting those depend only on the dataset:
N_i = entities - (known answers of the query) + 1. So they are a property of
(dataset, split, side), independent of any model; the rank engine, the moments lookup
table and every study that adjusts a metric share this one definition.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import scipy.sparse

from kgrank.data.datasets import SPLITS, load_mapped_dataset
from kgrank.data.io import FileCache
from kgrank.data.rank_table import SIDES, SIDES_AND_BOTH, select_side
from kgrank.defaults import DEFAULT_FILTER_SPLITS


class KnownAnswers:
    """Index of known true triples: for a query (h, r, ?) or (?, r, t), its answers.

    Stored as two sparse 0/1 matrices whose rows are queries (entity * R + relation) and
    whose columns are entities, so a batch of queries gets all its answers in one
    sparse row selection instead of a Python loop.
    """

    def __init__(self, mapped_triples: Sequence[Any], num_entities: int, num_relations: int):
        parts = [np.asarray(t, dtype=np.int64).reshape(-1, 3) for t in mapped_triples]
        triples = np.concatenate(parts) if parts else np.empty((0, 3), dtype=np.int64)
        self.num_entities = num_entities
        self.num_relations = num_relations
        heads, relations, tails = triples.T
        self._answers = {
            "tail": _answer_matrix(
                heads * num_relations + relations, tails, num_entities * num_relations, num_entities
            ),
            "head": _answer_matrix(
                tails * num_relations + relations, heads, num_entities * num_relations, num_entities
            ),
        }

    def answers(self, side: str, batch: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(row in batch, entity) of every known answer of each query in ``batch`` (n, 3)."""
        anchor = batch[:, 2] if side == "head" else batch[:, 0]
        rows = self._answers[side][anchor * self.num_relations + batch[:, 1]]
        return rows.nonzero()


def _answer_matrix(
    queries: np.ndarray, answers: np.ndarray, num_queries: int, num_entities: int
) -> scipy.sparse.csr_matrix:
    """The 0/1 (query x entity) matrix holding each (query, answer) pair once, built from
    one sort of a single int64 key per pair, its row pointers counted directly: np.unique
    over the triples and scipy's (row, column) constructor took 0.46 s for FB15k-237's
    two matrices, which every ranking paid (0.08 s this way)."""
    keys = np.sort(queries * num_entities + answers)
    # each pair once, by hand: numpy 2's np.unique hashes integers first, 0.23 s here
    keys = keys[np.diff(keys, prepend=-1) != 0]
    rows, columns = np.divmod(keys, num_entities)
    index_type = np.int32 if max(len(keys), num_entities) < np.iinfo(np.int32).max else np.int64
    indptr = np.zeros(num_queries + 1, dtype=index_type)
    np.cumsum(np.bincount(rows, minlength=num_queries), out=indptr[1:])
    return scipy.sparse.csr_matrix(
        (np.ones(len(keys), dtype=np.int8), columns.astype(index_type), indptr),
        shape=(num_queries, num_entities),
    )


def known_answers(factories: Any, filter_splits: Sequence[str] = DEFAULT_FILTER_SPLITS) -> KnownAnswers:
    """The known answers of a dataset's ``filter_splits``, indexed by its training ids
    (``factories``: a ``Factories`` or a ``MappedDataset``)."""
    return KnownAnswers(
        factories.mapped(tuple(filter_splits)), factories.num_entities, factories.num_relations
    )


# kept while the dataset's files stay as they were: every rank table read on a dataset
# (`kgrank compare` reads one per system) checks its counts against the same ones
_COUNTS = FileCache(size=4)


def candidate_counts(
    dataset_dir: str | Path, split: str, filter_splits: Sequence[str] = DEFAULT_FILTER_SPLITS
) -> pd.DataFrame:
    """Filtered candidate count of every (triple, side) of a split: side, num_candidates."""
    return _COUNTS.get(
        [Path(dataset_dir) / f"{name}.tsv" for name in SPLITS],
        (split, tuple(filter_splits)),
        lambda: _candidate_counts(dataset_dir, split, filter_splits),
    ).copy()


def _candidate_counts(dataset_dir: str | Path, split: str, filter_splits: Sequence[str]) -> pd.DataFrame:
    dataset = load_mapped_dataset(dataset_dir, tuple(dict.fromkeys((*filter_splits, split))))
    known = known_answers(dataset, filter_splits)
    mapped = dataset.mapped((split,))[0]
    frames = []
    for side in SIDES:
        rows, entities = known.answers(side, mapped)
        true_entities = mapped[:, 0] if side == "head" else mapped[:, 2]
        # every known answer leaves the list but the evaluated one, whichever splits hold it
        others = np.bincount(rows[entities != true_entities[rows]], minlength=len(mapped))
        frames.append(pd.DataFrame({"side": side, "num_candidates": dataset.num_entities - others}))
    return pd.concat(frames, ignore_index=True)


def counts_by_side(counts: pd.DataFrame) -> dict[str, np.ndarray]:
    """The candidate counts of head, tail and both sides, from a ``candidate_counts`` table."""
    return {side: select_side(counts, side)["num_candidates"].to_numpy() for side in SIDES_AND_BOTH}
