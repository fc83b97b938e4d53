"""kgrank.engine.candidates: the known answers of a dataset and the filtered candidate counts."""

from pathlib import Path

import numpy as np
import pytest

from kgrank.data.datasets import SPLITS, load_factories
from kgrank.defaults import DEFAULT_FILTER_SPLITS
from kgrank.engine.candidates import (
    KnownAnswers,
    candidate_counts,
    counts_by_side,
    known_answers,
)

# Five entities, two relations; every entity and relation of valid and test occurs in train.
TINY = {
    "train": ["a r b", "a r c", "b r c", "c s a", "d r a", "e s b", "a s e"],
    "valid": ["a s c", "d r b", "e s a"],
    "test": ["a r d", "c s b", "d r c", "e s c"],
}


def _write_dataset(folder: Path, splits: dict[str, list[str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for split, lines in splits.items():
        (folder / f"{split}.tsv").write_text("".join(line.replace(" ", "\t") + "\n" for line in lines))
    return folder


def _brute_force_counts(dataset_dir: Path, split: str, filter_splits) -> list[tuple[str, int]]:
    """(side, candidate count) of every triple of ``split``, head rows first, by enumeration:
    a candidate is any entity that is the true one or does not complete a known triple."""
    factories = load_factories(dataset_dir)
    known = {tuple(triple) for mapped in factories.mapped(tuple(filter_splits)) for triple in mapped.tolist()}
    entities = range(factories.training.num_entities)
    rows = []
    for side in ("head", "tail"):
        for head, relation, tail in factories.mapped((split,))[0].tolist():
            if side == "head":
                count = sum(e == head or (e, relation, tail) not in known for e in entities)
            else:
                count = sum(e == tail or (head, relation, e) not in known for e in entities)
            rows.append((side, count))
    return rows


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_dataset(tmp_path_factory.mktemp("tiny"), TINY)


def test_default_filter_is_every_split():
    assert tuple(DEFAULT_FILTER_SPLITS) == SPLITS == ("train", "valid", "test")


def test_tiny_counts_by_hand(tiny_dir):
    counts = candidate_counts(tiny_dir, "test")
    # (a, r, ?): b, c known from train, d is the answer -> 5 - 2 = 3; (?, r, d): only a itself -> 5
    assert list(counts.columns) == ["side", "num_candidates"]
    first = load_factories(tiny_dir).testing.mapped_triples.tolist().index([0, 0, 3])  # a r d
    head = counts[counts["side"] == "head"]["num_candidates"].to_numpy()
    tail = counts[counts["side"] == "tail"]["num_candidates"].to_numpy()
    assert (head[first], tail[first]) == (5, 3)


@pytest.mark.parametrize("split", SPLITS)
@pytest.mark.parametrize(
    "filter_splits", [SPLITS, ("train",), ("train", "valid"), ("valid", "test"), ()], ids=str
)
def test_tiny_counts_against_enumeration(tiny_dir, split, filter_splits):
    counts = candidate_counts(tiny_dir, split, filter_splits)
    assert list(counts.itertuples(index=False, name=None)) == _brute_force_counts(
        tiny_dir, split, filter_splits
    )


def test_a_triple_leaked_into_train_keeps_its_true_entity(tmp_path):
    """(b, r, c) is in train and test. Filtering train only, the true tail c is a known answer
    of (b, r, ?), yet it stays a candidate: 5 entities, nothing else known -> 5 on both sides."""
    leaked = _write_dataset(tmp_path / "leaked", {**TINY, "test": [*TINY["test"], "b r c"]})
    counts = candidate_counts(leaked, "test", ("train",))
    assert list(counts.itertuples(index=False, name=None)) == _brute_force_counts(leaked, "test", ("train",))


def test_nations_counts_against_enumeration(nations_dir):
    for split in ("valid", "test"):
        counts = candidate_counts(nations_dir, split)
        assert len(counts) == 2 * len(load_factories(nations_dir).mapped((split,))[0])
        assert list(counts.itertuples(index=False, name=None)) == _brute_force_counts(
            nations_dir, split, SPLITS
        )
    unfiltered = candidate_counts(nations_dir, "test", filter_splits=())
    assert set(unfiltered["num_candidates"]) == {14}


def test_counts_by_side(tiny_dir):
    counts = candidate_counts(tiny_dir, "test")
    by_side = counts_by_side(counts)
    assert list(by_side) == ["head", "tail", "both"]
    n = len(TINY["test"])
    np.testing.assert_array_equal(by_side["head"], counts["num_candidates"].to_numpy()[:n])
    np.testing.assert_array_equal(by_side["tail"], counts["num_candidates"].to_numpy()[n:])
    np.testing.assert_array_equal(by_side["both"], counts["num_candidates"].to_numpy())


def test_known_answers_of_a_batch_against_enumeration():
    generator = np.random.default_rng(0)
    num_entities, num_relations = 9, 3
    parts = [
        np.stack(
            [
                generator.integers(0, num_entities, 40),
                generator.integers(0, num_relations, 40),
                generator.integers(0, num_entities, 40),
            ],
            axis=1,
        )
        for _ in range(2)
    ]
    known = KnownAnswers(parts, num_entities, num_relations)
    triples = {tuple(triple) for part in parts for triple in part.tolist()}
    batch = np.concatenate([parts[1][:10], [[0, 0, 0], [8, 2, 8]]])
    for side in ("head", "tail"):
        rows, entities = known.answers(side, batch)
        found = set(zip(rows.tolist(), entities.tolist(), strict=True))
        expected = {
            (row, entity)
            for row, (head, relation, tail) in enumerate(batch.tolist())
            for entity in range(num_entities)
            if ((entity, relation, tail) if side == "head" else (head, relation, entity)) in triples
        }
        assert found == expected, side
    assert known.answers("tail", np.empty((0, 3), dtype=np.int64))[0].size == 0


def test_duplicate_triples_count_once():
    triple = np.array([[1, 0, 2]])
    known = KnownAnswers([triple, triple, triple], num_entities=3, num_relations=1)
    rows, entities = known.answers("tail", triple)
    assert rows.tolist() == [0] and entities.tolist() == [2]


def test_known_answers_follow_the_filter_splits(tiny_dir):
    factories = load_factories(tiny_dir)
    ids = factories.training.entity_to_id
    relation = factories.training.relation_to_id["s"]
    query = np.array([[ids["a"], relation, ids["a"]]])  # (a, s, ?) and (?, s, a)
    for filter_splits, tails, heads in (
        (SPLITS, {"c", "e"}, {"c", "e"}),  # a s e (train), a s c (valid); c s a (train), e s a (valid)
        (("train",), {"e"}, {"c"}),
        (("valid", "test"), {"c"}, {"e"}),
    ):
        known = known_answers(factories, filter_splits)
        labels = {value: key for key, value in ids.items()}
        assert {labels[e] for e in known.answers("tail", query)[1].tolist()} == tails, filter_splits
        assert {labels[e] for e in known.answers("head", query)[1].tolist()} == heads, filter_splits
        assert (known.num_entities, known.num_relations) == (5, 2)


def test_candidate_counts_match_the_rank_extractor(nations_dir, tmp_path):
    """The counts the lookup table uses are those of the rank engine, on a trained model."""
    from conftest import REPO

    from kgrank.engine.ranks import compute_ranks
    from kgrank.training.hyperparameters import load_hyperparameters
    from kgrank.training.train import load_model, train

    train(
        nations_dir,
        load_hyperparameters(REPO / "config/hyperparameters/nations/transe.yaml"),
        tmp_path,
        seed=1,
        max_epochs=1,
        progress=False,
    )
    model, factories = load_model(tmp_path, nations_dir)
    for filter_splits in (DEFAULT_FILTER_SPLITS, ("train",)):
        known = known_answers(factories, filter_splits)
        ranks = compute_ranks(model, factories.testing.mapped_triples, known, progress=False)
        counts = candidate_counts(nations_dir, "test", filter_splits)
        np.testing.assert_array_equal(counts["num_candidates"].to_numpy(), ranks["num_candidates"].to_numpy())
        assert list(counts["side"]) == list(ranks["side"])
