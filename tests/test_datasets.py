import gzip
import io
import json
import tarfile
import zipfile
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from conftest import SHARED

from kgrank.data import datasets
from kgrank.data.datasets import (
    load_factories,
    load_mapped_dataset,
    prepare_dataset,
    read_archive_splits,
    read_triples,
    sha256_of,
)
from kgrank.errors import KgrankInputError


def test_malformed_triple_file_names_file_and_line(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_text("a\tr\tb\nc\tr\n", encoding="utf-8")
    with pytest.raises(KgrankInputError, match=r"train\.tsv:2: expected 3 non-empty tab-separated"):
        read_triples(path)


def test_empty_field_is_malformed(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text("a\t \tb\n", encoding="utf-8")
    with pytest.raises(KgrankInputError, match=r"test\.tsv:1"):
        read_triples(path)


def test_nations_statistics(nations_dir):
    stats = json.loads((nations_dir / "stats.json").read_text())
    assert (stats["entities"], stats["relations"]) == (14, 55)
    assert stats["triples"] == {"train": 1592, "valid": 199, "test": 201}
    assert len(read_triples(nations_dir / "test.tsv")) == 201


def test_factories_use_pykeens_ids(nations_dir):
    from pykeen.datasets import Nations

    ours = load_factories(nations_dir, create_inverse_triples=True)
    theirs = Nations()
    assert ours.training.entity_to_id == theirs.training.entity_to_id
    assert ours.training.relation_to_id == theirs.training.relation_to_id
    as_set = lambda mapped: set(map(tuple, mapped.tolist()))  # noqa: E731
    assert as_set(ours.testing.mapped_triples) == as_set(theirs.testing.mapped_triples)


def _assert_mapped_equals_factories(dataset_dir):
    ours, theirs = load_mapped_dataset(dataset_dir), load_factories(dataset_dir)
    assert ours.entity_to_id == dict(theirs.training.entity_to_id)
    assert ours.relation_to_id == dict(theirs.training.relation_to_id)
    assert ours.relation_id_to_label == dict(theirs.training.relation_id_to_label)
    assert (ours.num_entities, ours.num_relations) == (theirs.num_entities, theirs.num_relations)
    for mapped, factory_mapped in zip(ours.mapped(), theirs.mapped(), strict=True):
        assert mapped.dtype == np.int64
        np.testing.assert_array_equal(mapped, factory_mapped.numpy())


def test_mapped_dataset_equals_the_factories(nations_dir, tmp_path):
    """The torch-free ids are PyKEEN's: Nations, and a folder with a repeated triple, labels
    that sort differently as bytes and as text, and a relation with PyKEEN's inverse suffix."""
    _assert_mapped_equals_factories(nations_dir)
    train = "b\tr\ta\nB\tr\tc\nb\tr\ta\né\ts\tz\nz\tr_inverse\tb\nc\tr_b\tb\n"
    for name, text in (("repeated", train.replace("z\tr_inverse\tb\n", "")), ("inverse", train)):
        folder = tmp_path / name
        folder.mkdir()
        (folder / "train.tsv").write_text(text, encoding="utf-8")
        (folder / "valid.tsv").write_text("a\tr\tb\n", encoding="utf-8")
        (folder / "test.tsv").write_text("c\ts\tb\nb\tr_b\tc\n", encoding="utf-8")
        _assert_mapped_equals_factories(folder)
    (tmp_path / "repeated" / "test.tsv").write_text("c\tq\tb\nb\tr\tunseen\n", encoding="utf-8")
    with pytest.raises(KgrankInputError, match="test.tsv: 2 triples use entities or relations absent"):
        load_factories(tmp_path / "repeated")
    with pytest.raises(KgrankInputError, match="test.tsv: 2 triples use entities or relations absent"):
        load_mapped_dataset(tmp_path / "repeated")


def test_unknown_dataset_is_refused(tmp_path):
    with pytest.raises(KgrankInputError, match="unknown dataset 'nosuchgraph'"):
        prepare_dataset("nosuchgraph", {"source": "pykeen"}, tmp_path)


TINY_SPLITS = {
    "train.txt": b"a\tr\tb\nb\tr\tc\nc\ts\ta\n",
    "valid.txt": b"a\ts\tc\n",
    "test.txt": b"b\ts\tc\na\tr\tunseen\n",
}


def _tiny_archive(tmp_path, **replaced: bytes):
    """The tiny archive, with the content of some members replaced (``train_txt=b"..."``)."""
    archive = tmp_path / "tiny.tar.gz"
    splits = {**TINY_SPLITS, **{name.replace("_", "."): content for name, content in replaced.items()}}
    folder = tmp_path / "content"
    folder.mkdir()
    with tarfile.open(archive, "w:gz") as tar:
        for name, content in splits.items():
            (folder / name).write_bytes(content)
            tar.add(folder / name, arcname=name)
    return archive


def test_archive_source_drops_and_counts_unseen(tmp_path):
    archive = _tiny_archive(tmp_path)
    stats = prepare_dataset(
        "tiny", {"source": "archive", "archive": str(archive), "sha256": sha256_of(archive)}, tmp_path / "out"
    )
    assert stats["triples"] == {"train": 3, "valid": 1, "test": 1}
    assert stats["dropped_unseen"] == {"valid": 0, "test": 1}


def test_stats_count_the_training_queries(tmp_path):
    # an LCWA epoch's queries: (a, r) and (c, s); with inverse triples (b, r), (c, r), (a, s) too
    archive = _tiny_archive(tmp_path, train_txt=b"a\tr\tb\na\tr\tc\nc\ts\ta\n")
    stats = prepare_dataset("tiny", {"source": "archive", "archive": str(archive)}, tmp_path / "out")
    assert stats["train_queries"] == {"head_relation": 2, "tail_relation": 3}
    assert (
        json.loads((tmp_path / "out" / "stats.json").read_text())["train_queries"] == stats["train_queries"]
    )


@pytest.mark.parametrize(
    ("train", "expected"),
    [
        # an empty relation must not become a relation named ""
        (
            b"a\tr\tb\nbrazil\t\tussr\n",
            r"tiny\.tar\.gz:train\.txt:2: expected 3 non-empty .* found 3 with 1 empty",
        ),
        # a blank line counts: the bad line is line 4 in an editor
        (b"a\tr\tb\n\nb\tr\tc\nc r a\n", r"train\.txt:4: expected 3 non-empty"),
        (b"", r"train\.txt: no triples found; the file is empty"),
        (
            b"a\tr\tb\nb\tr\t\xe9t\xe9\n",
            r"train\.txt:2: byte 0xe9 at column 5 is not UTF-8; save the file as UTF-8",
        ),
    ],
    ids=["empty field", "after a blank line", "empty file", "not UTF-8"],
)
def test_bad_archive_member_names_member_and_line(tmp_path, train, expected):
    archive = _tiny_archive(tmp_path, train_txt=train)
    with pytest.raises(KgrankInputError, match=expected):
        prepare_dataset("tiny", {"source": "archive", "archive": str(archive)}, tmp_path / "out")
    assert not (tmp_path / "out").exists()  # nothing partial


def test_a_huge_label_is_refused_before_the_array_is_made(tmp_path):
    import tracemalloc

    from kgrank.data.datasets import MAX_LABEL_CHARS

    # ten short lines and one label of 2 MB: as one fixed-width array, 10 x 3 x 2 M x 4 bytes
    path = tmp_path / "train.tsv"
    path.write_text("a\tr\tb\n" * 5 + "a\tr\t" + "x" * 2_000_000 + "\n" + "b\tr\tc\n" * 5)
    tracemalloc.start()
    try:
        with pytest.raises(
            KgrankInputError, match=r"train\.tsv:6: tail label of 2,000,000 characters, more"
        ) as caught:
            read_triples(path)
        assert tracemalloc.get_traced_memory()[1] < 40 * 2**20
    finally:
        tracemalloc.stop()
    assert "\n" not in str(caught.value)
    # a label at the limit still reads
    path.write_text("a\tr\tb\n" + "a\t" + "r" * MAX_LABEL_CHARS + "\tb\n")
    assert read_triples(path)[1, 1] == "r" * MAX_LABEL_CHARS


def test_triple_file_line_numbers_count_blank_lines(tmp_path):
    path = tmp_path / "train.tsv"
    path.write_bytes(b"a\tr\tb\n\n\nc\tr\n")
    with pytest.raises(KgrankInputError, match=r"train\.tsv:4: expected"):
        read_triples(path)


def test_archive_checksum_mismatch(tmp_path):
    archive = _tiny_archive(tmp_path)
    with pytest.raises(KgrankInputError, match="has sha256 .* the config expects 0{64}"):
        prepare_dataset("tiny", {"source": "archive", "archive": str(archive), "sha256": "0" * 64}, tmp_path)


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("fb15k237", (14505, 237, 272115, 17526, 20438)),
        ("wn18rr", (40559, 11, 86835, 2824, 2924)),
    ],
)
def test_benchmark_archives(request, name, expected):
    """The shared archives (conftest.BENCHMARK_ARCHIVES) prepare to the published sizes."""
    # prepared from the shared archive once per test session (conftest)
    prepared = request.getfixturevalue(f"{name}_dir")
    stats = json.loads((prepared / "stats.json").read_text(encoding="utf-8"))
    triples = stats["triples"]
    assert (
        stats["entities"],
        stats["relations"],
        triples["train"],
        triples["valid"],
        triples["test"],
    ) == expected
    assert np.all(read_triples(prepared / "test.tsv")[:, 1] != "")


def _fb15k237_release_zip(archive: Path, zip_path: Path) -> None:
    """The archive's splits repacked the way Microsoft's FB15K-237.2.zip holds them (Release/)."""
    with tarfile.open(archive) as tar, zipfile.ZipFile(zip_path, "w") as packed:
        for member in tar.getmembers():
            if member.isfile() and Path(member.name).name in {"train.txt", "valid.txt", "test.txt"}:
                packed.writestr(f"Release/{Path(member.name).name}", tar.extractfile(member).read())


@pytest.mark.parametrize(
    ("name", "path", "url_end"),
    [
        ("fb15k237", "fb15k237/FB15k-237.tar.gz", "FB15K-237.2.zip"),
        ("wn18rr", "wn18rr/WN18RR.tar.gz", "WN18RR.tar.gz"),
    ],
)
def test_pykeen_download_path_with_the_download_mocked(request, tmp_path, monkeypatch, name, path, url_end):
    """`{source: pykeen}` goes through PyKEEN's dataset class and its download; only the
    network is replaced (by the local file), and the result equals the archive source's."""
    import pykeen.datasets.base

    archive = SHARED / "data" / path
    if not archive.is_file():
        pytest.skip(f"{archive} not present")
    requested = []

    def archive_bytes(url):
        requested.append(url)
        if not url.endswith(".zip"):
            return archive.read_bytes()
        packed = tmp_path / "release.zip"
        _fb15k237_release_zip(archive, packed)
        return packed.read_bytes()

    # PyKEEN fetches .zip datasets with pystow's download() and .tar.gz ones with requests.get.
    def download(url, path, **kwargs):
        Path(path).write_bytes(archive_bytes(url))

    def get(url, **kwargs):
        return SimpleNamespace(content=archive_bytes(url), raise_for_status=lambda: None)

    monkeypatch.setattr(pykeen.datasets.base, "download", download)
    monkeypatch.setattr(pykeen.datasets.base.requests, "get", get)
    monkeypatch.setattr(pykeen.datasets.base, "PYKEEN_DATASETS", tmp_path / "pykeen-cache")
    from_pykeen = prepare_dataset(name, {"source": "pykeen"}, tmp_path / "pykeen")
    assert len(requested) == 1 and requested[0].endswith(url_end)
    # the archive source's preparation, made once per test session (conftest)
    from_archive_dir = request.getfixturevalue(f"{name}_dir")
    from_archive = json.loads((from_archive_dir / "stats.json").read_text(encoding="utf-8"))
    assert from_pykeen["entities"] == from_archive["entities"]
    assert from_pykeen["triples"] == from_archive["triples"]
    for split in ("train", "valid", "test"):
        # PyKEEN's classes return the triples in their own order; the sets are the same.
        lines = [
            sorted((folder / f"{split}.tsv").read_text().splitlines())
            for folder in (tmp_path / "pykeen", from_archive_dir)
        ]
        assert lines[0] == lines[1], split


class _ZipKeptDataset:
    """Stands for PyKEEN's FB15k237: its files stay inside the downloaded zip."""

    def __init__(self, path):
        import pathlib

        self.path = path
        self.relative_testing_path = pathlib.PurePosixPath("Release/test.txt")
        self.loaded = False

    @property
    def training(self):
        self.loaded = True  # PyKEEN downloads here
        return None


def test_raw_test_triples_come_out_of_a_pykeen_zip(tmp_path, monkeypatch):
    """The network path of the ir study: FB15k-237's raw test file, read from PyKEEN's zip in
    file order, nothing dropped (PyKEEN's own factory drops triples with unseen entities)."""
    import zipfile

    from kgrank.data import datasets

    archive = tmp_path / "fb15k237.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.writestr("Release/test.txt", "b\tr\tc\na\tr\tunseen\n")
    stub = _ZipKeptDataset(archive)
    monkeypatch.setattr(datasets, "_pykeen_dataset", lambda name: stub)
    triples = datasets.pykeen_raw_splits("fb15k237", ("test",))["test"]
    assert stub.loaded
    assert triples.tolist() == [["b", "r", "c"], ["a", "r", "unseen"]]


def test_raw_test_triples_of_a_pykeen_dataset_with_a_file():
    from kgrank.data.datasets import pykeen_raw_splits

    triples = pykeen_raw_splits("nations", ("test",))["test"]
    assert len(triples) == 201  # Nations' test.txt as shipped, in its order


# --- a knowledge graph from outside: a folder of split files, header lines, sha256 -------


_TINY = {name.removesuffix(".txt"): content for name, content in TINY_SPLITS.items()}


def _nations_raw() -> Path:
    """Nations' raw split files as they ship in the pykeen wheel (train.txt, valid.txt, test.txt)."""
    from pykeen.datasets import Nations

    return Path(Nations().training_path).parent


def _folder(tmp_path, files: dict[str, bytes], name: str = "kg") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    for file_name, content in files.items():
        (folder / file_name).write_bytes(content)
    return folder


def _nations_folder(tmp_path, suffix: str = ".tsv", header: bytes = b"") -> Path:
    raw = _nations_raw()
    return _folder(
        tmp_path,
        {
            f"{split}{suffix}": header + (raw / f"{split}.txt").read_bytes()
            for split in ("train", "valid", "test")
        },
    )


def _written(folder: Path) -> dict[str, bytes]:
    return {split: (folder / f"{split}.tsv").read_bytes() for split in ("train", "valid", "test")}


@pytest.mark.parametrize("suffix", [".tsv", ".txt"])
def test_folder_equals_the_same_data_from_an_archive(tmp_path, suffix):
    folder = _nations_folder(tmp_path, suffix)
    archive = tmp_path / "nations.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for split in ("train", "valid", "test"):
            tar.add(folder / f"{split}{suffix}", arcname=f"{split}.txt")
    from_folder = prepare_dataset("mykg", {"source": "folder", "path": str(folder)}, tmp_path / "f")
    from_archive = prepare_dataset("mykg", {"source": "archive", "archive": str(archive)}, tmp_path / "a")
    assert _written(tmp_path / "f") == _written(tmp_path / "a")
    assert (from_folder["entities"], from_folder["relations"]) == (14, 55)
    assert from_folder["source"] == "folder"
    assert {key: value for key, value in from_folder.items() if key not in {"source", "sources"}} == {
        key: value for key, value in from_archive.items() if key not in {"source", "sources"}
    }
    # the files read, with their sha256
    assert from_folder["sources"] == {
        split: {"path": str(folder / f"{split}{suffix}"), "sha256": sha256_of(folder / f"{split}{suffix}")}
        for split in ("train", "valid", "test")
    }
    assert from_archive["sources"] == {"archive": {"path": str(archive), "sha256": sha256_of(archive)}}
    assert json.loads((tmp_path / "f" / "stats.json").read_text())["sources"] == from_folder["sources"]


def test_nations_with_a_header_reads_as_nations(tmp_path, capsys):
    """Without the header rule, `head relation tail` would be a triple: 16 entities, 56 relations."""
    folder = _nations_folder(tmp_path, header=b"head\trelation\ttail\n")
    stats = prepare_dataset("mykg", {"source": "folder", "path": str(folder)}, tmp_path / "out")
    assert (stats["entities"], stats["relations"]) == (14, 55)
    assert stats["triples"] == {"train": 1592, "valid": 199, "test": 201}
    lines = capsys.readouterr().err.splitlines()
    assert (
        f"{folder / 'train.tsv'}: line 1 read as a header (head, relation, tail); set header: false"
        in lines[0]
    )
    assert len(lines) == 3  # once per split file
    # header: false reads it as a triple (the old behaviour), with its two new entities and relation
    stats = prepare_dataset(
        "mykg", {"source": "folder", "path": str(folder), "header": False}, tmp_path / "no"
    )
    assert (stats["entities"], stats["relations"]) == (16, 56)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize(
    "header",
    [
        b"head\trelation\ttail",
        b"Head\tRelation\tTail",
        b"h\tr\tt",
        b"subject\tpredicate\tobject",
        b"s p o",
        b"source\trelation\ttarget",
        b"from\trel\tto",
        b"head_label\trelation_label\ttail_label",
    ],
)
def test_header_vocabulary_is_skipped_in_auto_mode(tmp_path, header):
    folder = _folder(tmp_path, {f"{name}.tsv": header + b"\n" + content for name, content in _TINY.items()})
    stats = prepare_dataset("tiny", {"source": "folder", "path": str(folder)}, tmp_path / "out")
    assert stats["triples"] == {"train": 3, "valid": 1, "test": 1}


def test_a_header_outside_the_vocabulary_is_known_by_its_shape(tmp_path, capsys):
    """`head_entity relation tail_entity` (issue 47) used to be a triple: 16 entities and a
    bogus test triple. None of its fields occurs on another line: a header, said on stderr."""
    folder = _nations_folder(tmp_path, header=b"head_entity\trelation\ttail_entity\n")
    stats = prepare_dataset("mykg", {"source": "folder", "path": str(folder)}, tmp_path / "out")
    assert (stats["entities"], stats["relations"]) == (14, 55)
    assert stats["triples"] == {"train": 1592, "valid": 199, "test": 201}
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 3 and all(
        "read as a header: none of its fields occurs in the dataset" in line for line in lines
    )


def test_a_first_line_with_a_new_label_stays_a_triple_and_says_so(tmp_path, capsys):
    """A label on one line only is ordinary data (6 % of WN18RR's lines hold one), so a
    first line of which only some fields are new is a triple, with a note naming them
    and the fix should it be a header; here PyKEEN then drops it as unseen."""
    raw = _nations_raw()
    files = {f"{split}.tsv": (raw / f"{split}.txt").read_bytes() for split in ("train", "valid", "test")}
    files["test.tsv"] = b"head_entity\tembassy\tusa\n" + files["test.tsv"]
    folder = _folder(tmp_path, files)
    stats = prepare_dataset("mykg", {"source": "folder", "path": str(folder)}, tmp_path / "out")
    assert stats["triples"]["test"] == 201 and stats["dropped_unseen"]["test"] == 1
    err = capsys.readouterr().err
    assert (
        f"{folder / 'test.tsv'}: line 1 (head_entity, embassy, usa) read as a triple, though its head " in err
    )
    assert "'head_entity' occurs on no other line; if it is a header, delete it, or set header: true" in err


def test_a_byte_order_mark_is_stripped_and_said(tmp_path, capsys):
    """A BOM used to hide a header from its check or start the first label with U+FEFF."""
    folder = _nations_folder(tmp_path, header=b"\xef\xbb\xbfhead\trelation\ttail\n")
    stats = prepare_dataset("mykg", {"source": "folder", "path": str(folder)}, tmp_path / "out")
    assert (stats["entities"], stats["relations"]) == (14, 55)
    err = capsys.readouterr().err
    assert f"{folder / 'train.tsv'}: a UTF-8 byte-order mark starts the file; read without it" in err
    (tmp_path / "bare").mkdir()
    bare = _nations_folder(tmp_path / "bare", header=b"\xef\xbb\xbf")
    prepare_dataset("mykg", {"source": "folder", "path": str(bare)}, tmp_path / "bare-out")
    labels = {
        label
        for split in ("train", "valid", "test")
        for row in read_triples(tmp_path / "bare-out" / f"{split}.tsv")
        for label in row
    }
    assert not any(label.startswith("\ufeff") for label in labels)


def test_header_modes(tmp_path, capsys):
    """auto: a first line that is not header words is a triple; true: the first line of
    every split file is skipped; false: nothing is skipped, header words or not."""
    files = {
        "train.tsv": b"\na\tr\tb\nb\tr\tc\nc\ts\ta\n",  # a blank line first: line 2 is the first
        "valid.tsv": b"h\tr\tt\na\ts\tc\n",
        "test.tsv": b"b\tr\ta\nb\ts\tc\n",
    }
    folder = _folder(tmp_path, files)
    read = {}
    for header in ("auto", True, False):
        out = tmp_path / f"out-{header}"
        prepare_dataset("tiny", {"source": "folder", "path": str(folder), "header": header}, out)
        read[header] = {
            split: read_triples(out / f"{split}.tsv").tolist() for split in ("train", "valid", "test")
        }
        read[header, "err"] = capsys.readouterr().err
    assert read["auto"] == {
        "train": [["a", "r", "b"], ["b", "r", "c"], ["c", "s", "a"]],
        "valid": [["a", "s", "c"]],
        "test": [["b", "r", "a"], ["b", "s", "c"]],
    }
    assert (
        read["auto", "err"]
        == f"{folder / 'valid.tsv'}: line 1 read as a header (h, r, t); set header: false (--header no) "
        "if it is a triple\n"
    )
    assert read[True] == {
        "train": [["b", "r", "c"], ["c", "s", "a"]],
        "valid": [["a", "s", "c"]],
        "test": [["b", "s", "c"]],
    }
    assert read[True, "err"] == ""
    # false: `h r t` is a triple of entities not in training, dropped as unseen like any other
    assert read[False]["train"] == read["auto"]["train"]
    assert read[False]["test"] == read["auto"]["test"]
    assert read[False, "err"] == ""
    with pytest.raises(KgrankInputError, match="header 'maybe' is not one of auto, true, false"):
        prepare_dataset("tiny", {"source": "folder", "path": str(folder), "header": "maybe"}, tmp_path / "x")


def test_header_true_on_a_file_with_only_a_header_line(tmp_path):
    folder = _folder(
        tmp_path, {"train.tsv": _TINY["train"], "valid.tsv": b"x\ty\tz\n", "test.tsv": _TINY["test"]}
    )
    with pytest.raises(
        KgrankInputError, match=r"valid\.tsv: no triples found; the file is empty but for its header"
    ):
        prepare_dataset("tiny", {"source": "folder", "path": str(folder), "header": True}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_header_in_an_archive(tmp_path, capsys):
    archive = _tiny_archive(tmp_path, train_txt=b"subject\tpredicate\tobject\n" + TINY_SPLITS["train.txt"])
    stats = prepare_dataset("tiny", {"source": "archive", "archive": str(archive)}, tmp_path / "out")
    assert stats["triples"]["train"] == 3
    assert (
        "tiny.tar.gz:train.txt: line 1 read as a header (subject, predicate, object)"
        in capsys.readouterr().err
    )
    # header: false: a header line is a triple (its entities are new)
    stats = prepare_dataset(
        "tiny", {"source": "archive", "archive": str(archive), "header": False}, tmp_path / "no"
    )
    assert stats["triples"]["train"] == 4


def test_both_names_of_a_split_are_refused(tmp_path):
    folder = _folder(
        tmp_path, {f"{name}.tsv": content for name, content in _TINY.items()} | {"test.txt": b""}
    )
    with pytest.raises(
        KgrankInputError, match=r"kg: both test\.tsv and test\.txt are there; keep one of them"
    ):
        prepare_dataset("tiny", {"source": "folder", "path": str(folder)}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_missing_split_and_missing_folder(tmp_path):
    folder = _folder(tmp_path, {"train.tsv": _TINY["train"], "test.txt": _TINY["test"]})
    with pytest.raises(
        KgrankInputError, match=r"kg: no valid\.tsv or valid\.txt in the folder; add the valid split"
    ):
        prepare_dataset("tiny", {"source": "folder", "path": str(folder)}, tmp_path / "out")
    with pytest.raises(
        KgrankInputError, match=r"dataset 'tiny': folder .*nowhere not found; fix datasets\.tiny\.path"
    ):
        prepare_dataset("tiny", {"source": "folder", "path": str(tmp_path / "nowhere")}, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_folder_sha256_checked_when_given(tmp_path):
    folder = _folder(tmp_path, {f"{name}.tsv": content for name, content in _TINY.items()})
    valid = sha256_of(folder / "valid.tsv")
    stats = prepare_dataset(
        "tiny", {"source": "folder", "path": str(folder), "sha256": {"valid": valid.upper()}}, tmp_path / "ok"
    )
    assert stats["sources"]["valid"]["sha256"] == valid
    with pytest.raises(KgrankInputError) as caught:
        prepare_dataset(
            "tiny", {"source": "folder", "path": str(folder), "sha256": {"test": "0" * 64}}, tmp_path / "out"
        )
    message = str(caught.value)
    assert "\n" not in message
    assert f"{folder / 'test.tsv'} has sha256 {sha256_of(folder / 'test.tsv')}" in message
    assert "the config expects " + "0" * 64 in message
    assert "replace the file or correct datasets.tiny.sha256.test" in message
    assert not (tmp_path / "out").exists()


def test_archive_sha256_is_optional_and_recorded(tmp_path):
    archive = _tiny_archive(tmp_path)
    stats = prepare_dataset("tiny", {"source": "archive", "archive": str(archive)}, tmp_path / "out")
    assert stats["sources"] == {"archive": {"path": str(archive), "sha256": sha256_of(archive)}}


def test_pykeen_source_records_the_shipped_files(nations_dir):
    stats = json.loads((nations_dir / "stats.json").read_text())
    raw = _nations_raw()
    # shown relative to the pykeen package: the same record on every machine
    assert stats["sources"] == {
        split: {"path": f"pykeen/datasets/nations/{split}.txt", "sha256": sha256_of(raw / f"{split}.txt")}
        for split in ("train", "valid", "test")
    }
    # beside the keys a stats.json always had
    assert set(stats) == {
        "dataset",
        "source",
        "entities",
        "relations",
        "triples",
        "dropped_unseen",
        "train_queries",
        "sources",
    }
    assert stats["train_queries"] == {"head_relation": 471, "tail_relation": 438}


def _archive(tmp_path, members: dict[str, bytes], name: str = "crafted.tar.gz") -> Path:
    """An archive of ``members`` (member name -> content), in order; a name may repeat
    when given as ``name#2``."""
    archive = tmp_path / name
    with tarfile.open(archive, "w:gz") as tar:
        for member, content in members.items():
            info = tarfile.TarInfo(member.split("#")[0])
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return archive


def test_split_members_in_a_folder_of_the_archive_are_read(tmp_path):
    archive = _archive(tmp_path, {f"tiny/{name}": content for name, content in TINY_SPLITS.items()})
    stats = prepare_dataset("tiny", {"source": "archive", "archive": str(archive)}, tmp_path / "out")
    assert stats["triples"] == {"train": 3, "valid": 1, "test": 1}


@pytest.mark.parametrize(
    ("members", "expected"),
    [
        (
            {"a/train.txt": TINY_SPLITS["train.txt"]},
            "holds both a/train.txt and b/train.txt, two train splits",
        ),
        ({"b/train.txt#2": TINY_SPLITS["train.txt"]}, "holds b/train.txt twice, two train splits"),
    ],
    ids=["two-folders", "same-name-twice"],
)
def test_two_members_of_one_split_are_refused(tmp_path, members, expected):
    """Before, the last one won without a word: which split was read depended on the order."""
    archive = _archive(
        tmp_path,
        {**members, "b/train.txt": TINY_SPLITS["train.txt"]}
        | {name: content for name, content in TINY_SPLITS.items() if name != "train.txt"},
    )
    with pytest.raises(KgrankInputError) as raised:
        prepare_dataset("tiny", {"source": "archive", "archive": str(archive)}, tmp_path / "out")
    assert str(raised.value) == f"{archive}: {expected}; keep one of them in the archive"
    assert not (tmp_path / "out").exists()


def test_a_member_over_the_limit_is_refused_before_it_is_read(tmp_path, monkeypatch):
    archive = _archive(tmp_path, {**TINY_SPLITS, "train.txt": b"a\tr\tb\n" * 100})

    def no_reading(*args, **kwargs):
        raise AssertionError("a member was read")

    monkeypatch.setattr(datasets, "MAX_MEMBER_BYTES", 599)
    monkeypatch.setattr(tarfile.TarFile, "extractfile", no_reading)
    with pytest.raises(KgrankInputError) as raised:
        read_archive_splits(archive)
    assert str(raised.value) == (
        f"{archive}: member train.txt declares 600 bytes, more than the 599 bytes an archive's split may "
        "hold (kgrank.data.datasets.MAX_MEMBER_BYTES); check the archive, or unpack a graph this large and "
        "give its folder (source: folder)"
    )


def test_the_limit_holds_the_real_archives_with_room():
    """The limit against the largest member of the archives the workflow reads (FB15k-237's
    train.txt, 21,277,292 bytes): refusing them would stop the default run."""
    largest = 0
    for path in ("fb15k237/FB15k-237.tar.gz", "wn18rr/WN18RR.tar.gz"):
        archive = SHARED / "data" / path
        if not archive.is_file():
            pytest.skip(f"{archive} not present")
        with tarfile.open(archive) as tar:
            largest = max(largest, *(member.size for member in tar.getmembers()))
    assert largest == 21_277_292
    assert 10 * largest <= datasets.MAX_MEMBER_BYTES


def test_a_gzip_bomb_is_refused_on_its_declared_size(tmp_path):
    """A member that declares a gigabyte in a few hundred bytes of gzip (its data cut off):
    refused on the header's size, with the real limit, before any of it is read."""
    header = tarfile.TarInfo("train.txt")
    header.size = 2**30
    archive = tmp_path / "bomb.tar.gz"
    with gzip.open(archive, "wb") as packed:
        packed.write(header.tobuf(format=tarfile.GNU_FORMAT) + b"a\tr\tb\n" * 1000)
    with pytest.raises(
        KgrankInputError, match=r"member train\.txt declares 1,073,741,824 bytes, more than the"
    ):
        read_archive_splits(archive)


def test_a_member_that_gives_more_than_it_declares_is_refused(tmp_path, monkeypatch):
    """tarfile stops at the declared size itself; the bounded read holds even if it did not."""
    archive = _archive(tmp_path, TINY_SPLITS)
    monkeypatch.setattr(tarfile.TarFile, "extractfile", lambda self, member: io.BytesIO(b"a\tr\tb\n" * 1000))
    with pytest.raises(KgrankInputError) as raised:
        read_archive_splits(archive, ("train",))
    assert str(raised.value) == (
        f"{archive}: member train.txt gave 19 bytes where it declares 18; the archive is damaged, "
        "replace it with a complete copy"
    )


def test_a_damaged_archive_is_one_line(tmp_path):
    archive = _archive(tmp_path, {**TINY_SPLITS, "train.txt": b"a\tr\tb\n" * 10_000})
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    with pytest.raises(KgrankInputError, match=r"cut\.tar\.gz: not a readable \.tar\.gz \(.*\); replace it"):
        read_archive_splits(cut)


def test_an_archive_of_too_many_members_is_refused(tmp_path, monkeypatch):
    """tarfile keeps every header it reads: millions of empty members compress to little."""
    archive = _archive(tmp_path, {**TINY_SPLITS, "README": b"the tiny graph\n"})
    assert len(read_archive_splits(archive)) == 3
    monkeypatch.setattr(datasets, "MAX_MEMBERS", 3)
    with pytest.raises(KgrankInputError) as raised:
        read_archive_splits(archive)
    assert str(raised.value) == (
        f"{archive}: more than 3 members (kgrank.data.datasets.MAX_MEMBERS), more than a dataset archive "
        "needs; pack only its split files (train.txt, valid.txt, test.txt)"
    )


def test_a_pykeen_dataset_that_cannot_be_downloaded_names_the_local_sources(monkeypatch, tmp_path):
    """Offline, `--dataset fb15k237` ended in pystow's traceback (issue 47)."""
    import urllib.error

    from pykeen.datasets import dataset_resolver
    from pystow.utils.download import DownloadError

    class Offline:
        def __init__(self) -> None:
            url = "https://example.org/fb.zip"
            raise DownloadError("urllib", url, tmp_path / "fb.zip", urllib.error.URLError("no network"))

    monkeypatch.setattr(dataset_resolver, "lookup", lambda name: Offline)
    with pytest.raises(KgrankInputError) as error:
        prepare_dataset("fb15k237", {"source": "pykeen"}, tmp_path / "out")
    message = str(error.value)
    assert message.startswith("dataset 'fb15k237': PyKEEN could not download it (") and "\n" not in message
    assert "source: archive" in message and "../shared/data" in message and "source: folder" in message
