"""Datasets: fetch a benchmark once, write it as labelled TSV, and rebuild PyKEEN factories.

A dataset folder holds ``train.tsv``, ``valid.tsv``, ``test.tsv`` (head, relation, tail
labels, tab-separated, no header) and ``stats.json``. Every later step rebuilds its
triples factories from these files, so a dataset enters the workflow through exactly
one door whatever its source: PyKEEN's own class (which may download), a local archive
(offline machines), or a local folder of split files (a user's own graph). Local files are
checked against a sha256 when one is given, and the sha256 of every file read is recorded
in ``stats.json`` under ``sources``.

Header lines. A split file of a local source may start with a header line. With
``header: auto`` (the default) its first non-blank line is read as a header, skipped and
reported, when its whitespace-separated fields are, lowercased, one word of each
position's vocabulary (``HEADER_WORDS``: head/relation/tail, h/r/t,
subject/predicate/object, s/p/o, source/relation/target, from/rel/to ...), or by its shape
once every split is read: when none of its three fields occurs as an entity or relation
on any other line of the dataset (``head_entity relation tail_entity``). A first line of
which only some fields are new stays a triple (a label on one line only is ordinary
data), said on stderr with the fix (``header: true``) should it be a header. Every other
line is a triple. ``header: true`` always skips the first non-blank line, ``false``
never does.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import sys
import tarfile
import zlib
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

import numpy as np

from kgrank.data.io import FileCache, atomic_path, text_lines, write_json
from kgrank.errors import KgrankInputError

SPLITS = ("train", "valid", "test")
# The names archives use for their split files (the layout PyKEEN's own loaders expect).
ARCHIVE_MEMBERS = {"train": "train.txt", "valid": "valid.txt", "test": "test.txt"}
# The largest split member an archive may hold, checked on its declared size before a byte
# of it is read: a few hundred kilobytes of gzip can declare gigabytes of repeated lines.
# The real archives' largest member is FB15k-237's train.txt, 21,277,292 bytes (valid.txt
# 1,303,101, test.txt 1,519,499; WN18RR's train.txt 3,135,377): 256 MiB is 12.6 times it,
# about 3.4 million triples at FB15k-237's 78 bytes a line. Reading takes far more memory
# than the bytes: the labels become a fixed-width array as wide as the longest label
# (FB15k-237's train.txt: a 477 MB array, 610 MB peak), so 256 MiB at FB15k-237's label
# widths is an array of about 6 GB. A larger graph goes in as a folder (source: folder).
MAX_MEMBER_BYTES = 256 * 2**20
# The longest label (entity or relation) a triple file may hold, in characters. The labels
# become a fixed-width array as wide as the longest one (4 bytes a character, 3 a row), so
# one long label would widen every row: a 100 MB label in a ten-line file is a 12 GB array.
# The real labels are far shorter: FB15k-237's longest is 146 characters (a relation path),
# WN18RR's 28; 1,000 leaves room for long IRIs and bounds the array at 12 kB a row.
MAX_LABEL_CHARS = 1_000
# The most members an archive may hold: tarfile keeps every header it reads, and tar
# headers compress to almost nothing, so a small archive could declare millions. The real
# archives hold 3; a dataset archive with its README, id maps and licence holds a dozen.
MAX_MEMBERS = 10_000
# The names a folder source's split files may have (one of them per split).
FOLDER_SUFFIXES = (".tsv", ".txt")

# The header vocabulary of `header: auto`, one set per position (compared lowercased).
HEADER_WORDS = (
    frozenset({"head", "h", "subject", "subj", "s", "source", "src", "from", "head_label"}),
    frozenset({"relation", "rel", "r", "predicate", "pred", "p", "relation_label"}),
    frozenset({"tail", "t", "object", "obj", "o", "target", "tgt", "to", "tail_label"}),
)
# `--header`'s words for a dataset entry's `header: auto | true | false`.
HEADER_OPTION = {"auto": "auto", "yes": True, "no": False}


def looks_like_header(line: str) -> bool:
    """Whether a line reads as a header under `header: auto`: three whitespace-separated
    fields, each (lowercased) a word of its position's vocabulary (``HEADER_WORDS``)."""
    fields = line.lower().split()
    return len(fields) == 3 and all(field in words for field, words in zip(fields, HEADER_WORDS, strict=True))


@dataclass(frozen=True)
class TripleLines:
    """The triples of one file, and the line number of the first one where ``header: auto``
    kept a first line its vocabulary did not recognise (None otherwise): whether it is a
    header is settled once every split is read (:func:`settle_first_lines`)."""

    rows: np.ndarray  # (n, 3) labels, dtype object
    source: str
    undecided_line: int | None = None


def parse_triple_lines(lines: Iterable[bytes], source: str, header: Any = False) -> TripleLines:
    """Labelled triples from the raw lines of a triple file; ``source`` names the file in
    errors. Blank lines are skipped but counted, so a reported line number is the one an
    editor shows.

    ``header``: False reads every line as a triple; True skips the first non-blank line;
    "auto" skips it when it reads as a header (``looks_like_header``) and says so on stderr
    (a first line the vocabulary does not know stays a triple here, its line kept in
    ``undecided_line``; a dataset's splits settle it by shape, :func:`settle_first_lines`).
    """
    if not (header == "auto" or isinstance(header, bool)):
        raise KgrankInputError(
            f"{source}: header {header!r} is not one of auto, true, false; use one of them"
        )
    rows: list[list[str]] = []
    first, skipped, undecided = True, False, None
    for line_number, line in text_lines(lines, source):
        if not line.strip():
            continue
        if first:
            first = False
            if header is True:
                skipped = True
                continue
            if header == "auto" and looks_like_header(line):
                skipped = True
                print(
                    f"{source}: line {line_number} read as a header ({', '.join(line.split())}); "
                    "set header: false (--header no) if it is a triple",
                    file=sys.stderr,
                )
                continue
            if header == "auto":
                undecided = line_number
        fields = line.split("\t")
        empty = sum(not field.strip() for field in fields)
        if len(fields) != 3 or empty:
            raise KgrankInputError(
                f"{source}:{line_number}: expected 3 non-empty tab-separated fields "
                f"(head, relation, tail), found {len(fields)} with {empty} empty: {line[:80]!r}; "
                "fix or delete this line"
            )
        if len(line) > MAX_LABEL_CHARS:
            longest = max(range(3), key=lambda position: len(fields[position]))
            if len(fields[longest]) > MAX_LABEL_CHARS:
                raise KgrankInputError(
                    f"{source}:{line_number}: {('head', 'relation', 'tail')[longest]} label of "
                    f"{len(fields[longest]):,} characters, more than the {MAX_LABEL_CHARS:,} a label may "
                    f"have (kgrank.data.datasets.MAX_LABEL_CHARS): {fields[longest][:40]!r}...; fix the line"
                )
        rows.append(fields)
    if not rows:
        raise KgrankInputError(
            f"{source}: no triples found; the file is empty"
            + (" but for its header line" if skipped else "")
            + " (give it head, relation, tail lines)"
        )
    # Python strings in an object array, not numpy's fixed-width unicode: that is as wide as
    # the longest label (FB15k-237's train.tsv, 146 characters: 477 MB and 1.5 s to build),
    # and PyKEEN's factory maps an object array 3.6x faster (0.7 s against 2.5 on FB15k-237).
    return TripleLines(np.array(rows, dtype=object), source, undecided)


def settle_first_lines(files: Mapping[str, TripleLines]) -> dict[str, np.ndarray]:
    """Each split's triples, a first line that ``header: auto`` left undecided settled by
    its shape against the dataset's other lines (no split's undecided first line among
    them, since headers name each other's words): none of its fields occurs there, a
    header (skipped, said on stderr); some do, a triple, with a note on stderr naming the
    fields no other line has and the fix (header: true) should it be a header."""
    result = {}
    for split, parsed in files.items():
        rows = parsed.rows
        if parsed.undecided_line is None:
            result[split] = rows
            continue
        first = [str(field) for field in rows[0]]
        new = []
        for position, kind in ((0, "head"), (1, "relation"), (2, "tail")):
            columns = (1,) if position == 1 else (0, 2)
            # other lines only: no split's undecided first line counts (headers name each other)
            count = sum(
                int(
                    np.count_nonzero(
                        other.rows[int(other.undecided_line is not None) :, column] == first[position]
                    )
                )
                for other in files.values()
                for column in columns
            )
            if count == 0:
                new.append(f"{kind} {first[position]!r}")
        where = f"{parsed.source}: line {parsed.undecided_line} ({', '.join(first)})"
        if len(new) == 3:
            print(f"{where} read as a header: none of its fields occurs in the dataset", file=sys.stderr)
            rows = rows[1:]
            if len(rows) == 0:
                raise KgrankInputError(
                    f"{parsed.source}: no triples found; the file is empty but for its header line "
                    "(give it head, relation, tail lines)"
                )
        elif new:
            # a label on one line only is ordinary data (6 % of WN18RR's lines hold one): a
            # triple, said so that a header that shares some words with the data is seen
            verb = "occurs" if len(new) == 1 else "occur"
            print(
                f"{where} read as a triple, though its {' and '.join(new)} {verb} on no other line; "
                "if it is a header, delete it, or set header: true (--header yes) where every split starts "
                "with one",
                file=sys.stderr,
            )
        result[split] = rows
    return result


def read_triples(path: str | Path, header: Any = False) -> np.ndarray:
    """Read a labelled triple file; a malformed line stops with its file and line number.
    ``header`` as in ``parse_triple_lines``."""
    return read_triple_lines(path, header).rows


def read_triple_lines(path: str | Path, header: Any = False) -> TripleLines:
    """:func:`read_triples` with the first line that ``header: auto`` left undecided."""
    with Path(path).open("rb") as handle:
        return parse_triple_lines(handle, str(path), header)


def write_triples(path: str | Path, triples: np.ndarray) -> None:
    with atomic_path(path) as temporary, temporary.open("w", encoding="utf-8") as handle:
        for head, relation, tail in triples:
            handle.write(f"{head}\t{relation}\t{tail}\n")


def sha256_of(path: str | Path) -> str:
    with Path(path).open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _pykeen_dataset(name: str) -> Any:
    from pykeen.datasets import dataset_resolver

    try:
        dataset_class = dataset_resolver.lookup(name)
    except (KeyError, ValueError) as error:
        raise KgrankInputError(
            f"unknown dataset {name!r}: not a PyKEEN dataset; give it a local 'archive' "
            "source in the config or use one of pykeen.datasets.dataset_resolver's names"
        ) from error
    with offline_refusal(name):
        return dataset_class()


@contextmanager
def offline_refusal(name: str) -> Iterator[None]:
    """A PyKEEN dataset that cannot be downloaded (no network) stops in one line with the
    local sources instead of pystow's traceback (its DownloadError is an OSError)."""
    try:
        yield
    except OSError as error:
        reason = " ".join(str(error).split())[:160]
        raise KgrankInputError(
            f"dataset {name!r}: PyKEEN could not download it ({reason}); offline, give a local copy: in the "
            f"config, datasets: {{{name}: {{source: archive, archive: FILE.tar.gz}}}} (config/config.yaml "
            "reads FB15k-237 and WN18RR from ../shared/data this way) or {source: folder, path: DIR}; "
            "kgrank evaluate --dataset DIR takes a folder of train/valid/test files"
        ) from None


# PyKEEN's attribute stem of each split (``training``, ``training_path``, ``relative_training_path``;
# Factories names its splits the same)
PYKEEN_SPLIT_STEMS = {"train": "training", "valid": "validation", "test": "testing"}


def pykeen_raw_splits(
    name: str, splits: tuple[str, ...] = SPLITS, missing_ok: bool = False
) -> dict[str, np.ndarray]:
    """The raw triples of ``splits`` of a PyKEEN dataset class (downloads unless the data
    ships with pykeen): every line as published, in file order, before PyKEEN drops triples
    with unseen entities. FB15k-237's class reads its files out of the downloaded zip;
    others keep plain files. A split the class keeps no file of is refused, or left out
    where ``missing_ok``."""
    import zipfile

    dataset = _pykeen_dataset(name)
    with offline_refusal(name):
        dataset.training  # noqa: B018 - PyKEEN downloads on first access
    raw = {}
    for split in splits:
        stem = PYKEEN_SPLIT_STEMS[split]
        member = getattr(dataset, f"relative_{stem}_path", None)
        if member is not None:
            with zipfile.ZipFile(dataset.path) as archive, archive.open(member.as_posix()) as handle:
                raw[split] = parse_triple_lines(handle, f"{dataset.path}:{member.as_posix()}").rows
            continue
        path = getattr(dataset, f"{stem}_path", None)
        if path is None and missing_ok:
            continue
        if path is None:
            raise KgrankInputError(
                f"dataset {name!r}: PyKEEN's class keeps no {split} file; give the dataset a local "
                "'archive' source"
            )
        raw[split] = read_triples(path)
    return raw


def _pykeen_root() -> Path:
    import pykeen

    return Path(pykeen.__file__).resolve().parent


def _source_record(path: Path, shown: str | None = None) -> dict[str, str]:
    """A file read, for ``stats.json``: its path (as given) and its sha256."""
    return {"path": shown if shown is not None else str(path), "sha256": sha256_of(path)}


def _pykeen_sources(dataset: Any) -> dict[str, dict[str, str]]:
    """The local files a PyKEEN dataset class read: its three split files (Nations, Kinships:
    shown relative to the pykeen package, so that the record is the same on every machine),
    else the archive it downloaded; nothing when neither is a file."""
    root = _pykeen_root()

    def shown(path: Path) -> str:
        try:
            return "pykeen/" + Path(path).resolve().relative_to(root).as_posix()
        except ValueError:
            return str(path)

    paths = {split: getattr(dataset, f"{stem}_path", None) for split, stem in PYKEEN_SPLIT_STEMS.items()}
    if all(path is not None and Path(path).is_file() for path in paths.values()):
        return {split: _source_record(Path(path), shown(Path(path))) for split, path in paths.items()}
    archive = getattr(dataset, "path", None)
    if isinstance(archive, (str, Path)) and Path(archive).is_file():
        return {"archive": _source_record(Path(archive), shown(Path(archive)))}
    return {}


def _splits_from_pykeen(name: str) -> tuple[dict[str, np.ndarray], dict[str, dict[str, str]]]:
    """Labelled splits of a PyKEEN dataset class (downloads unless the data ships with pykeen)."""
    import logging

    dataset = _pykeen_dataset(name)
    # PyKEEN warns that rebuilding the labelled triples is "expensive and rarely needed":
    # here it is what is asked for, once per dataset.
    factory_logger = logging.getLogger("pykeen.triples.triples_factory")
    level = factory_logger.level
    factory_logger.setLevel(logging.ERROR)
    try:
        with offline_refusal(name):
            splits = {split: getattr(dataset, stem).triples for split, stem in PYKEEN_SPLIT_STEMS.items()}
    finally:
        factory_logger.setLevel(level)
    return splits, _pykeen_sources(dataset)


def _splits_from_archive(
    name: str, archive: str | Path, sha256: str | None, header: Any = "auto"
) -> tuple[dict[str, np.ndarray], dict[str, dict[str, str]]]:
    archive = Path(archive)
    if not archive.is_file():
        raise KgrankInputError(
            f"dataset {name!r}: archive {archive} not found; fix datasets.{name}.archive in the config"
        )
    actual = sha256_of(archive)
    if sha256 is not None and actual != sha256.lower():
        raise KgrankInputError(
            f"dataset {name!r}: archive {archive} has sha256 {actual}, the config expects "
            f"{sha256}; replace the archive or correct datasets.{name}.sha256"
        )
    splits = settle_first_lines(_read_archive(archive, SPLITS, header))
    return splits, {"archive": {"path": str(archive), "sha256": actual}}


def _split_members(
    tar: tarfile.TarFile, archive: Path, splits: tuple[str, ...], missing_ok: bool = False
) -> dict[str, tarfile.TarInfo]:
    """The member of each split (``train.txt`` ... in any folder of the archive). Two members
    of one split would leave the choice to their order, so they are refused; so are a member
    that declares more than ``MAX_MEMBER_BYTES`` and an archive of more than ``MAX_MEMBERS``."""
    wanted = {ARCHIVE_MEMBERS[split]: split for split in splits}
    found: dict[str, tarfile.TarInfo] = {}
    # member by member as the headers come: an oversized one stops the scan before tarfile
    # decompresses its way past it
    for count, member in enumerate(tar, start=1):
        if count > MAX_MEMBERS:
            raise KgrankInputError(
                f"{archive}: more than {MAX_MEMBERS:,} members (kgrank.data.datasets.MAX_MEMBERS), more than "
                "a dataset archive needs; pack only its split files (train.txt, valid.txt, test.txt)"
            )
        split = wanted.get(PurePosixPath(member.name).name)
        if split is None or not member.isfile():
            continue
        if split in found:
            both = (
                f"{member.name} twice"
                if member.name == found[split].name
                else f"both {found[split].name} and {member.name}"
            )
            raise KgrankInputError(
                f"{archive}: holds {both}, two {split} splits; keep one of them in the archive"
            )
        if member.size > MAX_MEMBER_BYTES:
            raise KgrankInputError(
                f"{archive}: member {member.name} declares {member.size:,} bytes, more than the "
                f"{MAX_MEMBER_BYTES:,} bytes an archive's split may hold "
                "(kgrank.data.datasets.MAX_MEMBER_BYTES); check the archive, or unpack a graph this large "
                "and give its folder (source: folder)"
            )
        found[split] = member
    for split in splits:
        if split not in found and not missing_ok:
            raise KgrankInputError(f"{archive}: no {ARCHIVE_MEMBERS[split]} inside the archive")
    return found


def read_archive_splits(
    archive: str | Path, splits: tuple[str, ...] = SPLITS, header: Any = False, missing_ok: bool = False
) -> dict[str, np.ndarray]:
    """The raw labelled triples of ``splits`` inside a dataset archive, as the files hold
    them (file order, nothing dropped), read without extracting anything; a missing (unless
    ``missing_ok``: left out), doubled or oversized member, a damaged archive or a malformed
    line names the archive. ``header`` as in ``parse_triple_lines``."""
    read = _read_archive(archive, splits, header, missing_ok)
    return {split: parsed.rows for split, parsed in read.items()}


def _read_archive(
    archive: str | Path, splits: tuple[str, ...], header: Any, missing_ok: bool = False
) -> dict[str, TripleLines]:
    archive = Path(archive)
    result: dict[str, TripleLines] = {}
    try:
        with tarfile.open(archive) as tar:
            for split, member in _split_members(tar, archive, splits, missing_ok).items():
                extracted = tar.extractfile(member)
                assert extracted is not None  # a regular file (_split_members)
                # never more than the size checked above, whatever the stream holds
                data = extracted.read(member.size + 1)
                if len(data) != member.size:
                    raise KgrankInputError(
                        f"{archive}: member {member.name} gave {len(data):,} bytes where it declares "
                        f"{member.size:,}; the archive is damaged, replace it with a complete copy"
                    )
                result[split] = parse_triple_lines(io.BytesIO(data), f"{archive}:{member.name}", header)
    except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as error:
        # tarfile lists every compression it tried, one per line
        reason = " ".join(str(error).split())
        raise KgrankInputError(
            f"{archive}: not a readable .tar.gz ({reason}); replace it with a complete copy"
        ) from None
    return result


def folder_split_files(folder: str | Path, name: str | None = None) -> dict[str, Path]:
    """The split files of a folder source: ``<split>.tsv`` or ``<split>.txt`` for each of
    train, valid, test. A missing folder or split, or a split under both names, stops with
    one line naming the file(s); ``name`` (the dataset's) names the config key to fix."""
    folder = Path(folder)
    where = f"datasets.{name}.path in the config" if name is not None else "the path"
    if not folder.is_dir():
        prefix = f"dataset {name!r}: " if name is not None else ""
        raise KgrankInputError(f"{prefix}folder {folder} not found; fix {where}")
    files: dict[str, Path] = {}
    for split in SPLITS:
        candidates = [folder / f"{split}{suffix}" for suffix in FOLDER_SUFFIXES]
        found = [path for path in candidates if path.is_file()]
        if not found:
            raise KgrankInputError(
                f"{folder}: no {' or '.join(path.name for path in candidates)} in the folder; "
                f"add the {split} split under one of these names (or fix {where})"
            )
        if len(found) > 1:
            raise KgrankInputError(
                f"{folder}: both {found[0].name} and {found[1].name} are there; keep one of them "
                f"(the {split} split)"
            )
        files[split] = found[0]
    return files


def _splits_from_folder(
    name: str, folder: str | Path, sha256: Mapping[str, str] | None, header: Any = "auto"
) -> tuple[dict[str, np.ndarray], dict[str, dict[str, str]]]:
    files = folder_split_files(folder, name)
    unknown = sorted(set(sha256 or {}) - set(SPLITS))
    if unknown:
        raise KgrankInputError(
            f"dataset {name!r}: sha256 for {unknown[0]!r}, which is not a split; "
            "give it for train, valid, test"
        )
    sources = {split: _source_record(path) for split, path in files.items()}
    for split, expected in (sha256 or {}).items():
        if sources[split]["sha256"] != expected.lower():
            raise KgrankInputError(
                f"dataset {name!r}: {files[split]} has sha256 {sources[split]['sha256']}, the config expects "
                f"{expected}; replace the file or correct datasets.{name}.sha256.{split}"
            )
    return settle_first_lines(
        {split: read_triple_lines(path, header) for split, path in files.items()}
    ), sources


def _drop_unseen(train: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, int]:
    """Keep the triples whose entities and relation occur in training, as PyKEEN does."""
    entities = set(train[:, 0]) | set(train[:, 2])
    relations = set(train[:, 1])
    keep = np.array([h in entities and r in relations and t in entities for h, r, t in other], dtype=bool)
    return other[keep], int((~keep).sum())


def entity_count(triples: np.ndarray) -> int:
    """Distinct labels among the heads and tails of (n, 3) triples."""
    return len(set(triples[:, 0]) | set(triples[:, 2]))


def lcwa_queries(train: np.ndarray) -> dict[str, int]:
    """An LCWA epoch's queries on a training split, which the workflow's cost estimates
    (kgrank.workflow.scheduling) read at parse time: the loop batches each distinct
    (head, relation) pair once, and with inverse triples each (tail, relation) too. They
    are 0.28 of the doubled training triples on FB15k-237, 0.60 on WN18RR."""
    return {
        "head_relation": len(set(zip(train[:, 0], train[:, 1], strict=True))),
        "tail_relation": len(set(zip(train[:, 2], train[:, 1], strict=True))),
    }


def dataset_statistics(splits: Mapping[str, np.ndarray], dropped: Mapping[str, int]) -> dict[str, Any]:
    train = splits["train"]
    return {
        "entities": entity_count(train),
        "relations": int(len(set(train[:, 1]))),
        "triples": {split: int(len(splits[split])) for split in SPLITS},
        "dropped_unseen": {split: int(dropped.get(split, 0)) for split in ("valid", "test")},
        "train_queries": lcwa_queries(train),
    }


def prepare_dataset(name: str, source: Mapping[str, Any], out_dir: str | Path) -> dict[str, Any]:
    """Write ``{train,valid,test}.tsv`` and ``stats.json`` for one dataset; return the stats."""
    kind = source.get("source", "pykeen")
    header = source.get("header", "auto")
    if kind == "pykeen":
        splits, sources = _splits_from_pykeen(name)
    elif kind == "archive":
        splits, sources = _splits_from_archive(name, source["archive"], source.get("sha256"), header)
    elif kind == "folder":
        splits, sources = _splits_from_folder(name, source["path"], source.get("sha256"), header)
    else:
        raise KgrankInputError(
            f"dataset {name!r}: unknown source {kind!r}; use 'pykeen', 'archive' or 'folder'"
        )
    dropped: dict[str, int] = {}
    for split in ("valid", "test"):
        splits[split], dropped[split] = _drop_unseen(splits["train"], splits[split])
    out_dir = Path(out_dir)
    for split in SPLITS:
        write_triples(out_dir / f"{split}.tsv", splits[split])
    # the files read, each with its sha256 (last, so that the keys before it keep their order)
    stats = {"dataset": name, "source": kind, **dataset_statistics(splits, dropped), "sources": sources}
    write_json(out_dir / "stats.json", stats)
    return stats


@dataclass(frozen=True)
class Factories:
    """PyKEEN triples factories that share the training vocabulary."""

    training: Any
    validation: Any
    testing: Any

    def mapped(self, splits: tuple[str, ...] = SPLITS) -> list[Any]:
        return [getattr(self, PYKEEN_SPLIT_STEMS[split]).mapped_triples for split in splits]

    @property
    def num_entities(self) -> int:
        return self.training.num_entities

    @property
    def num_relations(self) -> int:
        return self.training.num_relations


# Within one process a dataset folder is often loaded again: `kgrank compare` loads it once
# per system it reads (four rank tables on FB15k-237 parsed its splits 24 times and built
# its factories 4 times), so each folder's factories are kept while its files stay as they were.
_FACTORIES = FileCache(size=2)


def load_factories(dataset_dir: str | Path, create_inverse_triples: bool = False) -> Factories:
    """Rebuild PyKEEN factories from a dataset folder; ids are those PyKEEN itself assigns.

    The training triples define the vocabulary (labels sorted, as in PyKEEN), so the ids
    equal those of PyKEEN's own dataset classes for the same files. Kept while the files
    stay as they were (PyKEEN's factories are not changed once built).
    """
    dataset_dir = Path(dataset_dir)
    return _FACTORIES.get(
        [dataset_dir / f"{split}.tsv" for split in SPLITS],
        (create_inverse_triples,),
        lambda: _load_factories(dataset_dir, create_inverse_triples),
    )


def _load_factories(dataset_dir: Path, create_inverse_triples: bool) -> Factories:
    from pykeen.triples import TriplesFactory

    labelled = {split: read_triples(dataset_dir / f"{split}.tsv") for split in SPLITS}
    training = TriplesFactory.from_labeled_triples(
        labelled["train"], create_inverse_triples=create_inverse_triples
    )
    others = {
        split: TriplesFactory.from_labeled_triples(
            labelled[split],
            entity_to_id=training.entity_to_id,
            relation_to_id=training.relation_to_id,
            create_inverse_triples=create_inverse_triples,
        )
        for split in ("valid", "test")
    }
    for split, factory in others.items():
        _check_all_seen(dataset_dir, split, len(labelled[split]), factory.num_triples)
    return Factories(training=training, validation=others["valid"], testing=others["test"])


def _check_all_seen(dataset_dir: Path, split: str, labelled: int, kept: int) -> None:
    """Refuse a split whose ``labelled`` triples kept only ``kept`` once mapped to ids."""
    if kept != labelled:
        raise KgrankInputError(
            f"{dataset_dir / (split + '.tsv')}: {labelled - kept} "
            "triples use entities or relations absent from train.tsv; rerun the prepare step"
        )


# PyKEEN's suffix of inverse relations: its factories drop training triples whose relation
# carries it and sort the relations around it (pykeen.triples.triples_factory).
PYKEEN_INVERSE_SUFFIX = "_inverse"


@dataclass(frozen=True)
class MappedDataset:
    """The id triples of a dataset folder's splits, with the ids PyKEEN's factories assign.

    What the metric, moments and candidate-count steps need (ids, counts, labels) without
    PyKEEN, whose import brings torch (1.5 s; a FB15k-237 factory costs 15 s more).
    """

    entity_to_id: dict[str, int]
    relation_to_id: dict[str, int]
    triples: dict[str, np.ndarray]

    @property
    def num_entities(self) -> int:
        return len(self.entity_to_id)

    @property
    def num_relations(self) -> int:
        return len(self.relation_to_id)

    @property
    def relation_id_to_label(self) -> dict[int, str]:
        return {index: label for label, index in self.relation_to_id.items()}

    def mapped(self, splits: tuple[str, ...] = SPLITS) -> list[np.ndarray]:
        """The (n, 3) int64 id triples of each of ``splits``, as ``Factories.mapped`` gives them."""
        return [self.triples[split] for split in splits]


def _id_triples(
    labelled: np.ndarray, entity_to_id: dict[str, int], relation_to_id: dict[str, int]
) -> np.ndarray:
    """Labelled triples as ids, as a PyKEEN factory keeps them: the triples whose labels the
    vocabulary holds, unique rows in sorted order."""
    columns = np.array(
        [
            [vocabulary.get(label, -1) for label in labelled[:, position].tolist()]
            for position, vocabulary in ((0, entity_to_id), (1, relation_to_id), (2, entity_to_id))
        ],
        dtype=np.int64,
    ).T.reshape(-1, 3)
    return np.unique(columns[(columns >= 0).all(axis=1)], axis=0)


def load_mapped_dataset(dataset_dir: str | Path, splits: tuple[str, ...] = SPLITS) -> MappedDataset:
    """The id triples of ``splits`` of a dataset folder, equal to ``load_factories``' own.

    The vocabulary is that of train.tsv, labels sorted as PyKEEN sorts them
    (create_entity_mapping, create_relation_mapping); a split's rows are its unique id
    triples in sorted order, as in a PyKEEN factory. A relation label with PyKEEN's inverse
    suffix, which PyKEEN's factories treat apart, takes the PyKEEN path itself.
    """
    dataset_dir = Path(dataset_dir)
    labelled = {
        split: read_triples(dataset_dir / f"{split}.tsv") for split in dict.fromkeys(("train", *splits))
    }
    train = labelled["train"]
    relations = set(train[:, 1].tolist())
    if any(relation.endswith(PYKEEN_INVERSE_SUFFIX) for relation in relations):
        factories = load_factories(dataset_dir)
        return MappedDataset(
            entity_to_id=dict(factories.training.entity_to_id),
            relation_to_id=dict(factories.training.relation_to_id),
            triples={
                split: np.asarray(triples, dtype=np.int64)
                for split, triples in zip(splits, factories.mapped(splits), strict=True)
            },
        )
    entities = set(train[:, 0].tolist()) | set(train[:, 2].tolist())
    entity_to_id = {label: index for index, label in enumerate(sorted(entities))}
    relation_to_id = {label: index for index, label in enumerate(sorted(relations))}
    triples = {split: _id_triples(labelled[split], entity_to_id, relation_to_id) for split in splits}
    for split in ("valid", "test"):
        if split in triples:
            _check_all_seen(dataset_dir, split, len(labelled[split]), len(triples[split]))
    return MappedDataset(entity_to_id=entity_to_id, relation_to_id=relation_to_id, triples=triples)
