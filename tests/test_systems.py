"""Systems from outside (kgrank.systems): a rank table of another framework, a PyKEEN
pipeline folder and a score matrix each become kgrank's rank table, on Nations.

One tiny PyKEEN TransE (2 epochs, dimension 8) is trained per module; its ranks through
kgrank's engine are the reference the other kinds must reproduce, and must themselves equal
PyKEEN's RankBasedEvaluator's.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from kgrank.api import evaluate_system
from kgrank.data.datasets import load_factories
from kgrank.data.rank_table import RANK_TABLE_COLUMNS, check_rank_table
from kgrank.engine.candidates import candidate_counts, known_answers
from kgrank.engine.ranks import compute_ranks
from kgrank.errors import KgrankInputError
from kgrank.systems import (
    dataset_folder,
    detect_kind,
    load_pykeen_model,
    load_rank_table,
    load_scoring_model,
    load_system,
    rank_pykeen_folder,
    rank_score_matrix,
)


def train_pykeen_folder(directory: Path, num_epochs: int = 2) -> Path:
    """What a user brings: PyKEEN's own pipeline on Nations, saved with save_to_directory."""
    from pykeen.pipeline import pipeline

    result = pipeline(
        dataset="nations",
        model="TransE",
        model_kwargs=dict(embedding_dim=8),
        training_kwargs=dict(num_epochs=num_epochs, use_tqdm=False),
        evaluation_kwargs=dict(use_tqdm=False),
        random_seed=0,
    )
    result.save_to_directory(directory)
    return directory


@pytest.fixture(scope="module")
def pykeen_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return train_pykeen_folder(tmp_path_factory.mktemp("pykeen") / "pk_transe")


@pytest.fixture(scope="module")
def reference(pykeen_folder: Path, nations_dir: Path) -> pd.DataFrame:
    """The PyKEEN model's ranks through kgrank's engine: the equivalent kgrank rank table."""
    return rank_pykeen_folder(pykeen_folder, nations_dir, seed=0, trusted=True)


def _labels(nations_dir: Path) -> tuple[dict[int, str], dict[int, str]]:
    training = load_factories(nations_dir).training
    return (
        {index: label for label, index in training.entity_to_id.items()},
        {index: label for label, index in training.relation_to_id.items()},
    )


def _external(table: pd.DataFrame, nations_dir: Path, *, by: str = "label") -> pd.DataFrame:
    """The reference as another framework would write it: no triple_id, one `rank` column
    (the realistic rank) and, by label, the dataset's labels."""
    frame = table[["head", "relation", "tail", "side"]].copy()
    if by == "label":
        entities, relations = _labels(nations_dir)
        frame["head"] = frame["head"].map(entities)
        frame["relation"] = frame["relation"].map(relations)
        frame["tail"] = frame["tail"].map(entities)
    frame["rank"] = table["realistic"]
    return frame


def _write_csv(frame: pd.DataFrame, path: Path) -> Path:
    frame.to_csv(path, sep="\t" if path.suffix in (".tsv", ".txt") else ",", index=False)
    return path


def _metrics(table: pd.DataFrame) -> pd.DataFrame:
    return evaluate_system(table, metrics=["mrr", "mr", "hits@10"], side="all")


# --- a PyKEEN pipeline folder -------------------------------------------------------------


def test_pykeen_folder_ranks_equal_rankbasedevaluators(pykeen_folder, nations_dir, reference):
    """PyKEEN 1.11.1's RankBasedEvaluator, filtered by train, valid and test, keeps its
    per-triple ranks in ``ranks[(side, rank_type)]`` with ``clear_on_finalize=False``."""
    from pykeen.evaluation import RankBasedEvaluator

    model = load_pykeen_model(pykeen_folder, trusted=True)
    factories = load_factories(nations_dir)
    evaluator = RankBasedEvaluator(clear_on_finalize=False)
    evaluator.evaluate(
        model,
        factories.testing.mapped_triples,
        batch_size=256,
        use_tqdm=False,
        additional_filter_triples=[factories.training.mapped_triples, factories.validation.mapped_triples],
    )
    assert list(reference.columns) == list(RANK_TABLE_COLUMNS)
    check_rank_table(reference, "reference")
    for side in ("head", "tail"):
        ours = reference[reference["side"] == side]
        np.testing.assert_array_equal(ours["triple_id"], np.arange(len(factories.testing.mapped_triples)))
        for rank_type in ("optimistic", "realistic", "pessimistic"):
            theirs = np.concatenate(evaluator.ranks[side, rank_type])
            np.testing.assert_array_equal(ours[rank_type].to_numpy(), theirs, err_msg=f"{side} {rank_type}")
        np.testing.assert_array_equal(ours["num_candidates"], np.concatenate(evaluator.num_candidates[side]))


def test_pykeen_folder_with_other_ids_is_matched_by_label(pykeen_folder, nations_dir, reference, tmp_path):
    """A model that numbers entities differently (its own map in training_triples/) ranks the
    same triples the same way, reported in the dataset's ids."""
    import shutil

    folder = tmp_path / "shuffled"
    shutil.copytree(pykeen_folder, folder)
    model = load_pykeen_model(folder, trusted=True)
    num_entities = model.num_entities
    permutation = np.random.default_rng(3).permutation(num_entities)  # new id of old id
    embeddings = model.entity_representations[0]._embeddings.weight
    with torch.no_grad():
        moved = torch.empty_like(embeddings)
        moved[torch.as_tensor(permutation)] = embeddings
        embeddings.copy_(moved)
    torch.save(model, folder / "trained_model.pkl")
    path = folder / "training_triples" / "entity_to_id.tsv.gz"
    id_map = pd.read_csv(path, sep="\t", keep_default_na=False)
    id_map["id"] = permutation[id_map["id"].to_numpy()]
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        id_map.sort_values("id").to_csv(handle, sep="\t", index=False)
    pd.testing.assert_frame_equal(rank_pykeen_folder(folder, nations_dir, trusted=True), reference)


def _renumbered_folder(
    folder: Path, nations_dir: Path, model_class: str, inverse: bool
) -> tuple[Path, object]:
    """A PyKEEN folder of a freshly initialised model whose entity and relation ids are a
    shuffle of the dataset's (its embedding rows and its id maps moved together), and the
    same model in the dataset's ids. With inverse triples a relation owns rows 2r and 2r + 1."""
    import copy

    from pykeen.models import model_resolver

    training = load_factories(nations_dir, create_inverse_triples=inverse).training
    torch.manual_seed(5)
    model = model_resolver.make(model_class, triples_factory=training, embedding_dim=4)
    rng = np.random.default_rng(11)
    entity_ids = rng.permutation(training.num_entities)  # the folder's id of each dataset id
    relation_ids = rng.permutation(training.real_num_relations)
    relation_rows = (
        np.stack([2 * relation_ids, 2 * relation_ids + 1], axis=1).ravel() if inverse else relation_ids
    )
    renumbered = copy.deepcopy(model)
    for representations, rows in (
        (renumbered.entity_representations, entity_ids),
        (renumbered.relation_representations, relation_rows),
    ):
        for representation in representations:
            weight = representation._embeddings.weight
            with torch.no_grad():
                moved = torch.empty_like(weight)
                moved[torch.as_tensor(rows)] = weight
                weight.copy_(moved)
    (folder / "training_triples").mkdir(parents=True)
    torch.save(renumbered, folder / "trained_model.pkl")
    for kind, labels, ids in (
        ("entity", training.entity_to_id, entity_ids),
        ("relation", training.relation_to_id, relation_ids),
    ):
        frame = pd.DataFrame({"id": ids[list(labels.values())], "label": list(labels)}).sort_values("id")
        frame.to_csv(folder / "training_triples" / f"{kind}_to_id.tsv.gz", sep="\t", index=False)
    return folder, model


@pytest.mark.parametrize("model_class, inverse", [("TransE", False), ("DistMult", True), ("ComplEx", False)])
def test_a_pykeen_folder_in_other_ids_is_reordered_for_rescoring(nations_dir, tmp_path, model_class, inverse):
    """The rescoring parts (subsets, sampled candidates, ties, the IR passes) index
    candidates by the dataset's ids: load_scoring_model moves every embedding row of a
    folder that numbers entities and relations otherwise to the dataset's id, inverse
    relations included, so the model it returns is the one trained, row for row."""
    folder, model = _renumbered_folder(tmp_path / "renumbered", nations_dir, model_class, inverse)
    # the layout is checked apart from the reordering: rank_pykeen_folder translates the
    # test triples into the folder's ids and leaves inverse relations to PyKEEN's inverter
    dataset = load_factories(nations_dir)
    engine = compute_ranks(
        model, dataset.testing.mapped_triples, known_answers(dataset, ("train", "valid", "test"))
    )
    pd.testing.assert_frame_equal(rank_pykeen_folder(folder, nations_dir, trusted=True), engine)
    loaded, factories = load_scoring_model(folder, nations_dir, trusted=True)
    assert not loaded.training
    assert factories.training.num_entities == model.num_entities
    for ours, theirs in (
        (loaded.entity_representations, model.entity_representations),
        (loaded.relation_representations, model.relation_representations),
    ):
        for reordered, original in zip(ours, theirs, strict=True):
            torch.testing.assert_close(
                reordered._embeddings.weight, original._embeddings.weight, rtol=0, atol=0
            )
    with pytest.raises(KgrankInputError, match="trust") as error:
        load_scoring_model(folder, nations_dir)
    assert "\n" not in str(error.value)


def test_a_representation_that_is_no_table_is_refused_for_rescoring():
    from types import SimpleNamespace

    from kgrank.systems import _reorder_to_dataset

    model = SimpleNamespace(entity_representations=[torch.nn.Linear(2, 2)], relation_representations=[])
    with pytest.raises(KgrankInputError, match="not a table kgrank can reorder") as error:
        _reorder_to_dataset(model, np.array([1, 0]), np.array([0]), Path("folder"))
    assert str(error.value).startswith("folder: the model numbers entities differently")


def test_a_pykeen_folder_in_the_dataset_ids_is_the_model_as_saved(pykeen_folder, nations_dir):
    loaded, _ = load_scoring_model(pykeen_folder, nations_dir, trusted=True)
    saved = load_pykeen_model(pykeen_folder, trusted=True)
    torch.testing.assert_close(loaded.state_dict(), saved.state_dict(), rtol=0, atol=0)


def test_pykeen_folder_with_other_labels_is_refused(pykeen_folder, nations_dir, tmp_path):
    import shutil

    folder = tmp_path / "renamed"
    shutil.copytree(pykeen_folder, folder)
    path = folder / "training_triples" / "entity_to_id.tsv.gz"
    id_map = pd.read_csv(path, sep="\t", keep_default_na=False)
    id_map.loc[0, "label"] = "atlantis"
    id_map.to_csv(path, sep="\t", index=False, compression="gzip")
    with pytest.raises(KgrankInputError, match="'atlantis' is in the model only") as error:
        rank_pykeen_folder(folder, nations_dir, trusted=True)
    assert "\n" not in str(error.value) and "evaluate on the dataset the model was trained on" in str(
        error.value
    )


def test_folder_without_model_or_maps(tmp_path, nations_dir, pykeen_folder):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(KgrankInputError, match="a folder without trained_model.pkl"):
        load_system(empty, nations_dir)
    import shutil

    folder = tmp_path / "no-maps"
    shutil.copytree(pykeen_folder, folder)
    shutil.rmtree(folder / "training_triples")
    with pytest.raises(KgrankInputError, match="save_training=True"):
        load_system(folder, nations_dir, trusted=True)


# --- a rank table from another framework -----------------------------------------------


@pytest.mark.parametrize("by", ["label", "id"])
@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".parquet"])
def test_rank_table_gives_the_reference_metrics(by, suffix, reference, nations_dir, tmp_path):
    frame = _external(reference, nations_dir, by=by).sample(frac=1.0, random_state=1)  # any row order
    path = tmp_path / f"ranks{suffix}"
    if suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        _write_csv(frame, path)
    assert detect_kind(path) == "ranks"
    table = load_system(path, nations_dir)
    assert list(table.columns) == list(RANK_TABLE_COLUMNS)
    pd.testing.assert_frame_equal(
        table[["triple_id", "head", "relation", "tail", "side", "realistic", "num_candidates"]],
        reference[["triple_id", "head", "relation", "tail", "side", "realistic", "num_candidates"]],
        check_dtype=False,
    )
    pd.testing.assert_frame_equal(_metrics(table), _metrics(reference))


def test_rank_variants_are_read(reference, nations_dir, tmp_path):
    """optimistic and pessimistic give realistic as their mean and random as realistic;
    all four given are kept as they are."""
    frame = _external(reference, nations_dir).drop(columns="rank")
    frame["optimistic"], frame["pessimistic"] = reference["optimistic"], reference["pessimistic"]
    table = load_rank_table(_write_csv(frame, tmp_path / "variants.csv"), nations_dir)
    for column in ("optimistic", "realistic", "pessimistic"):
        np.testing.assert_array_equal(table[column], reference[column])
    np.testing.assert_array_equal(table["random"], reference["realistic"])
    frame["realistic"], frame["random"] = reference["realistic"], reference["random"]
    table = load_rank_table(_write_csv(frame, tmp_path / "all.csv"), nations_dir)
    pd.testing.assert_frame_equal(table, reference)


def test_num_candidates_filled_from_the_dataset(reference, nations_dir, tmp_path):
    table = load_rank_table(_write_csv(_external(reference, nations_dir), tmp_path / "r.csv"), nations_dir)
    counts = candidate_counts(nations_dir, "test")
    np.testing.assert_array_equal(table["side"], counts["side"])
    np.testing.assert_array_equal(table["num_candidates"], counts["num_candidates"])
    # a different filter gives other counts, and a table made under it is read under it
    unfiltered = load_rank_table(tmp_path / "r.csv", nations_dir, filter_splits=[])
    assert (unfiltered["num_candidates"] == 14).all()


def test_given_num_candidates_are_checked(reference, nations_dir, tmp_path):
    frame = _external(reference, nations_dir)
    frame["num_candidates"] = reference["num_candidates"]
    load_rank_table(_write_csv(frame, tmp_path / "ok.csv"), nations_dir)  # agrees: accepted
    frame.loc[5, "num_candidates"] = 14
    path = _write_csv(frame, tmp_path / "bad.csv")
    expected = reference["num_candidates"].iloc[5]
    with pytest.raises(KgrankInputError) as error:
        load_rank_table(path, nations_dir)
    message = str(error.value)
    assert message.startswith(f"{path}:7: num_candidates 14, but the dataset filtered by train, valid, test")
    assert f"leaves {expected}" in message and "--filter-splits" in message and "\n" not in message


def test_partial_tables(reference, nations_dir, tmp_path):
    frame = _external(reference, nations_dir)
    path = _write_csv(frame[frame["side"] == "tail"], tmp_path / "tails.csv")
    with pytest.raises(KgrankInputError, match=r"201 of 402 \(test triple, side\) pairs have no row"):
        load_rank_table(path, nations_dir)
    table = load_rank_table(path, nations_dir, allow_partial=True)
    assert (table["side"] == "tail").all() and len(table) == 201


def _bad_rank_table(reference: pd.DataFrame, nations_dir: Path, tmp: Path, problem: str) -> Path:
    frame = _external(reference, nations_dir)
    path = tmp / "bad.csv"
    if problem == "contradiction":
        frame["num_candidates"] = reference["num_candidates"]
        frame.loc[2, "num_candidates"] = 99
    elif problem == "duplicate":
        frame = pd.concat([frame, frame.iloc[[3]]], ignore_index=True)
    elif problem == "unknown-label":
        frame.loc[4, "tail"] = "atlantis"
    elif problem == "mixed":
        frame.loc[4, "head"] = "3"
    elif problem == "rank-above":
        frame.loc[6, "rank"] = 15
    elif problem == "rank-zero":
        frame.loc[6, "rank"] = 0
    elif problem == "non-test":
        entities, relations = _labels(nations_dir)
        train = load_factories(nations_dir).training.mapped_triples[0].tolist()
        frame.loc[1, ["head", "relation", "tail"]] = [
            entities[train[0]],
            relations[train[1]],
            entities[train[2]],
        ]
    elif problem == "nan":
        frame["rank"] = frame["rank"].astype(object)
        frame.loc[8, "rank"] = "nan"
    elif problem == "empty-cell":
        frame["rank"] = frame["rank"].astype(object)
        frame.loc[8, "rank"] = ""
    elif problem == "missing-column":
        frame = frame.drop(columns="side")
    elif problem == "no-rank-column":
        frame = frame.drop(columns="rank")
    elif problem == "bad-side":
        frame.loc[0, "side"] = "middle"
    elif problem == "empty":
        path.write_text("", encoding="utf-8")
        return path
    elif problem == "header-only":
        path.write_text("head,relation,tail,side,rank\n", encoding="utf-8")
        return path
    elif problem == "no-header":
        frame.to_csv(path, index=False, header=False)
        return path
    elif problem == "ragged":
        text = frame.to_csv(index=False).splitlines()
        text[3] += ",extra"
        path.write_text("\n".join(text) + "\n", encoding="utf-8")
        return path
    return _write_csv(frame, path)


BAD_RANK_TABLES = {
    # problem: (line of the error or None, what the one line must say)
    "contradiction": (4, "num_candidates 99, but the dataset filtered by train, valid, test leaves"),
    "duplicate": (404, "side of this triple is already ranked on line 5"),
    "unknown-label": (6, "column tail: 'atlantis' is not an entity label of the dataset"),
    "mixed": (6, "'3' is not an entity label of the dataset (other rows hold labels"),
    "rank-above": (8, "rank 15 is outside [1, "),
    "rank-zero": (8, "rank 0 is outside [1, "),
    "non-test": (3, "is not a test triple of"),
    "nan": (10, "column rank is 'nan', not a finite number"),
    "empty-cell": (10, "column rank is empty"),
    "missing-column": (None, "column(s) side missing"),
    "no-rank-column": (None, "no rank column"),
    "bad-side": (2, "'middle' is not head or tail"),
    "empty": (None, "the file is empty"),
    "header-only": (None, "only a header line (line 1), no rows"),
    "no-header": (1, "the first line looks like data"),
    "ragged": (4, "6 fields, the header (line 1) has 5"),
}


@pytest.mark.parametrize("problem", sorted(BAD_RANK_TABLES))
def test_bad_rank_tables_are_one_line(problem, reference, nations_dir, tmp_path):
    line, expected = BAD_RANK_TABLES[problem]
    path = _bad_rank_table(reference, nations_dir, tmp_path, problem)
    with pytest.raises(KgrankInputError) as error:
        load_system(path, nations_dir)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{line}: " if line is not None else f"{path}: "), message
    assert expected in message, message
    assert ";" in message  # the fix follows


def test_bad_parquet_names_the_row(reference, nations_dir, tmp_path):
    frame = _external(reference, nations_dir)
    frame.loc[4, "rank"] = np.nan
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path, index=False)
    with pytest.raises(KgrankInputError, match=r"bad.parquet: row 5: column rank is empty"):
        load_system(path, nations_dir)
    path.write_text("head,relation\n", encoding="utf-8")
    with pytest.raises(KgrankInputError, match="not a readable parquet file"):
        load_system(path, nations_dir)


def test_unknown_inputs(tmp_path, nations_dir):
    with pytest.raises(KgrankInputError, match="needs its query index"):
        load_system(tmp_path / "scores.npy", nations_dir)
    with pytest.raises(KgrankInputError, match="no such file"):
        load_system(tmp_path / "missing.csv", nations_dir)
    with pytest.raises(KgrankInputError, match="filter split 'dev'"):
        load_system(tmp_path / "missing.csv", nations_dir, filter_splits=["dev"])


# --- a score matrix -------------------------------------------------------------------


def test_score_matrix_ranks_equal_the_models(pykeen_folder, nations_dir, tmp_path):
    """The model's own scores, one row per (test triple, side) in a shuffled order, rank
    exactly as the model does through the engine (PyKEEN's scores: fast=False)."""
    model = load_pykeen_model(pykeen_folder, trusted=True)
    factories = load_factories(nations_dir)
    test = factories.testing.mapped_triples
    through_model = compute_ranks(model, test, known_answers(factories), seed=4, progress=False, fast=False)
    entities, relations = _labels(nations_dir)
    queries = pd.DataFrame(
        {
            "head": np.tile(test[:, 0].numpy(), 2),
            "relation": np.tile(test[:, 1].numpy(), 2),
            "tail": np.tile(test[:, 2].numpy(), 2),
            "side": np.repeat(["head", "tail"], len(test)),
        }
    ).sample(frac=1.0, random_state=2)
    with torch.inference_mode():
        scores = torch.cat(
            [
                model.predict(
                    torch.as_tensor(queries[["head", "relation", "tail"]].to_numpy()[[row]]), target=side
                )
                for row, side in enumerate(queries["side"])
            ]
        )
    np.save(tmp_path / "scores.npy", scores.numpy())
    torch.save(scores, tmp_path / "scores.pt")
    by_label = queries.assign(
        head=queries["head"].map(entities),
        relation=queries["relation"].map(relations),
        tail=queries["tail"].map(entities),
    )
    by_label.to_csv(tmp_path / "queries.tsv", sep="\t", index=False)
    queries.to_csv(tmp_path / "queries.csv", index=False)
    for matrix, index in (("scores.npy", "queries.tsv"), ("scores.pt", "queries.csv")):
        table = load_system((tmp_path / matrix, tmp_path / index), nations_dir, seed=4)
        pd.testing.assert_frame_equal(table, through_model)


def test_bad_score_matrices(nations_dir, tmp_path):
    factories = load_factories(nations_dir)
    test = factories.testing.mapped_triples.numpy()
    queries = pd.DataFrame({"head": test[:, 0], "relation": test[:, 1], "tail": test[:, 2], "side": "tail"})
    queries.to_csv(tmp_path / "q.csv", index=False)
    np.save(tmp_path / "wide.npy", np.zeros((len(test), 15)))
    with pytest.raises(
        KgrankInputError, match=r"shape \(201, 15\), but .* lists 201 queries and .* 14 entities"
    ):
        rank_score_matrix(tmp_path / "wide.npy", tmp_path / "q.csv", nations_dir, allow_partial=True)
    scores = np.zeros((len(test), 14))
    scores[7, 3] = np.nan
    np.save(tmp_path / "nan.npy", scores)
    with pytest.raises(KgrankInputError, match=r"nan.npy: row 7 \(query .*q.csv:9\) holds NaN"):
        rank_score_matrix(tmp_path / "nan.npy", tmp_path / "q.csv", nations_dir, allow_partial=True)
    # a constant scorer: every candidate ties, realistic rank = (1 + N) / 2
    np.save(tmp_path / "flat.npy", np.zeros((len(test), 14), dtype=np.float32))
    table = rank_score_matrix(tmp_path / "flat.npy", tmp_path / "q.csv", nations_dir, allow_partial=True)
    np.testing.assert_array_equal(table["realistic"], (1 + table["num_candidates"]) / 2)
    with pytest.raises(KgrankInputError, match="201 of 402"):
        rank_score_matrix(tmp_path / "flat.npy", tmp_path / "q.csv", nations_dir)


# --- the dataset a user names -----------------------------------------------------------


def test_dataset_by_name_is_prepared_once_into_the_cache(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    with dataset_folder("nations") as folder:
        assert folder == tmp_path / "cache" / "kgrank" / "datasets" / "nations"
        assert (folder / "stats.json").is_file()
    assert "prepared from PyKEEN into" in capsys.readouterr().err
    with dataset_folder("Nations") as again:
        assert again == folder
    assert capsys.readouterr().err == ""
    unknown = "'no_such_dataset': no such folder, and not a PyKEEN dataset"
    with pytest.raises(KgrankInputError, match=unknown), dataset_folder("no_such_dataset"):
        pass


def test_evaluate_system_sides(reference):
    both = evaluate_system(reference, metrics="mrr", confidence=None)
    assert list(both["side"]) == ["both"] and list(both["rank_type"]) == ["realistic"]
    assert both["value"].iloc[0] == pytest.approx(np.mean(1 / reference["realistic"]))
    head = evaluate_system(reference, metrics="mrr", side="head", rank_type="optimistic", confidence=None)
    subset = reference[reference["side"] == "head"]
    assert head["value"].iloc[0] == pytest.approx(np.mean(1 / subset["optimistic"]))
    with pytest.raises(KgrankInputError, match="rank type 'best'"):
        evaluate_system(reference, rank_type="best")


def test_the_participation_table_names_every_skipped_part():
    from kgrank.studies import external_parts
    from kgrank.workflow.external import STAGE_PARTS, participation_table

    folder = Path(__file__).parent / "data" / "external-nations"
    systems = {"nations": {"folder": {"model": "pykeen-distmult"}, "csv": {"ranks": "ranks.csv"}}}
    parts = external_parts(["paper", "ambiguity"])
    # the workflow runs the subset protocol on the folder, sampled candidates on nothing
    rescored = {
        "ambiguity: subset protocol": ["nations/folder"],
        "sampled-candidate ranks (ranks.sampled_candidates)": [],
    }
    table = participation_table(systems, parts, root=folder, rescored=rescored)
    assert set(table["system"]) == {"folder", "csv"}
    assert not table["part"].str.startswith(("ir:", "openworld:", "protocols:")).any()
    assert (table.groupby("system").size() == len(STAGE_PARTS) + len(parts)).all()
    # every study says which of its parts a system from outside joins (its settings' hook)
    from kgrank.studies import study_names, study_settings

    for name in study_names():
        assert isinstance(study_settings(name).EXTERNAL_PARTS, dict), name
    csv = table[table["system"] == "csv"].set_index("part")
    assert csv.loc["paper: Figure 1", "status"] == "joined"
    assert csv.loc["paper: learning curves", "status"].startswith("skipped: ")
    # a part that rescores the model takes the PyKEEN folder where the workflow runs it on
    # the folder, and says why it leaves the ranks out
    rescoring = list(rescored)
    by_folder = table[table["system"] == "folder"].set_index("part")["status"]
    assert by_folder[rescoring[0]] == "joined"
    assert by_folder[rescoring[1]] == "skipped: this configuration does not run the part on it"
    assert (
        csv.loc[rescoring, "status"] == "skipped: rescores the model, which a rank table does not hold"
    ).all()
    assert by_folder["paper: learning curves"] == csv.loc["paper: learning curves", "status"]
    assert csv["files"].iloc[0].startswith("ranks.csv (sha256 ")
    folder_files = table[table["system"] == "folder"]["files"].iloc[0]
    assert folder_files.startswith("pykeen-distmult/trained_model.pkl (sha256 ")
    # the comparison takes every kind where the configuration runs it: here on neither
    from kgrank.workflow.parts import COMPARISON_PART

    assert set(table[table["part"] == COMPARISON_PART]["status"]) == {
        "skipped: this configuration does not run the part"
    }
    compared = participation_table(
        systems, parts, root=folder, rescored={**rescored, COMPARISON_PART: ["nations/csv"]}
    ).set_index(["system", "part"])["status"]
    assert compared["csv", COMPARISON_PART] == "joined"
    assert compared["folder", COMPARISON_PART] == "skipped: this configuration does not run the part"


# --- the rank layouts other frameworks write -------------------------------------------


def _long_ranks(nations_dir: Path, tmp_path: Path) -> pd.DataFrame:
    """The test rank file in the long layout, by PyKEEN id, with its candidate counts."""
    table = load_rank_table(
        Path(__file__).parent / "data" / "external-nations" / "ranks.csv", nations_dir, allow_partial=True
    )
    return table.rename(columns={"realistic": "rank"})[
        ["head", "relation", "tail", "side", "rank", "num_candidates"]
    ]


def _wide(frame: pd.DataFrame, counts: bool) -> pd.DataFrame:
    keys = ["head", "relation", "tail"]
    columns = {}
    for side in ("head", "tail"):
        part = frame[frame["side"] == side].set_index(keys)
        columns[f"{side}_rank"] = part["rank"]
        if counts:
            columns[f"{side}_num_candidates"] = part["num_candidates"]
    return pd.DataFrame(columns).reset_index()


@pytest.mark.parametrize(
    "layout",
    ["h/t", "lhs/rhs", "head_batch/tail_batch", "head-batch/tail-batch", "wide", "wide with counts"],
)
def test_every_rank_layout_gives_the_long_forms_table(layout, nations_dir, tmp_path, capsys):
    """The side values of kbc (lhs/rhs), RotatE's code (head-batch/tail-batch) and short
    ones (h/t), and the wide layout of AmpliGraph and TorchKGE exports (head_rank and
    tail_rank per triple), read to the table the long form gives; each says on stderr how
    it was read."""
    long = _long_ranks(nations_dir, tmp_path)
    (tmp_path / "long.csv").write_text(long.to_csv(index=False))
    capsys.readouterr()
    expected = load_rank_table(tmp_path / "long.csv", nations_dir, allow_partial=True)
    assert "read" not in capsys.readouterr().err
    if layout.startswith("wide"):
        table = _wide(long, counts=layout.endswith("counts"))
        message = "wide layout (head_rank, tail_rank per triple) read as one row per side"
    else:
        head, tail = layout.split("/")
        table = long.assign(side=long["side"].map({"head": head, "tail": tail}))
        message = f"side values read {head} as head, {tail} as tail"
    (tmp_path / "other.csv").write_text(table.to_csv(index=False))
    ours = load_rank_table(tmp_path / "other.csv", nations_dir, allow_partial=True)
    assert message in capsys.readouterr().err
    pd.testing.assert_frame_equal(ours, expected)


def test_a_wide_table_needs_its_triple_and_both_counts(nations_dir, tmp_path):
    wide = _wide(_long_ranks(nations_dir, tmp_path), counts=False)
    (tmp_path / "w.csv").write_text(wide.drop(columns="relation").to_csv(index=False))
    with pytest.raises(KgrankInputError, match="column.s. relation missing beside head_rank and tail_rank"):
        load_rank_table(tmp_path / "w.csv", nations_dir, allow_partial=True)
    (tmp_path / "c.csv").write_text(wide.assign(head_num_candidates=14).to_csv(index=False))
    with pytest.raises(KgrankInputError, match="give both head_num_candidates and tail_num_candidates"):
        load_rank_table(tmp_path / "c.csv", nations_dir, allow_partial=True)


def test_the_api_takes_what_the_command_line_takes(nations_dir):
    """kgrank.evaluate and kgrank.compare on a PyKEEN folder and a rank file, with their
    dataset, give what evaluate_system and compare_rank_tables give on the loaded ranks;
    a vector with a dataset, a path without one and an untrusted pickle end in one line."""
    import kgrank
    from kgrank.api import evaluate_system
    from kgrank.evaluation.comparison import compare_rank_tables

    data = Path(__file__).parent / "data" / "external-nations"
    folder, ranks = data / "pykeen-distmult", data / "ranks.csv"
    loaded = load_system(folder, nations_dir, trusted=True)
    ours = kgrank.evaluate(
        str(folder), dataset=nations_dir, trusted=True, metrics=["mrr", "nDCG@10"], side="all"
    )
    pd.testing.assert_frame_equal(ours, evaluate_system(loaded, metrics=["mrr", "nDCG@10"], side="all"))
    table = kgrank.evaluate(loaded, metrics="mrr")  # a rank table needs no dataset
    assert table["value"].iloc[0] == pytest.approx(ours.query("side == 'both'")["value"].iloc[0])
    systems = {str(nations_dir): {"folder": str(folder), "csv": str(ranks)}}
    options = {"metrics": ["mrr"], "bootstrap_resamples": 50}
    comparison = kgrank.compare(systems, trusted=True, allow_partial=True, **options)
    expected = compare_rank_tables(
        {nations_dir.name: {"folder": loaded, "csv": load_system(ranks, nations_dir, allow_partial=True)}},
        **options,
    )
    pd.testing.assert_frame_equal(comparison.pairs, expected.pairs)
    for call, message in (
        (lambda: kgrank.evaluate([1, 2], 14, dataset="nations"), "dataset go with a system"),
        (lambda: kgrank.evaluate(str(ranks)), "is a system; name its dataset"),
        (lambda: kgrank.evaluate(str(folder), dataset=nations_dir), "trusted=True from Python"),
        (lambda: kgrank.evaluate([1, 2]), "a rank vector needs num_candidates"),
    ):
        with pytest.raises(KgrankInputError, match=message):
            call()


def test_a_rank_array_in_test_order_reads_as_the_long_table(nations_dir, tmp_path, capsys):
    """AmpliGraph's evaluate_performance and TorchKGE's rank tensors give ranks in test
    order, one (head, tail) pair per triple: read with --order test (kind 'positional')."""
    from kgrank.data.datasets import read_triples
    from kgrank.systems import load_positional_ranks

    reference = load_system(
        Path(__file__).parent / "data" / "external-nations" / "ranks.csv", nations_dir, allow_partial=True
    )
    training = load_factories(nations_dir).training
    entity = {index: label for label, index in training.entity_to_id.items()}
    relation = {index: label for label, index in training.relation_to_id.items()}
    by_triple = {
        (entity[row.head], relation[row.relation], entity[row.tail], row.side): row.realistic
        for row in reference.itertuples(index=False)
    }
    test = read_triples(nations_dir / "test.tsv")
    array = np.array(
        [[by_triple[(*triple, "head")], by_triple[(*triple, "tail")]] for triple in test.tolist()]
    )
    np.save(tmp_path / "ranks.npy", array)
    ours = load_system(tmp_path / "ranks.npy", nations_dir, kind="positional")
    assert "in test.tsv's order" in capsys.readouterr().err
    columns = ["head", "relation", "tail", "side", "realistic", "num_candidates"]
    key = ["head", "relation", "tail", "side"]
    pd.testing.assert_frame_equal(
        ours[columns].sort_values(key).reset_index(drop=True),
        reference[columns].sort_values(key).reset_index(drop=True),
    )
    np.save(tmp_path / "short.npy", array[:-1])
    with pytest.raises(
        KgrankInputError, match=r"shape \(200, 2\), but .* holds 201 test triples; with --order test"
    ):
        load_positional_ranks(tmp_path / "short.npy", nations_dir)
    array[3, 1] = 99
    np.save(tmp_path / "bad.npy", array)
    with pytest.raises(KgrankInputError, match=r"bad.npy: row 4"):
        load_positional_ranks(tmp_path / "bad.npy", nations_dir)


def test_a_pykeen_folder_loads_on_device_auto_and_a_rank_array_refuses_a_tolerance(nations_dir, tmp_path):
    """Review of this session: device 'auto' (the paper profile's) reached torch.load as
    a map location; a rank array in test order took a tie tolerance it cannot apply."""
    import kgrank

    folder = Path(__file__).parent / "data" / "external-nations" / "pykeen-distmult"
    assert load_pykeen_model(folder, "auto", trusted=True).num_entities == 14
    np.save(tmp_path / "ranks.npy", np.ones((201, 2)))
    with pytest.raises(KgrankInputError, match="a rank table holds ranks, not scores"):
        load_system(tmp_path / "ranks.npy", nations_dir, kind="positional", tolerance="absolute:0.5")
    # a tuple of ranks is a rank vector, a pair of paths a system
    table = kgrank.evaluate((1, 2, 3), 10, metrics="mrr")
    assert table["value"].iloc[0] == pytest.approx((1 + 1 / 2 + 1 / 3) / 3)


def test_kgrank_ranks_scores_a_pykeen_folder_only_when_trusted(
    pykeen_folder, nations_dir, reference, tmp_path, capsys
):
    """Every command that rescores a model (here `kgrank ranks`) takes a PyKEEN folder
    through --model-dir, its pickle loaded only with --trust-pickle."""
    from cli_cases import _run

    out = tmp_path / "ranks.parquet"
    argv = ["ranks", "--dataset-dir", str(nations_dir), "--model-dir", str(pykeen_folder)]
    argv += ["--out", str(out), "--seed", "0", "--scoring", "pykeen", "--quiet"]
    code, _, err = _run(argv, capsys)
    assert code == 2 and "pass --trust-pickle" in err and len(err.strip().splitlines()) == 1
    assert not out.exists()
    code, _, _ = _run([*argv, "--trust-pickle"], capsys)
    assert code == 0
    pd.testing.assert_frame_equal(pd.read_parquet(out), reference)
