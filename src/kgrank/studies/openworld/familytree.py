"""The closed-world experiment of the open-world study: the family-tree graph of Yang,
Lin & Zhang 2022, where every true answer is known, evaluated twice per checkpoint,
against the sparse test answers a real benchmark would have and against the full ones.

Tail prediction only, as in the paper: each of the 500 queries (head, relation, ?) has
its answers; a query's metric is the mean over its answers, the reported metric the mean
over queries. Filtered setting: the training answers of the query and the other answers
of the same evaluation set leave the candidate list. Ranks come from kgrank's rank
engine (PyKEEN's scores, realistic ranks).
"""

from __future__ import annotations

import io
import re
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch
from pykeen.training.callbacks import TrainingCallback

from kgrank.data.io import text_lines
from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import Metric, Variant, derived_values, macro_mean_moments

EVALUATION_SETS = ("sparse", "full")
ANSWER_COLUMNS = ("head", "relation", "tail", "in_sparse_test")


# An id has at most this many digits: every such id fits an int64.
MAX_ID_DIGITS = 18
# The ids number the graph's entities (and relations) from 0, and the study sizes the entity
# table by the largest id. An id may lie at most this many times the graph's count of
# distinct entities (relations): the shared graph has 6,004 entity ids of which 5,994 to
# 6,004 occur at each density, so 2 leaves room for people a density drops, while a stray
# id (60000, or ten digits) cannot make the table more than twice the graph.
ID_TABLE_SLACK = 2


def _read_integers(path: Path, names: tuple[str, ...], header: bool) -> np.ndarray:
    """The rows of a tab-separated file of non-negative integer ids, one column per name;
    with ``header`` the first line must be the names. A missing or empty file, a line with
    the wrong number of fields or a field that is not an id stops with one line naming the
    file and the line."""
    if not path.is_file():
        raise KgrankInputError(
            f"{path}: file not found; point studies.openworld.family_tree.root at the data"
        )
    layout = ", ".join(names)
    id_field = rf"\d{{1,{MAX_ID_DIGITS}}}"
    row_pattern = re.compile("\t".join([id_field] * len(names)))
    rows: list[str] = []
    with path.open("rb") as handle:
        for line_number, line in text_lines(handle, str(path)):
            if header and line_number == 1:
                if line.split("\t") != list(names):
                    raise KgrankInputError(
                        f"{path}:1: header {line[:80]!r}; expected the tab-separated header {layout}"
                    )
                continue
            if row_pattern.fullmatch(line, 0) and line.isascii():
                rows.append(line)
                continue
            fields = line.split("\t")
            if len(fields) != len(names):
                raise KgrankInputError(
                    f"{path}:{line_number}: {len(fields)} tab-separated field(s), expected {len(names)} "
                    f"({layout}): {line[:80]!r}; fix or delete the line"
                )
            raise KgrankInputError(
                f"{path}:{line_number}: {line[:80]!r} is not a row of non-negative integer ids (at "
                f"most {MAX_ID_DIGITS} digits); fix or remove the line"
            )
    if not rows:
        what = "no line after the header" if header and path.stat().st_size else "empty"
        raise KgrankInputError(
            f"{path}: {what}; it needs {'its header and ' if header else ''}one line per "
            f"{'answer' if header else 'training triple'} ({layout}); restore the file"
        )
    # every line is checked: the C parser reads them as they are
    text = io.StringIO("\n".join(rows))
    return pd.read_csv(text, sep="\t", header=None, dtype=np.int64).to_numpy()


def _check_ids(kind: str, parts: Sequence[tuple[Path, np.ndarray, int]]) -> int:
    """The size of the graph's id table for ``kind`` (entity or relation): the largest id
    plus one, after checking every id against the graph's count of distinct ids (see
    ``ID_TABLE_SLACK``). ``parts``: (file, ids per row, lines before the first row)."""
    count = len(np.unique(np.concatenate([ids.ravel() for _, ids, _ in parts])))
    limit = ID_TABLE_SLACK * count
    for path, ids, offset in parts:
        beyond = np.flatnonzero((ids >= limit).any(axis=1))
        if len(beyond):
            row = int(beyond[0])
            value = int(ids[row][ids[row] >= limit][0])
            kinds = "entities" if kind == "entity" else "relations"
            raise KgrankInputError(
                f"{path}:{row + 1 + offset}: {kind} id {value} lies beyond the graph's {count:,} {kinds} "
                f"(ids number them from 0, and an id sizes the {kind} table: ids below {limit:,}, "
                f"{ID_TABLE_SLACK} times the count, pass); fix the id"
            )
    return int(max(ids.max() for _, ids, _ in parts)) + 1


@dataclass(frozen=True)
class FamilyTree:
    """One density of one variant: training triples and the answers of the 500 queries."""

    train: np.ndarray
    answers: pd.DataFrame  # head, relation, tail, in_sparse_test, query
    num_entities: int
    num_relations: int

    def answer_set(self, which: str) -> pd.DataFrame:
        if which not in EVALUATION_SETS:
            raise KgrankInputError(f"evaluation set {which!r}: use one of {EVALUATION_SETS}")
        return self.answers if which == "full" else self.answers[self.answers["in_sparse_test"] == 1]


def read_family_tree(folder: str | Path) -> FamilyTree:
    """``train.tsv`` (h, r, t ids, no header) and ``test_answers.tsv`` (with header)."""
    folder = Path(folder)
    path = folder / "test_answers.tsv"
    train = _read_integers(folder / "train.tsv", ("head", "relation", "tail"), header=False)
    values = _read_integers(path, ANSWER_COLUMNS, header=True)
    answers = pd.DataFrame(values, columns=list(ANSWER_COLUMNS))
    bad = np.flatnonzero(~answers["in_sparse_test"].isin([0, 1]).to_numpy())
    if len(bad):
        raise KgrankInputError(
            f"{path}:{int(bad[0]) + 2}: in_sparse_test {int(answers['in_sparse_test'].iloc[bad[0]])}; "
            "it must be 0 (a full answer only) or 1 (a sparse test answer too); fix the line"
        )
    num_entities = _check_ids(
        "entity", [(folder / "train.tsv", train[:, [0, 2]], 0), (path, values[:, [0, 2]], 1)]
    )
    num_relations = _check_ids(
        "relation", [(folder / "train.tsv", train[:, [1]], 0), (path, values[:, [1]], 1)]
    )
    answers["query"] = answers.groupby(["head", "relation"], sort=False).ngroup()
    sparse_per_query = answers.groupby("query")["in_sparse_test"].sum()
    if (sparse_per_query == 0).any():
        raise KgrankInputError(
            f"{path}: {(sparse_per_query == 0).sum()} queries have no sparse test answer; each needs one"
        )
    return FamilyTree(train=train, answers=answers, num_entities=num_entities, num_relations=num_relations)


def training_factory(tree: FamilyTree, create_inverse_triples: bool = False) -> Any:
    """A PyKEEN factory over the graph's own integer ids (label i is id i)."""
    from pykeen.triples import TriplesFactory

    return TriplesFactory(
        mapped_triples=torch.as_tensor(tree.train, dtype=torch.long),
        entity_to_id={str(index): index for index in range(tree.num_entities)},
        relation_to_id={str(index): index for index in range(tree.num_relations)},
        create_inverse_triples=create_inverse_triples,
    )


def filtered_ranks(model: Any, tree: FamilyTree, which: str, batch_size: int = 1024) -> pd.DataFrame:
    """Realistic tail ranks of every answer of one evaluation set, filtered by the query's
    training answers and the set's other answers: one :func:`kgrank.engine.score_pass.score_pass`
    over the answers' tail side, each block filtered by its queries' known tails."""
    from kgrank.engine.ranks import ranks_from_scores
    from kgrank.engine.score_pass import ScoreBlock, score_pass

    answers = tree.answer_set(which).reset_index(drop=True)
    # the known answers of each query in this evaluation: training tails and the set's own
    train = pd.DataFrame(tree.train, columns=["head", "relation", "tail"])
    queries = answers[["head", "relation", "query"]].drop_duplicates()
    known = pd.concat(
        [train.merge(queries, on=["head", "relation"]), answers[["head", "relation", "tail", "query"]]]
    ).drop_duplicates(["query", "tail"])
    known_by_query = {query: group["tail"].to_numpy() for query, group in known.groupby("query")}
    query_ids = answers["query"].to_numpy()
    parts = []

    def rank(block: ScoreBlock) -> None:
        columns = [known_by_query[query] for query in query_ids[block.positions]]
        rows = np.repeat(np.arange(len(columns)), [len(column) for column in columns])
        filters = torch.as_tensor(rows), torch.as_tensor(np.concatenate(columns))
        # its own filter, in place: the pass's only consumer
        parts.append(pd.DataFrame(ranks_from_scores(block.scores, block.true_entities, *filters)))

    triples = answers[["head", "relation", "tail"]].to_numpy(dtype=np.int64)
    score_pass(model, triples, [rank], sides=("tail",), batch_size=batch_size)
    ranks = pd.concat(parts, ignore_index=True)
    ranks["realistic"] = (ranks["optimistic"] + ranks["pessimistic"]) / 2.0
    return pd.concat([answers[["query", "head", "relation", "tail"]], ranks], axis=1)


def macro_rows(ranks: pd.DataFrame, metrics: Sequence[Metric]) -> list[dict]:
    """Each metric as the mean over queries of the mean over their answers, with its
    adjusted index and z-score (macro moments from the registry)."""
    rows = []
    realistic = ranks["realistic"].to_numpy(dtype=float)
    query = ranks["query"].to_numpy()
    num_candidates = ranks["num_candidates"].to_numpy()
    for metric in metrics:
        per_query = pd.Series(metric.transform.function(realistic)).groupby(query).mean()
        value = float(per_query.mean())
        moments = macro_mean_moments(metric, num_candidates, query)
        rows.append({"metric": metric.key, "label": metric.label, "variant": "value", "value": value})
        rows += [
            {"metric": derived.key, "label": metric.label, "variant": str(variant), "value": derived.value}
            for variant, derived in derived_values(metric, value, moments).items()
            if variant is not Variant.NORMALISED
        ]
    return rows


def read_graphs(folders: Mapping[str, str | Path]) -> dict[str, FamilyTree]:
    """The graph variants of one density. They share the training triples, the queries and
    the full answers, and differ only in which answers are sparse: one model per density
    and configuration serves all of them, and every checkpoint is compared on the same
    weights. Variants that do not share them are refused rather than mixed."""
    if not folders:
        raise KgrankInputError("family tree: no graph folder given; name at least one")
    trees = {graph: read_family_tree(folder) for graph, folder in folders.items()}
    first_graph, first = next(iter(trees.items()))
    columns = ["head", "relation", "tail"]
    for graph, tree in trees.items():
        if not (
            np.array_equal(tree.train, first.train) and tree.answers[columns].equals(first.answers[columns])
        ):
            raise KgrankInputError(
                f"{folders[graph]}: its train.tsv or its queries and full answers differ from those in "
                f"{folders[first_graph]}; the graphs of one density must share them (run them separately)"
            )
    return trees


class Checkpoints(TrainingCallback):
    """Evaluates the model every ``every`` epochs and after the last one on the full
    answers and on each graph's sparse answers; one row per (checkpoint, graph, set,
    metric variant), the full rows repeated for each graph."""

    def __init__(
        self, trees: Mapping[str, FamilyTree], metrics: Sequence[Metric], every: int, num_epochs: int
    ) -> None:
        super().__init__()
        self.trees, self.metrics, self.every, self.num_epochs = dict(trees), list(metrics), every, num_epochs
        self.rows: list[dict] = []
        self._started = time.perf_counter()

    def _evaluate(self, tree: FamilyTree, which: str) -> tuple[list[dict], int]:
        ranks = filtered_ranks(self.model, tree, which)
        return macro_rows(ranks, self.metrics), len(ranks)

    def post_epoch(self, epoch: int, epoch_loss: float, **kwargs: Any) -> None:
        if epoch % self.every and epoch != self.num_epochs:
            return
        full, full_answers = self._evaluate(next(iter(self.trees.values())), "full")
        summary = [f"full {_mrr(full):.4f}"]
        for graph, tree in self.trees.items():
            sparse, sparse_answers = self._evaluate(tree, "sparse")
            summary.append(f"{graph} sparse {_mrr(sparse):.4f}")
            for which, rows, answers in (("full", full, full_answers), ("sparse", sparse, sparse_answers)):
                self.rows += [
                    {
                        "graph": graph,
                        "epoch": epoch,
                        "loss": float(epoch_loss),
                        "evaluation": which,
                        "answers": answers,
                        **row,
                    }
                    for row in rows
                ]
        print(
            f"epoch {epoch}: MRR {', '.join(summary)} ({time.perf_counter() - self._started:.0f} s)",
            file=sys.stderr,
            flush=True,
        )


def _mrr(rows: list[dict]) -> float:
    return next(row["value"] for row in rows if row["metric"] == "inverse_harmonic_mean_rank")


def train_and_evaluate(
    folders: Mapping[str, str | Path],
    pipeline: Mapping[str, Any],
    metrics: Sequence[Metric],
    *,
    evaluate_every: int,
    seed: int,
    threads: int = 1,
    progress: bool = True,
    device: str = "cpu",
) -> pd.DataFrame:
    """Train one configuration on one density (graph variants share its training triples)
    with the 1-N step where it exists, evaluating every ``evaluate_every`` epochs; one row
    per (graph, epoch, set, metric variant); on ``device`` (``auto``: a GPU if present)."""
    from pykeen.utils import set_random_seed

    from kgrank.engine.threads import use_threads
    from kgrank.training.train import build_model, create_inverse_triples, fit, resolve_device

    use_threads(threads)
    trees = read_graphs(folders)
    set_random_seed(seed)
    factory = training_factory(next(iter(trees.values())), create_inverse_triples(pipeline))
    model = build_model(pipeline, factory, seed).to(resolve_device(device))
    num_epochs = int(pipeline["training_kwargs"]["num_epochs"])
    checkpoints = Checkpoints(trees, metrics, evaluate_every, num_epochs)
    fit(model, pipeline, factory, num_epochs=num_epochs, callbacks=[checkpoints], progress=progress)
    return pd.DataFrame(checkpoints.rows)
