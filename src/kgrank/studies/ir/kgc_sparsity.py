"""The kgc-sparsity data of Zhou et al. (2022), read through a prepared dataset's PyKEEN ids.

The folder holds FB-Test-S (a seeded sample of the raw FB15k-237 test file), FB-Test-S-C
(the sample plus the pooled candidates that people judged relevant, with the pool depth at
which each candidate entered) and FB-Test-O's queries and relation categories. Here they
become evaluation sets, one row per (evaluation, relevant triple) in training ids:

- ``test``: the prepared test split; ``sample``: FB-Test-S; ``pooled``: FB-Test-S-C's test.txt;
- ``pooled-d{d}``: FB-Test-S plus the pooled candidates labelled Y whose depth is <= d.

Every file is counted as read and after dropping triples whose entities or relation are
unseen in training (what PyKEEN, and so every model, can score). Such rows are dropped, not
refused: the published files hold them legitimately. FB15k-237's raw test file has 28
triples with an entity absent from its training split; FB-Test-S drew one of them (entity
/m/0jvq), and FB-Test-S-C pooled and judged 45 more candidates of that entity. The counts
table gives, per file, the rows dropped and the unknown entities and relations by number
and by name, and one line on standard error names them once per run.

The relation distributions the paper compares (Sec. 3.2: FB-Test-S against FB-Test-O,
FB-Test-O against the whole graph, FB-Test-S-C against FB-Test-O) are read from the raw
files, every row as published, and compared by Kullback-Leibler divergence
(:func:`relation_divergences`).
"""

from __future__ import annotations

import random
import re
import sys
import tarfile
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import entropy

from kgrank.data.datasets import SPLITS, load_factories, pykeen_raw_splits, read_archive_splits, read_triples
from kgrank.data.io import text_lines
from kgrank.errors import KgrankInputError

SAMPLES = "FB-Test-S/samples.txt"
SAMPLE_INDICES = "FB-Test-S/sample_idxs.txt"
ANNOTATIONS = "FB-Test-S-C/annotations.txt"
POOLED_TEST = "FB-Test-S-C/test.txt"
POOLED_QUERIES = "FB-Test-S-C/trec_queries.txt"
POOLING_DEPTH = "FB-Test-S-C/supplementary/pooling_depth.txt"
FILTERED = "FB-Test-S-C/supplementary/filtered.txt"
HUMAN_LABELED = "FB-Test-S-C/supplementary/human_labeled.txt"
TEST_QUERIES = "FB-Test-O/trec_queries.txt"
ENTITY_NAMES = "FB-Test-O/mid2name.txt"
CATEGORY_FILES = {
    "1-1": "FB-Test-O/type_information/one_to_one.txt",
    "1-N": "FB-Test-O/type_information/one_to_many.txt",
    "N-1": "FB-Test-O/type_information/many_to_one.txt",
    "N-N": "FB-Test-O/type_information/many_to_many.txt",
}
UNKNOWN_CATEGORY = "unknown"
# FB-Test-S is random.Random(SAMPLE_SEED).sample(range(test lines), sample size), sorted.
SAMPLE_SEED = 42
# A line index of sample_idxs.txt has at most this many digits (an int64).
MAX_INDEX_DIGITS = 18

EVALUATION_COLUMNS = ("evaluation", "head", "relation", "tail")
# ``names``: the labels a count is of, comma-separated (the unknown entities and relations
# of a file); empty for every other count.
COUNT_COLUMNS = ("file", "quantity", "value", "names")
LABELS = ("Y", "N")
QUERY_ID = re.compile(r"^(head|tail)\d+$")


# The pool depths of pooling_depth.txt: Zhou et al. pooled the systems' runs to depth 10,
# and each depth up to the largest becomes an evaluation set every system is evaluated on.
MAX_POOL_DEPTH = 100
# The files whose rows become evaluation sets: a row with an unknown label is dropped there.
EVALUATION_FILES = (SAMPLES, POOLED_TEST, ANNOTATIONS, FILTERED, HUMAN_LABELED, POOLING_DEPTH)
# How many unknown labels a message names before it counts the rest.
NAMES_SHOWN = 5


def shown_names(names: str, limit: int = NAMES_SHOWN) -> str:
    """Comma-separated ``names`` cut to the first ``limit`` and a count of the rest."""
    labels = [label for label in names.split(",") if label]
    shown = ", ".join(labels[:limit])
    return shown + (f" and {len(labels) - limit} more" if len(labels) > limit else "")


def _pool_depth(field: str, line_number: int) -> int:
    if not (field.isascii() and field.isdigit() and 1 <= int(field) <= MAX_POOL_DEPTH):
        raise KgrankInputError(
            f"{POOLING_DEPTH}:{line_number}: pool depth {field[:40]!r} is not a whole number from 1 to "
            f"{MAX_POOL_DEPTH}; fix the 4th field"
        )
    return int(field)


def _dropped_note(vocabulary: _Vocabulary, dataset_dir: Path) -> str | None:
    """One line on the rows of the evaluation files dropped for labels unknown to training,
    or None when none was."""
    entities: Counter = Counter()
    relations: Counter = Counter()
    for file in EVALUATION_FILES:
        unknown = vocabulary.unknown.get(file, _Unknown())
        entities.update(unknown.entities)
        relations.update(unknown.relations)
    if not entities and not relations:
        return None
    parts = []
    for (one, many), counter in ((("entity", "entities"), entities), (("relation", "relations"), relations)):
        if counter:
            parts.append(
                f"{len(counter)} {one if len(counter) == 1 else many} ({shown_names(_by_rows(counter))})"
            )
    return (
        f"rows naming {' and '.join(parts)} unknown to the training split of {dataset_dir} dropped "
        "(what no model can score); rows_dropped, unknown_entities and unknown_relations in the "
        "counts table give them per file"
    )


def depth_evaluation(depth: int) -> str:
    """The name of the evaluation set of pooling depth ``depth``."""
    return f"pooled-d{depth}"


@dataclass(frozen=True)
class KgcSparsity:
    """The evaluation sets, the counts of every file read and the relation categories."""

    evaluations: pd.DataFrame  # EVALUATION_COLUMNS
    counts: pd.DataFrame  # COUNT_COLUMNS
    relations: pd.DataFrame  # relation, label, category
    divergences: pd.DataFrame  # DIVERGENCE_COLUMNS


def read_fields(
    path: Path, num_fields: int, source: str, empty_last: bool = False, allow_empty: bool = False
) -> list[list[str]]:
    """The tab-separated rows of a file, each with ``num_fields`` fields; a missing or empty
    file (unless ``allow_empty``) or a malformed line stops with one line naming ``source``
    (and the line). Fields are kept as written (a label's stray spaces are judged by the
    caller); with ``empty_last`` the last field may be empty (a label left blank). Blank
    lines are malformed too, so that row i is line i + 1 in every message."""
    if not path.is_file():
        raise KgrankInputError(f"{source}: file not found; restore the kgc-sparsity folder")
    rows = []
    with path.open("rb") as handle:
        for line_number, line in text_lines(handle, source):
            fields = line.split("\t")
            required = fields[:-1] if empty_last else fields
            if len(fields) != num_fields or any(not field.strip() for field in required):
                raise KgrankInputError(
                    f"{source}:{line_number}: expected {num_fields} non-empty tab-separated fields, "
                    f"found {len(fields)}: {line[:80]!r}; fix or delete this line"
                )
            rows.append(fields)
    if not rows and not allow_empty:
        raise KgrankInputError(f"{source}: empty; restore the kgc-sparsity folder")
    return rows


# A raw test source `pykeen:<name>`: the test file of a PyKEEN dataset class (the network path).
PYKEEN_SOURCE = "pykeen:"


def raw_splits(source: str | Path, test_only: bool = False) -> dict[str, np.ndarray]:
    """The raw triples (labels, file order, nothing dropped) of the test split of an archive
    holding test.txt, of a PyKEEN dataset named `pykeen:<name>` or of a plain triple file,
    and of the archive's or dataset's train and valid splits where it holds them (they
    only feed the relation divergence against the whole graph)."""
    if str(source).startswith(PYKEEN_SOURCE):
        name = str(source).removeprefix(PYKEEN_SOURCE)
        read = lambda splits, missing_ok=False: pykeen_raw_splits(name, splits, missing_ok)  # noqa: E731
    else:
        source = Path(source)
        if not source.is_file():
            raise KgrankInputError(f"{source}: raw test file or archive not found; fix the path")
        if not tarfile.is_tarfile(source):
            return {"test": read_triples(source)}
        read = lambda splits, missing_ok=False: read_archive_splits(source, splits, missing_ok=missing_ok)  # noqa: E731
    raw = read(("test",))
    if test_only:
        return raw
    # no train or valid beside the test split: no whole graph to compare with; a damaged one
    # is refused as the test split would be
    others = read(tuple(split for split in SPLITS if split != "test"), True)
    return raw | others if len(others) == len(SPLITS) - 1 else raw


# The relation distributions compared in Zhou et al. (2022), Sec. 3.2, as (first, second).
SAMPLE_SET, POOLED_SET, TEST_SET, WHOLE_GRAPH = "FB-Test-S", "FB-Test-S-C", "FB-Test-O", "train+valid+test"
DIVERGENCE_PAIRS = ((SAMPLE_SET, TEST_SET), (TEST_SET, WHOLE_GRAPH), (POOLED_SET, TEST_SET))
DIVERGENCE_COLUMNS = (
    *("first", "second", "first_triples", "second_triples", "relations"),
    *("smoothing", "kl_second_first", "kl_first_second"),
)
# The paper prints the divergences without their smoothing, log base or direction. Add-one
# smoothing over the relations of both sets, the natural log and KL(second || first) come
# closest to all three printed values (0.2790 against 0.2789, 0.2362 against 0.2386, 0.0810
# against 0.0889); no smoothing in {0, 1e-12 .. 1}, base in {e, 2, 10} or direction gives
# all three (docs/studies/ir.md).
DIVERGENCE_SMOOTHING = 1.0


def relation_divergences(
    relations: dict[str, np.ndarray], smoothing: float = DIVERGENCE_SMOOTHING
) -> pd.DataFrame:
    """KL divergences (natural log) between the relation distributions of the sets in
    ``relations`` (set name -> the relation label of every row), for each pair of
    :data:`DIVERGENCE_PAIRS` whose sets are both given; each count is raised by
    ``smoothing`` over the union of the two sets' relations, so that neither divergence
    is infinite."""
    rows = []
    for first, second in DIVERGENCE_PAIRS:
        if first not in relations or second not in relations:
            continue
        union, inverse = np.unique(np.concatenate([relations[first], relations[second]]), return_inverse=True)
        split = len(relations[first])
        first_counts = np.bincount(inverse[:split], minlength=len(union)) + smoothing
        second_counts = np.bincount(inverse[split:], minlength=len(union)) + smoothing
        rows.append(
            {
                "first": first,
                "second": second,
                "first_triples": split,
                "second_triples": len(relations[second]),
                "relations": len(union),
                "smoothing": smoothing,
                # scipy's entropy(p, q) normalises both and sums p log(p / q)
                "kl_second_first": float(entropy(second_counts, first_counts)),
                "kl_first_second": float(entropy(first_counts, second_counts)),
            }
        )
    return pd.DataFrame(rows, columns=list(DIVERGENCE_COLUMNS))


def check_sample(kgc_dir: str | Path, raw_test: np.ndarray) -> tuple[int, int]:
    """Reproduce FB-Test-S: the sorted seeded sample of line numbers of the raw test file
    must equal sample_idxs.txt and those lines must equal samples.txt. Returns
    (raw test lines, sample size); the sizes are read, not assumed."""
    kgc_dir = Path(kgc_dir)
    samples = read_fields(kgc_dir / SAMPLES, 3, SAMPLES)
    indices_rows = read_fields(kgc_dir / SAMPLE_INDICES, 1, SAMPLE_INDICES)
    indices = []
    for line_number, (written,) in enumerate(indices_rows, start=1):
        if not (written.isascii() and written.isdigit() and len(written) <= MAX_INDEX_DIGITS):
            raise KgrankInputError(
                f"{SAMPLE_INDICES}:{line_number}: {written[:40]!r} is not a line index of the raw test "
                "file (a non-negative integer); restore the file"
            )
        indices.append(int(written))

    def draw(size: int) -> list[int]:
        return sorted(random.Random(SAMPLE_SEED).sample(range(len(raw_test)), min(size, len(raw_test))))

    def lines_at(drawn: list[int]) -> list[list[str]]:
        return [[str(field) for field in raw_test[index]] for index in drawn]

    expected = draw(len(samples))
    if indices != expected:
        # Which of the three is damaged: where the raw test file and samples.txt agree on the
        # seeded draw, sample_idxs.txt is; where the raw file and sample_idxs.txt agree,
        # samples.txt is; otherwise the raw test file is not the one drawn from.
        drawn = f"sorted(random.Random({SAMPLE_SEED}).sample(range({len(raw_test)}), {len(samples)}))"
        if lines_at(expected) == samples:
            first = next((i for i, (a, b) in enumerate(zip(indices, expected, strict=False)) if a != b), None)
            if first is None:  # one list is the start of the other
                raise KgrankInputError(
                    f"{SAMPLE_INDICES}: {len(indices)} lines where {SAMPLES} has {len(samples)} (the raw "
                    f"test file and {SAMPLES} agree on {drawn}); restore sample_idxs.txt"
                )
            raise KgrankInputError(
                f"{SAMPLE_INDICES}:{first + 1}: {indices[first]}, where {drawn} gives {expected[first]} "
                f"(the raw test file and {SAMPLES} agree on it); restore sample_idxs.txt"
            )
        if len(indices) != len(samples) and draw(len(indices)) == indices:
            raise KgrankInputError(
                f"{SAMPLES}: {len(samples)} lines where {SAMPLE_INDICES} and the seeded draw over the raw "
                f"test file give {len(indices)}; restore samples.txt"
            )
        first = next((i for i, (a, b) in enumerate(zip(indices, expected, strict=False)) if a != b), None)
        where = f"line {first + 1}" if first is not None else f"{len(indices)} lines vs {len(expected)}"
        raise KgrankInputError(
            f"{SAMPLE_INDICES}: {where} differs from {drawn}; give the raw test file the sample was "
            "drawn from"
        )
    for line_number, (index, row) in enumerate(zip(indices, samples, strict=True), start=1):
        line = [str(field) for field in raw_test[index]]
        if line != row:
            raise KgrankInputError(
                f"{SAMPLES}:{line_number}: {row} is not line {index} of the raw test file "
                f"({line}); give the raw test file the sample was drawn from"
            )
    return len(raw_test), len(samples)


def _by_rows(counter: Counter) -> str:
    """The labels of ``counter`` comma-separated, most rows first, then by label."""
    return ",".join(label for label, _ in sorted(counter.items(), key=lambda item: (-item[1], item[0])))


@dataclass
class _Unknown:
    """The labels of one file unknown to training, each with the rows it drops."""

    entities: Counter = field(default_factory=Counter)
    relations: Counter = field(default_factory=Counter)

    def count_rows(self, rows_read: int, rows_kept: int) -> dict[str, tuple[int, str]]:
        """The quantities of the counts table: rows dropped, and the unknown entities and
        relations by number and by name (most rows first, then by label)."""
        return {
            "rows_dropped": (rows_read - rows_kept, ""),
            "unknown_entities": (len(self.entities), _by_rows(self.entities)),
            "unknown_relations": (len(self.relations), _by_rows(self.relations)),
        }


class _Vocabulary:
    """Label -> training id, and the labels unknown to training of each file read."""

    def __init__(self, training: Any):
        self.entity_to_id = training.entity_to_id
        self.relation_to_id = training.relation_to_id
        self.unknown: dict[str, _Unknown] = {}

    def map_triples(self, rows: Iterable[list[str]], file: str) -> tuple[np.ndarray, np.ndarray]:
        """(ids of the rows whose head, relation and tail are known to training, their mask);
        the unknown labels of ``file`` are counted."""
        unknown = self.unknown.setdefault(file, _Unknown())
        ids, keep = [], []
        for row in rows:
            head, relation, tail = (value.strip() for value in row[:3])
            missing = [entity for entity in (head, tail) if entity not in self.entity_to_id]
            unknown.entities.update(missing)
            if relation not in self.relation_to_id:
                unknown.relations[relation] += 1
            seen = not missing and relation in self.relation_to_id
            keep.append(seen)
            if seen:
                ids.append((self.entity_to_id[head], self.relation_to_id[relation], self.entity_to_id[tail]))
        return np.asarray(ids, dtype=np.int64).reshape(-1, 3), np.asarray(keep, dtype=bool)

    def dropped_rows(self, file: str, rows_read: int, rows_kept: int) -> list[dict]:
        """The counts rows of the rows ``file`` lost to unknown labels."""
        quantities = self.unknown.setdefault(file, _Unknown()).count_rows(rows_read, rows_kept)
        return [
            {"file": file, "quantity": quantity, "value": int(value), "names": names}
            for quantity, (value, names) in quantities.items()
        ]


def _labels(rows: list[list[str]], source: str, lenient: bool) -> tuple[np.ndarray, int]:
    """Y/N labels of labelled rows (the 4th field) and the number of stray labels.

    With ``lenient`` (filtered.txt, human_labeled.txt) a label with stray spaces or an
    empty one counts as N, as the issue asks; otherwise the label must be Y or N after
    stripping.
    """
    labels, stray = [], 0
    for line_number, row in enumerate(rows, start=1):
        raw = row[3]
        stripped = raw.strip()
        if lenient and (raw != stripped or not stripped):
            stray += 1
            labels.append("N")
            continue
        if stripped not in LABELS:
            raise KgrankInputError(f"{source}:{line_number}: label {raw!r} is not Y or N; correct the label")
        labels.append(stripped)
    return np.asarray(labels, dtype=str), stray


def _count_rows(file: str, quantities: dict[str, int]) -> list[dict]:
    return [
        {"file": file, "quantity": quantity, "value": int(value), "names": ""}
        for quantity, value in quantities.items()
    ]


def _evaluation_frame(name: str, triples: np.ndarray) -> pd.DataFrame:
    unique = np.unique(np.asarray(triples, dtype=np.int64).reshape(-1, 3), axis=0)
    return pd.DataFrame(
        {"evaluation": name, "head": unique[:, 0], "relation": unique[:, 1], "tail": unique[:, 2]}
    )


def split_evaluation(dataset_dir: str | Path) -> pd.DataFrame:
    """The ``test`` evaluation alone: the prepared test split of a dataset folder (WN18RR's
    way into the study, which has no kgc-sparsity data)."""
    factories = load_factories(dataset_dir)
    return _evaluation_frame("test", factories.testing.mapped_triples.numpy())


def _query_counts(kgc_dir: Path, file: str, vocabulary: _Vocabulary, queries: pd.DataFrame) -> list[dict]:
    """Counts of a trec_queries.txt file against the queries of its evaluation."""
    rows = read_fields(kgc_dir / file, 3, file)
    for line_number, row in enumerate(rows, start=1):
        if not QUERY_ID.match(row[0]):
            raise KgrankInputError(
                f"{file}:{line_number}: query id {row[0]!r} is not head<i> or tail<i>; fix the id"
            )
    unknown = vocabulary.unknown.setdefault(file, _Unknown())
    known = []
    for qid, given, relation in rows:
        if given not in vocabulary.entity_to_id:
            unknown.entities[given] += 1
        if relation not in vocabulary.relation_to_id:
            unknown.relations[relation] += 1
        if given in vocabulary.entity_to_id and relation in vocabulary.relation_to_id:
            known.append(
                (
                    QUERY_ID.match(qid).group(1),
                    vocabulary.entity_to_id[given],
                    vocabulary.relation_to_id[relation],
                )
            )
    in_file = set(known)
    ours = set(zip(queries["side"], queries["given"], queries["relation"], strict=True))
    counts = {
        "rows_read": len(rows),
        "rows_kept": len(known),
        "head_queries_kept": sum(side == "head" for side, _, _ in in_file),
        "tail_queries_kept": sum(side == "tail" for side, _, _ in in_file),
        "queries_of_evaluation": len(ours),
        "queries_in_both": len(ours & in_file),
    }
    return [*_count_rows(file, counts), *vocabulary.dropped_rows(file, len(rows), len(known))]


def relation_categories(kgc_dir: str | Path, training: Any) -> pd.DataFrame:
    """relation (training id), label, category (1-1, 1-N, N-1, N-N from FB-Test-O's
    type_information; ``unknown`` for a relation no file names)."""
    kgc_dir = Path(kgc_dir)
    category_of: dict[str, str] = {}
    for category, file in CATEGORY_FILES.items():
        for (label,) in read_fields(kgc_dir / file, 1, file, allow_empty=True):
            category_of[label.strip()] = category
    labels = sorted(training.relation_to_id, key=training.relation_to_id.get)
    return pd.DataFrame(
        {
            "relation": [training.relation_to_id[label] for label in labels],
            "label": labels,
            "category": [category_of.get(label, UNKNOWN_CATEGORY) for label in labels],
        }
    )


def read_kgc_sparsity(kgc_dir: str | Path, dataset_dir: str | Path, raw_test: str | Path) -> KgcSparsity:
    """Every evaluation set of the study, the counts of every file and the relation categories.

    ``raw_test``: the dataset archive (holding test.txt) or the raw test file from which
    FB-Test-S was drawn, in its published line order (the prepared test.tsv is not: it
    has dropped unseen triples and PyKEEN may reorder them), e.g.
    ``pykeen:nations`` for the Nations fixture.
    """
    kgc_dir, dataset_dir = Path(kgc_dir), Path(dataset_dir)
    raw = raw_splits(raw_test)
    num_test_lines, sample_size = check_sample(kgc_dir, raw["test"])
    factories = load_factories(dataset_dir)
    vocabulary = _Vocabulary(factories.training)
    counts: list[dict] = [
        *_count_rows(str(raw_test), {"rows_read": num_test_lines}),
        *_count_rows(SAMPLE_INDICES, {"rows_read": sample_size}),
    ]

    # stripped as the kgc-sparsity files' labels are: a stray space is no other relation
    relation_labels = {TEST_SET: np.char.strip(raw["test"][:, 1].astype(str))}
    # the paper's "224 different relations in the FB-Test-O set" (Sec. 3.2), by set name:
    # the raw test file's path is the config's
    counts.extend(
        _count_rows(TEST_SET, {"distinct_relations_read": len(np.unique(relation_labels[TEST_SET]))})
    )
    if set(SPLITS) <= set(raw):
        relation_labels[WHOLE_GRAPH] = np.char.strip(
            np.concatenate([raw[split][:, 1] for split in SPLITS]).astype(str)
        )

    def read_triple_file(file: str) -> np.ndarray:
        rows = read_fields(kgc_dir / file, 3, file)
        relation_labels[file] = np.asarray([row[1].strip() for row in rows], dtype=str)
        ids, keep = vocabulary.map_triples(rows, file)
        counts.extend(_count_rows(file, {"rows_read": len(rows), "rows_kept": int(keep.sum())}))
        counts.extend(vocabulary.dropped_rows(file, len(rows), int(keep.sum())))
        return ids

    def read_labelled_file(file: str, lenient: bool) -> tuple[np.ndarray, np.ndarray, int]:
        rows = read_fields(kgc_dir / file, 4, file, empty_last=True)
        labels, stray = _labels(rows, file, lenient)
        ids, keep = vocabulary.map_triples(rows, file)
        kept = labels[keep]
        counts.extend(
            _count_rows(
                file,
                {
                    "rows_read": len(rows),
                    "label_Y_read": int((labels == "Y").sum()),
                    "label_N_read": int((labels == "N").sum()),
                    "rows_kept": int(keep.sum()),
                    "distinct_triples_kept": len(np.unique(ids, axis=0)),
                    "label_Y_kept": int((kept == "Y").sum()),
                    "label_N_kept": int((kept == "N").sum()),
                    "stray_labels": stray,
                },
            )
        )
        counts.extend(vocabulary.dropped_rows(file, len(rows), int(keep.sum())))
        return ids, kept, stray

    sample = read_triple_file(SAMPLES)
    pooled = read_triple_file(POOLED_TEST)
    annotated, annotation_labels, _ = read_labelled_file(ANNOTATIONS, lenient=False)
    stray = {file: read_labelled_file(file, lenient=True)[2] for file in (FILTERED, HUMAN_LABELED)}
    notes = []
    if sum(stray.values()):
        # the labels of these files only feed the counts
        notes.append(
            f"{sum(stray.values())} labels of {' and '.join(f for f, n in stray.items() if n)} are empty "
            "or carry stray spaces: counted as N (stray_labels in the counts table)"
        )
    depth_rows = read_fields(kgc_dir / POOLING_DEPTH, 4, POOLING_DEPTH)
    depths = np.asarray(
        [_pool_depth(row[3], line_number) for line_number, row in enumerate(depth_rows, start=1)],
        dtype=np.int64,
    )
    depth_ids, depth_keep = vocabulary.map_triples(depth_rows, POOLING_DEPTH)
    depths = depths[depth_keep]
    # the pool as the paper counts it (Sec. 3.1: "7,087 entities, 151 relations, and 21,469
    # triples"): the labels of every row read, stripped
    pool_entities = {row[position].strip() for row in depth_rows for position in (0, 2)}
    counts.extend(
        _count_rows(
            POOLING_DEPTH,
            {
                "rows_read": len(depth_rows),
                "distinct_entities_read": len(pool_entities),
                "distinct_relations_read": len({row[1].strip() for row in depth_rows}),
                "rows_kept": int(depth_keep.sum()),
            },
        )
    )
    counts.extend(vocabulary.dropped_rows(POOLING_DEPTH, len(depth_rows), int(depth_keep.sum())))
    label_of = {
        tuple(triple): label for triple, label in zip(annotated.tolist(), annotation_labels, strict=True)
    }
    candidate_labels = []
    for triple in depth_ids.tolist():
        if tuple(triple) not in label_of:
            raise KgrankInputError(
                f"{POOLING_DEPTH}: pooled candidate {triple} (ids) has no label in {ANNOTATIONS}; "
                "restore the kgc-sparsity folder"
            )
        candidate_labels.append(label_of[tuple(triple)])
    relevant = np.asarray(candidate_labels) == "Y"
    names = read_fields(kgc_dir / ENTITY_NAMES, 2, ENTITY_NAMES)
    named = vocabulary.unknown.setdefault(ENTITY_NAMES, _Unknown())
    named.entities.update(row[0] for row in names if row[0] not in vocabulary.entity_to_id)
    names_kept = sum(row[0] in vocabulary.entity_to_id for row in names)
    counts.extend(_count_rows(ENTITY_NAMES, {"rows_read": len(names), "rows_kept": names_kept}))
    counts.extend(vocabulary.dropped_rows(ENTITY_NAMES, len(names), names_kept))
    note = _dropped_note(vocabulary, dataset_dir)
    if note:
        notes.append(note)

    frames = [
        _evaluation_frame("test", factories.testing.mapped_triples.numpy()),
        _evaluation_frame("sample", sample),
        _evaluation_frame("pooled", pooled),
    ]
    max_depth = int(depths.max()) if len(depths) else 0
    for depth in range(max_depth + 1):
        chosen = depth_ids[relevant & (depths <= depth)]
        frames.append(_evaluation_frame(depth_evaluation(depth), np.concatenate([sample, chosen])))
    evaluations = pd.concat(frames, ignore_index=True)
    # imported here, not at the top: the analyses that import this module need no ir_measures
    from kgrank.studies.ir.evaluation import plan_items

    # one row per query of each evaluation (side, given, relation)
    queries = plan_items(evaluations).drop_duplicates(["evaluation", "query"])
    for file, evaluation in ((TEST_QUERIES, "test"), (POOLED_QUERIES, "pooled")):
        counts.extend(_query_counts(kgc_dir, file, vocabulary, queries[queries["evaluation"] == evaluation]))
    for evaluation, frame in evaluations.groupby("evaluation", sort=False):
        selected = queries[queries["evaluation"] == evaluation]
        counts.extend(
            _count_rows(
                f"evaluation {evaluation}",
                {
                    "triples": len(frame),
                    "head_queries": int((selected["side"] == "head").sum()),
                    "tail_queries": int((selected["side"] == "tail").sum()),
                },
            )
        )
    # once for the whole folder, one line each, after every file has been read
    for note in notes:
        print(f"{kgc_dir}: {note}", file=sys.stderr)
    return KgcSparsity(
        evaluations=evaluations[list(EVALUATION_COLUMNS)],
        counts=pd.DataFrame(counts, columns=list(COUNT_COLUMNS)),
        relations=relation_categories(kgc_dir, factories.training),
        divergences=relation_divergences(
            {
                SAMPLE_SET: relation_labels[SAMPLES],
                POOLED_SET: relation_labels[POOLED_TEST],
                **{
                    name: relation_labels[name] for name in (TEST_SET, WHOLE_GRAPH) if name in relation_labels
                },
            }
        ),
    )
