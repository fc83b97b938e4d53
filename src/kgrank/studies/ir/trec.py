"""TREC run and qrels files of kgrank's run lists, and trec_eval's measures on them.

A query's qid is ``{side}-{query}`` (the query's dense id within its evaluation), a
document is an entity, named by its label. trec_eval orders a run by score and breaks
ties by document id, not by our rule (score descending, entity id ascending), so the
score written is derived from the position alone (``-position``: strictly decreasing
down the list) and any IR tool reads the list in our order. AP@20 and nDCG@20 are
trec_eval's ``map_cut_20`` and ``ndcg_cut_20``, computed by ir-measures with its
pytrec_eval backend rather than written here.
"""

from __future__ import annotations

import gzip
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from kgrank.data.io import atomic_path
from kgrank.errors import KgrankInputError
from kgrank.studies.ir.settings import PAPER

# run list rows: the query, its side, an entity and its 1-based position in the list
RUN_COLUMNS = ("query", "side", "entity", "position")
MEASURE_COLUMNS = ("qid", "ap_at_20", "ndcg_at_20")
MEASURES = {"ap_at_20": ir_measures.AP @ 20, "ndcg_at_20": ir_measures.nDCG @ 20}
# the cutoff of the measures: a run truncated here gives the same values
MEASURE_DEPTH = 20
RUN_TAG = "kgrank"
# The protocol whose run files every exported evaluation gets
RUN_PROTOCOL = PAPER


def run_file_name(evaluation: str, protocol: str) -> str:
    """``{evaluation}.run.gz`` for the paper protocol, ``{evaluation}.{protocol}.run.gz`` for
    another one."""
    return f"{evaluation}.run.gz" if protocol == RUN_PROTOCOL else f"{evaluation}.{protocol}.run.gz"


def run_files(runs: pd.DataFrame, evaluations: Iterable[str]) -> Iterator[tuple[str, str, pd.DataFrame]]:
    """(evaluation, protocol, run list) of every run file to write: the paper protocol's
    run of each evaluation, and another protocol's only where its run list differs from
    the paper's. On FB-Test-O the protocols coincide (its relevant answers are all its test
    answers), so its 200 MB file is not written twice; the runs of FB-Test-S and -S-C,
    where they differ, are small (1,023 triples)."""
    columns = list(RUN_COLUMNS)
    for evaluation in evaluations:
        chosen = runs[runs["evaluation"] == evaluation]
        by_protocol = {
            str(protocol): frame[columns].reset_index(drop=True)
            for protocol, frame in chosen.groupby("protocol", sort=False, observed=True)
        }
        if RUN_PROTOCOL not in by_protocol:
            raise KgrankInputError(
                f"run lists of {evaluation!r}: no {RUN_PROTOCOL!r} protocol; evaluate under it"
            )
        paper = by_protocol[RUN_PROTOCOL]
        yield evaluation, RUN_PROTOCOL, paper
        for protocol, run in by_protocol.items():
            if protocol != RUN_PROTOCOL and not run.equals(paper):
                yield evaluation, protocol, run


def _query_ids(side: Sequence[str] | np.ndarray, query: Sequence[int] | np.ndarray) -> pa.Array:
    sides = pa.array(np.asarray(side, dtype=str).astype(object), type=pa.string())
    queries = pc.cast(pa.array(np.asarray(query, dtype=np.int64)), pa.string())
    return pc.binary_join_element_wise(sides, queries, "-")


def query_ids(side: Sequence[str] | np.ndarray, query: Sequence[int] | np.ndarray) -> np.ndarray:
    """The stable TREC qid of each (side, query): ``{side}-{query}``."""
    return _query_ids(side, query).to_numpy(zero_copy_only=False)


def document_ids(entities: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """The docno of each entity id: its label (no whitespace, which would split a TREC line)."""
    labels = np.asarray(labels, dtype=str)
    names = labels[np.asarray(entities, dtype=np.int64)]
    spaced = np.char.count(names, " ") + np.char.count(names, "\t") > 0
    if spaced.any():
        raise KgrankInputError(
            f"entity label {names[spaced][0]!r} holds whitespace, which TREC files cannot carry; "
            "rename the entity in the dataset"
        )
    return names


def run_frame(run: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """ir-measures' run layout (query_id, doc_id, score) of run lists (RUN_COLUMNS)."""
    return pd.DataFrame(
        {
            "query_id": query_ids(run["side"], run["query"]),
            "doc_id": document_ids(run["entity"].to_numpy(), labels),
            "score": -run["position"].to_numpy(dtype=float),
        }
    )


def qrels_frame(qrels: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """ir-measures' qrels layout (query_id, doc_id, relevance) of relevant answers (query, side, entity)."""
    return pd.DataFrame(
        {
            "query_id": query_ids(qrels["side"], qrels["query"]),
            "doc_id": document_ids(qrels["entity"].to_numpy(), labels),
            "relevance": np.ones(len(qrels), dtype=np.int64),
        }
    )


# Files are written in chunks of this many lines: a full-depth run of FB15k-237's test
# queries has over 20 million lines, too many to hold as one string.
WRITE_CHUNK_ROWS = 200_000


def _write_lines(path: str | Path, chunks: Iterator[bytes]) -> None:
    """Write chunks of text atomically; gzip (level 6, mtime 0: the same lists give the same
    bytes) when the path ends in ``.gz``."""
    path = Path(path)
    with atomic_path(path) as temporary, temporary.open("wb") as handle:
        if path.name.endswith(".gz"):
            with gzip.GzipFile(fileobj=handle, mode="wb", compresslevel=6, mtime=0) as compressed:
                for chunk in chunks:
                    compressed.write(chunk)
        else:
            for chunk in chunks:
                handle.write(chunk)


# TREC lines through pyarrow's CSV writer: a space between fields, never quoted (a value
# that would need quotes raises instead; labels with whitespace are refused before).
TREC_LINES = pa_csv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none")


def _text(columns: dict[str, pa.Array]) -> bytes:
    buffer = pa.BufferOutputStream()
    pa_csv.write_csv(pa.table(columns), buffer, write_options=TREC_LINES)
    return buffer.getvalue().to_pybytes()


def write_run(path: str | Path, run: pd.DataFrame, labels: Sequence[str], tag: str = RUN_TAG) -> None:
    """A TREC run file ``qid Q0 docno rank score tag`` of run lists (RUN_COLUMNS); gzip for ``.gz``.

    The lines are formatted by pyarrow's CSV writer: formatted line by line in Python, the
    3.2 million lines of an FB15k-237 pass took 11.3 s to write, 5.1 s now (issue #30).
    """
    document_ids(np.unique(run["entity"].to_numpy()), labels)  # refuses labels with whitespace
    docnos = pa.array(np.asarray(labels, dtype=object), type=pa.string())

    def chunks() -> Iterator[bytes]:
        for start in range(0, len(run), WRITE_CHUNK_ROWS):
            part = run.iloc[start : start + WRITE_CHUNK_ROWS]
            position = part["position"].to_numpy(dtype=np.int64)
            yield _text(
                {
                    "qid": _query_ids(part["side"], part["query"]),
                    "q0": pa.repeat("Q0", len(part)),
                    "docno": docnos.take(pa.array(part["entity"].to_numpy(dtype=np.int64))),
                    "rank": pa.array(position),
                    "score": pa.array(-position),
                    "tag": pa.repeat(tag, len(part)),
                }
            )

    _write_lines(path, chunks())


def write_qrels(path: str | Path, qrels: pd.DataFrame, labels: Sequence[str]) -> None:
    """A TREC qrels file ``qid 0 docno 1`` of relevant answers (query, side, entity); gzip for ``.gz``."""

    def chunks() -> Iterator[str]:
        for start in range(0, len(qrels), WRITE_CHUNK_ROWS):
            frame = qrels_frame(qrels.iloc[start : start + WRITE_CHUNK_ROWS], labels)
            yield "".join(
                f"{qid} 0 {doc} 1\n" for qid, doc in zip(frame["query_id"], frame["doc_id"], strict=True)
            ).encode("utf-8")

    _write_lines(path, chunks())


def per_query_measures(run: pd.DataFrame, qrels: pd.DataFrame) -> pd.DataFrame:
    """AP@20 and nDCG@20 of every query of ``qrels`` (ir-measures layouts), by pytrec_eval.

    Columns MEASURE_COLUMNS; a query absent from the run scores 0 as in trec_eval with -c.
    """
    values: dict[str, dict[str, float]] = {column: {} for column in MEASURES}
    names = {str(measure): column for column, measure in MEASURES.items()}
    for metric in ir_measures.pytrec_eval.iter_calc(list(MEASURES.values()), qrels, run):
        values[names[str(metric.measure)]][metric.query_id] = metric.value
    qids = pd.unique(qrels["query_id"])
    return pd.DataFrame(
        {
            "qid": qids,
            **{column: [values[column].get(qid, 0.0) for qid in qids] for column in MEASURES},
        }
    )
