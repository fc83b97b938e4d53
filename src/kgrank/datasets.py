"""Datasets: fetch a benchmark once, write it as labelled TSV, and rebuild PyKEEN factories.

A dataset folder holds ``train.tsv``, ``valid.tsv``, ``test.tsv`` (head, relation, tail
labels, tab-separated, no header) and ``stats.json``. Every later step rebuilds its
triples factories from these files, so a dataset enters the workflow through exactly
one door whatever its source (PyKEEN's own class, which may download, or a local
archive checked against its sha256 for offline machines).
"""

from __future__ import annotations

import hashlib
import tarfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kgrank.errors import KgrankInputError
from kgrank.io import atomic_path, write_json

SPLITS = ("train", "valid", "test")
# The names archives use for their split files (the layout PyKEEN's own loaders expect).
ARCHIVE_MEMBERS = {"train": "train.txt", "valid": "valid.txt", "test": "test.txt"}


def parse_triples(lines: Iterable[bytes], source: str) -> np.ndarray:
    """Labelled triples from the raw lines of a triple file; ``source`` names the file in
    errors. Blank lines are skipped but counted, so a reported line number is the one an
    editor shows."""
    rows: list[list[str]] = []
    for line_number, raw in enumerate(lines, start=1):
        try:
            line = raw.decode("utf-8").rstrip("\r\n")
        except UnicodeDecodeError as error:
            raise KgrankInputError(
                f"{source}:{line_number}: byte {raw[error.start]:#04x} at column {error.start + 1} is not "
                "UTF-8; save the file as UTF-8"
            ) from None
        if not line.strip():
            continue
        fields = line.split("\t")
        empty = sum(not field.strip() for field in fields)
        if len(fields) != 3 or empty:
            raise KgrankInputError(
                f"{source}:{line_number}: expected 3 non-empty tab-separated fields "
                f"(head, relation, tail), found {len(fields)} with {empty} empty: {line[:80]!r}; "
                "fix or delete this line"
            )
        rows.append(fields)
    if not rows:
        raise KgrankInputError(
            f"{source}: no triples found; the file is empty (give it head, relation, tail lines)"
        )
    return np.asarray(rows, dtype=str)


def read_triples(path: str | Path) -> np.ndarray:
    """Read a labelled triple file; a malformed line stops with its file and line number."""
    with Path(path).open("rb") as handle:
        return parse_triples(handle, str(path))


def write_triples(path: str | Path, triples: np.ndarray) -> None:
    with atomic_path(path) as temporary, temporary.open("w", encoding="utf-8") as handle:
        for head, relation, tail in triples:
            handle.write(f"{head}\t{relation}\t{tail}\n")


def sha256_of(path: str | Path) -> str:
    digest = hashlib.sha256()
    with Path(path).open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _pykeen_dataset(name: str) -> Any:
    from pykeen.datasets import dataset_resolver

    try:
        dataset_class = dataset_resolver.lookup(name)
    except (KeyError, ValueError) as error:
        raise KgrankInputError(
            f"unknown dataset {name!r}: not a PyKEEN dataset; give it a local 'archive' "
            "source in the config or use one of pykeen.datasets.dataset_resolver's names"
        ) from error
    return dataset_class()


def pykeen_test_triples(name: str) -> np.ndarray:
    """The raw test triples of a PyKEEN dataset class (downloads unless the data ships with
    pykeen): every line as published, in file order, before PyKEEN drops triples with
    unseen entities. FB15k-237's class reads its files out of the downloaded zip; others
    keep a plain test file."""
    import zipfile

    dataset = _pykeen_dataset(name)
    dataset.training  # noqa: B018 - PyKEEN downloads on first access
    member = getattr(dataset, "relative_testing_path", None)
    if member is not None:
        with zipfile.ZipFile(dataset.path) as archive, archive.open(member.as_posix()) as handle:
            return parse_triples(handle, f"{dataset.path}:{member.as_posix()}")
    path = getattr(dataset, "testing_path", None)
    if path is None:
        raise KgrankInputError(
            f"dataset {name!r}: PyKEEN's class keeps no test file; give the dataset a local 'archive' source"
        )
    return read_triples(path)


def _splits_from_pykeen(name: str) -> dict[str, np.ndarray]:
    """Labelled splits of a PyKEEN dataset class (downloads unless the data ships with pykeen)."""
    dataset = _pykeen_dataset(name)
    return {
        "train": dataset.training.triples,
        "valid": dataset.validation.triples,
        "test": dataset.testing.triples,
    }


def _splits_from_archive(name: str, archive: str | Path, sha256: str | None) -> dict[str, np.ndarray]:
    archive = Path(archive)
    if not archive.is_file():
        raise KgrankInputError(
            f"dataset {name!r}: archive {archive} not found; fix datasets.{name}.archive in the config"
        )
    if sha256 is not None:
        actual = sha256_of(archive)
        if actual != sha256.lower():
            raise KgrankInputError(
                f"dataset {name!r}: archive {archive} has sha256 {actual}, the config expects "
                f"{sha256}; replace the archive or correct datasets.{name}.sha256"
            )
    return read_archive_splits(archive)


def read_archive_splits(archive: str | Path, splits: tuple[str, ...] = SPLITS) -> dict[str, np.ndarray]:
    """The raw labelled triples of ``splits`` inside a dataset archive, as the files hold
    them (file order, nothing dropped); a missing member or malformed line names the archive."""
    archive = Path(archive)
    result: dict[str, np.ndarray] = {}
    with tarfile.open(archive) as tar:
        members = {Path(member.name).name: member for member in tar.getmembers() if member.isfile()}
        for split in splits:
            member_name = ARCHIVE_MEMBERS[split]
            if member_name not in members:
                raise KgrankInputError(f"{archive}: no {member_name} inside the archive")
            extracted = tar.extractfile(members[member_name])
            assert extracted is not None
            result[split] = parse_triples(extracted, f"{archive}:{member_name}")
    return result


def _drop_unseen(train: np.ndarray, other: np.ndarray) -> tuple[np.ndarray, int]:
    """Keep the triples whose entities and relation occur in training, as PyKEEN does."""
    entities = set(train[:, 0]) | set(train[:, 2])
    relations = set(train[:, 1])
    keep = np.array([h in entities and r in relations and t in entities for h, r, t in other], dtype=bool)
    return other[keep], int((~keep).sum())


def dataset_statistics(splits: Mapping[str, np.ndarray], dropped: Mapping[str, int]) -> dict[str, Any]:
    train = splits["train"]
    return {
        "entities": int(len(set(train[:, 0]) | set(train[:, 2]))),
        "relations": int(len(set(train[:, 1]))),
        "triples": {split: int(len(splits[split])) for split in SPLITS},
        "dropped_unseen": {split: int(dropped.get(split, 0)) for split in ("valid", "test")},
    }


def prepare_dataset(name: str, source: Mapping[str, Any], out_dir: str | Path) -> dict[str, Any]:
    """Write ``{train,valid,test}.tsv`` and ``stats.json`` for one dataset; return the stats."""
    kind = source.get("source", "pykeen")
    if kind == "pykeen":
        splits = _splits_from_pykeen(name)
    elif kind == "archive":
        splits = _splits_from_archive(name, source["archive"], source.get("sha256"))
    else:
        raise KgrankInputError(f"dataset {name!r}: unknown source {kind!r}; use 'pykeen' or 'archive'")
    dropped: dict[str, int] = {}
    for split in ("valid", "test"):
        splits[split], dropped[split] = _drop_unseen(splits["train"], splits[split])
    out_dir = Path(out_dir)
    for split in SPLITS:
        write_triples(out_dir / f"{split}.tsv", splits[split])
    stats = {"dataset": name, "source": kind, **dataset_statistics(splits, dropped)}
    write_json(out_dir / "stats.json", stats)
    return stats


@dataclass(frozen=True)
class Factories:
    """PyKEEN triples factories that share the training vocabulary."""

    training: Any
    validation: Any
    testing: Any

    def mapped(self, splits: tuple[str, ...] = SPLITS) -> list[Any]:
        by_name = {"train": self.training, "valid": self.validation, "test": self.testing}
        return [by_name[split].mapped_triples for split in splits]


def load_factories(dataset_dir: str | Path, create_inverse_triples: bool = False) -> Factories:
    """Rebuild PyKEEN factories from a dataset folder; ids are those PyKEEN itself assigns.

    The training triples define the vocabulary (labels sorted, as in PyKEEN), so the ids
    equal those of PyKEEN's own dataset classes for the same files.
    """
    from pykeen.triples import TriplesFactory

    dataset_dir = Path(dataset_dir)
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
        if factory.num_triples != len(labelled[split]):
            raise KgrankInputError(
                f"{dataset_dir / (split + '.tsv')}: {len(labelled[split]) - factory.num_triples} "
                "triples use entities or relations absent from train.tsv; rerun the prepare step"
            )
    return Factories(training=training, validation=others["valid"], testing=others["test"])
