"""Study ir: the kgc-sparsity reader, the scoring pass, the item table and the TREC files."""

import itertools
import math
import shutil
import warnings
from pathlib import Path

import ir_measures
import numpy as np
import pandas as pd
import pytest
import torch
from conftest import SHARED, protocol_runs
from pykeen.datasets.nations import NATIONS_TEST_PATH

from kgrank.data.datasets import load_factories
from kgrank.data.rank_table import SIDES
from kgrank.engine.candidates import KnownAnswers, known_answers
from kgrank.engine.ranks import compute_ranks
from kgrank.errors import KgrankInputError
from kgrank.evaluation.metrics import evaluate_rank_table
from kgrank.studies.ir import trec
from kgrank.studies.ir.evaluation import (
    evaluate_model,
    evaluate_scores,
    evaluation_pass,
    item_columns,
    micro_rank_table,
    plan_items,
)
from kgrank.studies.ir.kgc_sparsity import (
    POOLING_DEPTH,
    check_sample,
    raw_splits,
    read_kgc_sparsity,
    split_evaluation,
)

# FB-Test-S of the fixture is drawn over PyKEEN's raw Nations test file, in its line order
NATIONS_RAW_TEST = Path(NATIONS_TEST_PATH)
FIXTURE = Path(__file__).resolve().parents[1] / "data" / "kgc-sparsity-nations"
POOLING = "FB-Test-S-C/supplementary/pooling_depth.txt"
KGC = SHARED / "data" / "kgc-sparsity"
FB15K237_ARCHIVE = SHARED / "data" / "fb15k237" / "FB15k-237.tar.gz"
real_data = pytest.mark.skipif(
    not (KGC.is_dir() and FB15K237_ARCHIVE.is_file()),
    reason="the kgc-sparsity data or the FB15k-237 archive is not under ../shared/data",
)


def read_back(run_path: Path, qrels_path: Path) -> pd.DataFrame:
    """AP@20 and nDCG@20 per query (trec.MEASURE_COLUMNS) of a run and a qrels file on
    disk, read back with ir-measures' own readers (gzip by the ``.gz`` suffix)."""
    run = pd.DataFrame(ir_measures.read_trec_run(str(run_path)), columns=["query_id", "doc_id", "score"])
    return trec.per_query_measures(run, pd.DataFrame(ir_measures.read_trec_qrels(str(qrels_path))))


# --- a hand-made query set -------------------------------------------------------------
# Six entities, one relation. Evaluation "hand": (0, 0, 1) and (0, 0, 2). Known in training:
# (0, 0, 3) (a known tail of the query (0, 0, ?)) and (4, 0, 1) (a known head of (?, 0, 1)).
TAIL_SCORES = {0: [0.5, 0.9, 0.3, 1.0, 0.7, 0.3]}  # by head: scores of every tail
HEAD_SCORES = {1: [0.2, 0.2, 0.1, 0.2, 0.9, 0.0], 2: [0.1, 0.5, 0.0, 0.6, 0.05, 0.2]}  # by tail
LABELS = [f"e{i}" for i in range(6)]


def hand_scores(triples: np.ndarray, side: str) -> torch.Tensor:
    if side == "tail":
        return torch.tensor([TAIL_SCORES[int(head)] for head in triples[:, 0]])
    return torch.tensor([HEAD_SCORES[int(tail)] for tail in triples[:, 2]])


@pytest.fixture(scope="module")
def hand_pass():
    evaluations = pd.DataFrame({"evaluation": "hand", "head": [0, 0], "relation": [0, 0], "tail": [1, 2]})
    known = KnownAnswers([np.array([[0, 0, 3], [4, 0, 1], [0, 0, 1], [0, 0, 2]])], 6, 1)
    return evaluate_scores(
        hand_scores, known, evaluations, LABELS, hits=(1, 3), run_depth=6, export=("hand",), progress=False
    )


def rows_of(items: pd.DataFrame, averaging: str) -> pd.DataFrame:
    return items[items["averaging"] == averaging].set_index("query")


def test_queries_are_numbered_by_side_relation_and_given():
    evaluations = pd.DataFrame({"evaluation": "hand", "head": [0, 0], "relation": [0, 0], "tail": [1, 2]})
    items = plan_items(evaluations)
    # head queries (given tail 1, then 2) come before the tail query (given head 0)
    assert items[["side", "given", "answer", "query"]].values.tolist() == [
        ["head", 1, 0, 0],
        ["head", 2, 0, 1],
        ["tail", 0, 1, 2],
        ["tail", 0, 2, 2],
    ]


def test_micro_ranks_and_positions_by_hand(hand_pass):
    micro = hand_pass.micro.set_index(["query", "answer"])
    # (?, 0, 1): answer 0 (0.2) against 1, 2, 3, 5 (4 is known): ties with 1 and 3 -> 1..3
    # (?, 0, 2): answer 0 (0.1) against all five others: 1, 3, 5 above -> 4
    # (0, 0, ?): answer 1 (0.9) against 0, 4, 5 -> 1; answer 2 (0.3) against 0, 4, 5: two
    # above, a tie with 5 -> 3..4
    expected = {
        (0, 0): (1, 3, 4, 1),
        (1, 0): (4, 4, 5, 4),
        (2, 1): (1, 1, 3, 1),
        (2, 2): (3, 4, 3, 4),  # run list 1, 4, 0, 2, 5: the tie 2 = 5 goes by id
    }
    for key, (optimistic, pessimistic, num_other, position) in expected.items():
        row = micro.loc[key]
        assert (row["optimistic"], row["pessimistic"], row["num_other"], row["position"]) == (
            optimistic,
            pessimistic,
            num_other,
            position,
        )
    items = rows_of(hand_pass.items, "micro")
    assert items["arithmetic_mean_rank"].tolist() == [2.0, 4.0, 1.0, 3.5]
    assert items["num_candidates"].tolist() == [5, 6, 4, 4]
    assert items["hits_at_1"].tolist() == [0.0, 0.0, 1.0, 0.0]
    # uniform on 1..4: E[1/K] = H_4 / 4, Var = H_4^(2) / 4 - E^2
    harmonic, harmonic2 = 1 + 1 / 2 + 1 / 3 + 1 / 4, 1 + 1 / 4 + 1 / 9 + 1 / 16
    tail_row = items.iloc[2]
    assert tail_row["inverse_harmonic_mean_rank_expectation"] == pytest.approx(harmonic / 4)
    assert tail_row["inverse_harmonic_mean_rank_variance"] == pytest.approx(
        harmonic2 / 4 - (harmonic / 4) ** 2
    )
    assert tail_row["hits_at_3_expectation"] == pytest.approx(3 / 4)
    assert np.isnan(items["ap_at_20"]).all()


def test_macro_items_by_hand(hand_pass):
    macro = rows_of(hand_pass.items, "macro")
    assert macro["num_relevant"].tolist() == [1, 1, 2]
    assert macro["num_candidates"].tolist() == [5, 6, 5]
    assert macro["arithmetic_mean_rank"].tolist() == [2.0, 4.0, 1.0]  # best of 1 and 3.5
    assert macro["position"].tolist() == [1, 4, 1]
    assert macro["weight"].tolist() == [1.0, 1.0, 1.0]
    # tail query: M = 3 others, R = 2 relevant: P(K = 1..4) = 2/5, 3/10, 1/5, 1/10
    probabilities = np.array([0.4, 0.3, 0.2, 0.1])
    reciprocal = 1.0 / np.arange(1, 5)
    expectation = (probabilities * reciprocal).sum()
    assert macro.loc[2, "inverse_harmonic_mean_rank_expectation"] == pytest.approx(expectation)
    assert macro.loc[2, "inverse_harmonic_mean_rank_variance"] == pytest.approx(
        (probabilities * reciprocal**2).sum() - expectation**2
    )
    assert macro.loc[2, "hits_at_1_expectation"] == pytest.approx(0.4)
    assert macro.loc[2, "arithmetic_mean_rank_expectation"] == pytest.approx(0.4 + 0.6 + 0.6 + 0.4)
    # AP@20: relevant at positions 1 and 4 -> (1/1 + 2/4) / 2; nDCG@20: (1 + 1/log2 5) / (1 + 1/log2 3)
    assert macro.loc[2, "ap_at_20"] == pytest.approx(0.75)
    assert macro.loc[2, "ndcg_at_20"] == pytest.approx((1 + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))
    assert macro.loc[0, "ap_at_20"] == pytest.approx(1.0)
    assert macro.loc[1, "ap_at_20"] == pytest.approx(0.25)
    assert macro.loc[1, "ndcg_at_20"] == pytest.approx(1 / math.log2(5))


def test_macro_pykeen_items_are_micro_items_weighted_per_query(hand_pass):
    pykeen = rows_of(hand_pass.items, "macro-pykeen")
    micro = rows_of(hand_pass.items, "micro")
    assert pykeen["weight"].tolist() == [1.0, 1.0, 0.5, 0.5]
    assert pykeen["inverse_harmonic_mean_rank"].tolist() == micro["inverse_harmonic_mean_rank"].tolist()
    assert pykeen["inverse_harmonic_mean_rank_variance"].isna().all()
    # PyKEEN's macro MRR: mean over queries of the mean reciprocal rank of the answers
    value = (pykeen["weight"] * pykeen["inverse_harmonic_mean_rank"]).sum() / pykeen["weight"].sum()
    assert value == pytest.approx((1 / 2 + 1 / 4 + (1 + 1 / 3.5) / 2) / 3)
    assert list(hand_pass.items.columns) == item_columns((1, 3))


def test_run_lists_and_qrels_by_hand(hand_pass):
    runs = hand_pass.runs
    tail_run = runs[runs["query"] == 2]
    assert tail_run["entity"].tolist() == [1, 4, 0, 2, 5]  # 3 is a known non-relevant answer
    assert tail_run["position"].tolist() == [1, 2, 3, 4, 5]
    assert runs[runs["query"] == 0]["entity"].tolist() == [0, 1, 3, 2, 5]  # ties by id
    assert sorted(hand_pass.qrels[["query", "entity"]].values.tolist()) == [[0, 0], [1, 0], [2, 1], [2, 2]]


def test_trec_files_read_back_equal_the_item_table(hand_pass, tmp_path):
    run_path, qrels_path = tmp_path / "hand.run.gz", tmp_path / "hand.qrels"
    trec.write_run(run_path, hand_pass.runs, LABELS)
    trec.write_qrels(qrels_path, hand_pass.qrels, LABELS)
    import gzip

    with gzip.open(run_path, "rt") as handle:
        first = handle.readline().split()
    assert first == ["head-0", "Q0", "e0", "1", "-1", "kgrank"]
    assert qrels_path.read_text().splitlines()[0] == "head-0 0 e0 1"
    measured = read_back(run_path, qrels_path).set_index("qid")
    macro = rows_of(hand_pass.items, "macro")
    for query, row in macro.iterrows():
        qid = f"{row['side']}-{query}"
        assert measured.loc[qid, "ap_at_20"] == pytest.approx(row["ap_at_20"], abs=1e-12)
        assert measured.loc[qid, "ndcg_at_20"] == pytest.approx(row["ndcg_at_20"], abs=1e-12)


def _answers_of(triples, given_column, given, relation, answer_column):
    return {int(t[answer_column]) for t in triples if t[given_column] == given and t[1] == relation}


def _dense_reference(scores, known_triples, evaluations, run_depth):
    """Brute force, one (protocol, evaluation, item) at a time: the micro columns and run
    lists that evaluation_pass must give, counted over each item's own filtered row."""
    micro, runs = [], []
    for protocol, known in known_triples.items():
        for name, frame in evaluations.groupby("evaluation"):
            triples = frame[["head", "relation", "tail"]].drop_duplicates().to_numpy()
            for side in ("head", "tail"):
                given_column, answer_column = (2, 0) if side == "head" else (0, 2)
                for triple in triples:
                    given, relation, answer = triple[given_column], triple[1], triple[answer_column]
                    row = scores[side][relation, given, answer]

                    query = (given_column, given, relation, answer_column)
                    relevant = _answers_of(triples, *query)
                    filtered = _answers_of(known, *query) - relevant
                    candidates = [e for e in range(len(row)) if e not in filtered]
                    others = [e for e in candidates if e not in relevant]
                    true = row[answer]
                    micro.append(
                        {
                            "protocol": protocol,
                            "evaluation": name,
                            "side": side,
                            "head": int(triple[0]),
                            "relation": int(relation),
                            "tail": int(triple[2]),
                            "optimistic": 1 + sum(row[e] > true for e in others),
                            "pessimistic": 1 + sum(row[e] >= true for e in others),
                            "num_other": len(others),
                            "position": 1
                            + sum(row[e] > true or (row[e] == true and e < answer) for e in candidates),
                            "relevant_above": sum(row[e] > true for e in relevant),
                        }
                    )
                    if answer == min(relevant):
                        order = sorted(candidates, key=lambda e, row=row: (-row[e], e))[:run_depth]
                        runs.append((protocol, name, side, int(given), int(relation), order))
    return pd.DataFrame(micro), runs


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("batch_size", [3, 256])
def test_micro_ranks_and_run_lists_equal_a_dense_count_per_item(seed, batch_size):
    """Scores on a grid of seven values, infinities included (ties everywhere), a row of
    its own per (side, triple) as a model gives, three overlapping evaluation sets and
    one of every triple (where both protocols' filters are empty, so the second protocol
    takes the first one's ranks over), two protocols whose known answers differ, batches
    that split the sets: every rank, position, count and run list equals brute force
    over the item's own row, and there are no other run lists."""
    rng = np.random.default_rng(seed)
    num_entities, num_relations = 12, 2
    grid = np.array([-np.inf, 0.0, 0.25, 0.5, 0.75, 1.0, np.inf], dtype=np.float32)
    # scores[side][relation, given, answer]: one row per (side, triple)
    table = {
        side: grid[rng.integers(0, len(grid), (num_relations, num_entities, num_entities, num_entities))]
        for side in SIDES
    }
    pool = np.unique(rng.integers(0, [num_entities, num_relations, num_entities], (40, 3)), axis=0)
    evaluations = pd.concat(
        [
            pd.DataFrame(
                pool[rng.choice(len(pool), 12, replace=False)], columns=["head", "relation", "tail"]
            ).assign(evaluation=name)
            for name in ("a", "b", "c")
        ]
        + [pd.DataFrame(pool, columns=["head", "relation", "tail"]).assign(evaluation="every")],
        ignore_index=True,
    )[["evaluation", "head", "relation", "tail"]]
    train = pool[rng.choice(len(pool), 20, replace=False)]
    known_triples = {"narrow": train, "wide": np.unique(np.concatenate([train, pool[:25]]), axis=0)}
    known = {
        name: KnownAnswers([triples], num_entities, num_relations) for name, triples in known_triples.items()
    }

    def score_batch(triples, side):
        given, answer = (triples[:, 2], triples[:, 0]) if side == "head" else (triples[:, 0], triples[:, 2])
        return torch.tensor(table[side][triples[:, 1], given, answer])

    micro, runs = evaluation_pass(
        score_batch,
        known,
        evaluations,
        run_depth=7,
        export=("a", "b", "c", "every"),
        batch_size=batch_size,
        progress=False,
    )
    expected_micro, expected_runs = _dense_reference(table, known_triples, evaluations, 7)
    keys = ["protocol", "evaluation", "side", "head", "relation", "tail"]
    found = micro[[*keys, *expected_micro.columns.difference(keys)]].sort_values(keys).reset_index(drop=True)
    expected_micro = expected_micro[found.columns].sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(found, expected_micro, check_dtype=False)
    # run lists: one per (protocol, evaluation, query), read through protocol_runs
    items = plan_items(evaluations)
    for protocol, name, side, given, relation, order in expected_runs:
        query = items[
            (items["evaluation"] == name)
            & (items["side"] == side)
            & (items["given"] == given)
            & (items["relation"] == relation)
        ]["query"].iloc[0]
        run = protocol_runs(runs, protocol, name)
        assert run[run["query"] == query].sort_values("position")["entity"].tolist() == order
    found_runs = sum(
        protocol_runs(runs, protocol, name)["query"].nunique()
        for protocol in known
        for name in evaluations["evaluation"].unique()
    )
    assert found_runs == len(expected_runs)


def test_nan_scores_are_refused():
    evaluations = pd.DataFrame({"evaluation": "hand", "head": [0], "relation": [0], "tail": [1]})
    known = KnownAnswers([np.array([[0, 0, 1]])], 6, 1)

    def broken(triples: np.ndarray, side: str) -> torch.Tensor:
        return torch.full((len(triples), 6), float("nan"))

    with pytest.raises(KgrankInputError, match="scored NaN"):
        evaluate_scores(broken, known, evaluations, LABELS, progress=False)


def test_micro_rank_table_feeds_the_metric_registry(hand_pass):
    table = micro_rank_table(hand_pass.micro, "hand")
    assert table["realistic"].tolist() == [2.0, 4.0, 1.0, 3.5]
    assert table["num_candidates"].tolist() == [5, 6, 4, 4]
    tidy = evaluate_rank_table(table)
    mrr = tidy[(tidy["side"] == "both") & (tidy["rank_type"] == "realistic")].set_index("metric")
    assert mrr.loc["inverse_harmonic_mean_rank", "value"] == pytest.approx((1 / 2 + 1 / 4 + 1 + 1 / 3.5) / 4)
    with pytest.raises(KgrankInputError, match="no items"):
        micro_rank_table(hand_pass.micro, "other")


# --- the Nations fixture ------------------------------------------------------------------


def test_fixture_reading(nations_dir, capsys):
    # no Python warning (with its source path): the stray label is one line on stderr
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = read_kgc_sparsity(FIXTURE, nations_dir, NATIONS_RAW_TEST)
    notes = capsys.readouterr().err.splitlines()
    assert len(notes) == 1 and notes[0].startswith(f"{FIXTURE}: 1 labels of ")
    assert "counted as N" in notes[0]
    counts = data.counts.set_index(["file", "quantity"])["value"]
    assert counts["FB-Test-S/samples.txt", "rows_read"] == 50
    assert counts["FB-Test-S-C/supplementary/human_labeled.txt", "stray_labels"] == 1
    pool_rows = [line.split("\t") for line in (FIXTURE / POOLING_DEPTH).read_text().splitlines() if line]
    pool = {"distinct_entities_read": {row[position] for row in pool_rows for position in (0, 2)}}
    pool["distinct_relations_read"] = {row[1] for row in pool_rows}
    for quantity, labels in pool.items():
        assert counts[POOLING_DEPTH, quantity] == len(labels) > 1, quantity
    test_relations = {line.split("\t")[1] for line in NATIONS_RAW_TEST.read_text().splitlines() if line}
    assert counts["FB-Test-O", "distinct_relations_read"] == len(test_relations)
    assert (
        counts["FB-Test-O/trec_queries.txt", "queries_in_both"]
        == counts["FB-Test-O/trec_queries.txt", "queries_of_evaluation"]
    )
    evaluations = data.evaluations
    triples = {
        name: set(map(tuple, frame[["head", "relation", "tail"]].values))
        for name, frame in evaluations.groupby("evaluation")
    }
    assert triples["pooled-d0"] == triples["sample"]
    assert triples["pooled-d10"] == triples["pooled"]
    assert all(triples[f"pooled-d{d}"] <= triples[f"pooled-d{d + 1}"] for d in range(10))
    assert len(triples["test"]) == 201
    assert set(data.relations["category"]) <= {"1-1", "1-N", "N-1", "N-N", "unknown"}
    # a plain raw test file has no train or valid: the pair against the whole graph is left out
    assert list(zip(data.divergences["first"], data.divergences["second"], strict=True)) == [
        ("FB-Test-S", "FB-Test-O"),
        ("FB-Test-S-C", "FB-Test-O"),
    ]
    assert (data.divergences["kl_second_first"] > 0).all()
    assert split_evaluation(nations_dir).equals(
        evaluations[evaluations["evaluation"] == "test"].reset_index(drop=True)
    )


def _broken_copy(tmp_path: Path, file: str, line_number: int, text: str) -> Path:
    folder = tmp_path / "kgc"
    shutil.copytree(FIXTURE, folder)
    lines = (folder / file).read_text().splitlines(keepends=True)
    lines[line_number - 1] = text
    (folder / file).write_text("".join(lines))
    return folder


@pytest.mark.parametrize(
    ("file", "text", "message"),
    [
        ("FB-Test-S-C/annotations.txt", "a\tb\n", r"FB-Test-S-C/annotations.txt:3: expected 4"),
        ("FB-Test-S-C/annotations.txt", "brazil\taccusation\tusa\tX\n", r"annotations.txt:3: label 'X'"),
        # a damaged sample_idxs.txt is named, not the raw test file
        (
            "FB-Test-S/sample_idxs.txt",
            "0\n",
            r"^FB-Test-S/sample_idxs.txt:3: 0, where .* gives 7 .*; restore sample_idxs.txt$",
        ),
        ("FB-Test-S/sample_idxs.txt", "seven\n", r"sample_idxs.txt:3: 'seven' is not a line index"),
        (
            "FB-Test-S/sample_idxs.txt",
            "",
            r"^FB-Test-S/sample_idxs.txt:3: \d+, where .*restore sample_idxs.txt$",
        ),
        ("FB-Test-S/samples.txt", "", r"^FB-Test-S/samples.txt: 49 lines where .*; restore samples.txt$"),
        (POOLING, "ussr\trelintergovorgs\tegypt\tdeep\n", rf"{POOLING}:3: pool depth 'deep' is not a whole"),
        (POOLING, "ussr\trelintergovorgs\tegypt\t0\n", rf"{POOLING}:3: pool depth '0' is not a whole"),
        (POOLING, "ussr\trelintergovorgs\tegypt\t" + "9" * 12 + "\n", rf"{POOLING}:3: pool depth '9+'"),
        ("FB-Test-O/trec_queries.txt", "side0\tusa\taccusation\n", r"trec_queries.txt:3: query id"),
    ],
)
def test_bad_inputs_name_file_and_line(nations_dir, tmp_path, file, text, message):
    folder = _broken_copy(tmp_path, file, 3, text)
    with pytest.raises(KgrankInputError, match=message):
        read_kgc_sparsity(folder, nations_dir, NATIONS_RAW_TEST)


@pytest.mark.parametrize("file", ["FB-Test-S-C/test.txt", POOLING, "FB-Test-O/mid2name.txt"])
def test_an_empty_kgc_file_is_refused(nations_dir, tmp_path, file):
    folder = tmp_path / "kgc"
    shutil.copytree(FIXTURE, folder)
    (folder / file).write_text("")
    with pytest.raises(KgrankInputError, match=rf"^{file}: empty; restore the kgc-sparsity folder$"):
        read_kgc_sparsity(folder, nations_dir, NATIONS_RAW_TEST)


def test_unknown_entities_and_relations_are_dropped_counted_and_named(nations_dir, tmp_path, capsys):
    from kgrank.studies.ir.report import counts_table

    folder = tmp_path / "kgc"
    shutil.copytree(FIXTURE, folder)
    extra = {
        "FB-Test-S-C/supplementary/filtered.txt": "atlantis\taccusation\tusa\tN\nusa\tinvades\tatlantis\tN\n",
        "FB-Test-O/trec_queries.txt": "tail999\tatlantis\taccusation\n",
    }
    for file, text in extra.items():
        with (folder / file).open("a") as handle:
            handle.write(text)
    capsys.readouterr()
    data = read_kgc_sparsity(folder, nations_dir, NATIONS_RAW_TEST)
    counts = data.counts.set_index(["file", "quantity"])
    filtered = "FB-Test-S-C/supplementary/filtered.txt"
    assert counts.loc[(filtered, "rows_dropped"), "value"] == 2
    assert counts.loc[(filtered, "unknown_entities"), ["value", "names"]].tolist() == [1, "atlantis"]
    assert counts.loc[(filtered, "unknown_relations"), ["value", "names"]].tolist() == [1, "invades"]
    queries = "FB-Test-O/trec_queries.txt"
    assert counts.loc[(queries, "unknown_entities"), ["value", "names"]].tolist() == [1, "atlantis"]
    assert counts.loc[("FB-Test-S/samples.txt", "rows_dropped"), "value"] == 0
    # one line says so, once, naming them; the report table names them per file
    notes = [line for line in capsys.readouterr().err.splitlines() if "unknown to the training split" in line]
    assert len(notes) == 1
    assert "1 entity (atlantis) and 1 relation (invades)" in notes[0]
    table = counts_table(data.counts).set_index("file")
    assert table.loc[filtered, "unknown_labels"] == "atlantis, invades"
    assert table.loc[filtered, "rows_dropped"] == "2"


def test_missing_file_and_wrong_sample_lines(nations_dir, tmp_path):
    folder = _broken_copy(tmp_path, "FB-Test-S/samples.txt", 2, "usa\taccusation\tbrazil\n")
    with pytest.raises(KgrankInputError, match=r"samples.txt:2: .* is not line"):
        check_sample(folder, raw_splits(NATIONS_RAW_TEST, test_only=True)["test"])
    (folder / "FB-Test-O/mid2name.txt").unlink()
    with pytest.raises(KgrankInputError, match="samples.txt:2"):
        read_kgc_sparsity(folder, nations_dir, NATIONS_RAW_TEST)
    shutil.copy(FIXTURE / "FB-Test-S/samples.txt", folder / "FB-Test-S/samples.txt")
    with pytest.raises(KgrankInputError, match="mid2name.txt: file not found"):
        read_kgc_sparsity(folder, nations_dir, NATIONS_RAW_TEST)


@pytest.fixture(scope="module")
def trained_nations(nations_dir):
    """TransE after two sLCWA epochs on Nations, so that scores are spread as after training."""
    from pykeen.models import TransE
    from pykeen.training import SLCWATrainingLoop

    factories = load_factories(nations_dir)
    model = TransE(triples_factory=factories.training, embedding_dim=16, random_seed=3)
    SLCWATrainingLoop(model=model, triples_factory=factories.training, optimizer="adam").train(
        triples_factory=factories.training, num_epochs=2, batch_size=512, use_tqdm=False
    )
    return model.eval(), factories


@pytest.mark.slow  # trains a model (about 7 s)
def test_micro_ranks_equal_compute_ranks(trained_nations, nations_dir):
    model, factories = trained_nations
    result = evaluate_model(model, factories, split_evaluation(nations_dir), progress=False, batch_size=37)
    ours = micro_rank_table(result.micro, "test")
    reference = compute_ranks(
        model, factories.testing.mapped_triples, known_answers(factories), progress=False
    )
    merged = ours.merge(reference, on=["side", "head", "relation", "tail"], suffixes=("", "_reference"))
    assert len(merged) == len(ours) == len(reference)
    for column in ("optimistic", "realistic", "pessimistic", "num_candidates"):
        assert (merged[column] == merged[f"{column}_reference"]).all(), column
    assert not result.items["inverse_harmonic_mean_rank"].isna().any()


@pytest.mark.slow  # trains a model (about 7 s)
def test_fixture_pass_runs_positions_and_trec_files(trained_nations, nations_dir, tmp_path):
    model, factories = trained_nations
    data = read_kgc_sparsity(FIXTURE, nations_dir, NATIONS_RAW_TEST)  # its stray label: a line on stderr
    result = evaluate_model(
        model, factories, data.evaluations, export=("pooled", "test"), run_depth=1000, progress=False
    )
    items = result.items
    assert set(items["evaluation"]) == set(data.evaluations["evaluation"])
    assert list(dict.fromkeys(items["protocol"])) == ["paper", "all-known"]
    # the run list holds every relevant answer at its micro position, under each protocol
    micro = result.micro[result.micro["evaluation"].isin(["pooled", "test"])]
    for (protocol, name), chosen in micro.groupby(["protocol", "evaluation"]):
        runs = protocol_runs(result.runs, protocol, name).set_index(["query", "entity"])["position"]
        keys = list(zip(chosen["query"], chosen["answer"], strict=True))
        assert (runs.loc[keys].to_numpy() == chosen["position"].to_numpy()).all()
    # the depth-20 run of the item table gives the values of the full-depth exported run,
    # and the files on disk give them too
    labels = sorted(factories.training.entity_to_id, key=factories.training.entity_to_id.get)
    for protocol, name in itertools.product(("paper", "all-known"), ("pooled", "test")):
        run_path, qrels_path = tmp_path / f"{name}.run", tmp_path / f"{name}.qrels.gz"
        trec.write_run(run_path, protocol_runs(result.runs, protocol, name), labels)
        trec.write_qrels(qrels_path, result.qrels[result.qrels["evaluation"] == name], labels)
        measured = read_back(run_path, qrels_path)
        macro = items[
            (items["evaluation"] == name) & (items["averaging"] == "macro") & (items["protocol"] == protocol)
        ]
        macro = macro.assign(qid=macro["side"] + "-" + macro["query"].astype(str)).merge(measured, on="qid")
        assert len(macro) == len(measured) > 0
        assert np.allclose(macro["ap_at_20_x"], macro["ap_at_20_y"], atol=1e-12)
        assert np.allclose(macro["ndcg_at_20_x"], macro["ndcg_at_20_y"], atol=1e-12)


def test_measures_of_the_depth_20_run_equal_those_of_the_full_run(tmp_path):
    """60 entities and many answers per query, so that run lists run past depth 20."""
    generator = np.random.default_rng(5)
    num_entities, num_relations = 60, 2
    tail_scores = torch.as_tensor(generator.random((num_entities, num_relations, num_entities)))
    head_scores = torch.as_tensor(generator.random((num_entities, num_relations, num_entities)))

    def scores(triples: np.ndarray, side: str) -> torch.Tensor:
        if side == "tail":
            return tail_scores[triples[:, 0], triples[:, 1]].clone()
        return head_scores[triples[:, 2], triples[:, 1]].clone()

    def random_triples(count: int) -> np.ndarray:
        return np.column_stack(
            [
                generator.integers(0, 4, count),
                generator.integers(0, 2, count),
                generator.integers(0, 60, count),
            ]
        )

    evaluation = np.unique(random_triples(80), axis=0)
    known = KnownAnswers([random_triples(100), evaluation], num_entities, num_relations)
    evaluations = pd.DataFrame(
        {
            "evaluation": "many",
            "head": evaluation[:, 0],
            "relation": evaluation[:, 1],
            "tail": evaluation[:, 2],
        }
    )
    labels = [f"e{i}" for i in range(num_entities)]
    result = evaluate_scores(
        scores, known, evaluations, labels, run_depth=1000, export=("many",), progress=False
    )
    assert result.runs["position"].max() > 40
    assert (result.micro["position"] > trec.MEASURE_DEPTH).any()
    full = trec.per_query_measures(
        trec.run_frame(result.runs, labels), trec.qrels_frame(result.qrels, labels)
    )
    trec.write_run(tmp_path / "many.run", result.runs, labels)
    trec.write_qrels(tmp_path / "many.qrels", result.qrels, labels)
    assert full.equals(read_back(tmp_path / "many.run", tmp_path / "many.qrels"))
    macro = result.items[result.items["averaging"] == "macro"]
    macro = macro.assign(qid=macro["side"] + "-" + macro["query"].astype(str)).merge(full, on="qid")
    assert len(macro) == len(full)
    assert np.array_equal(macro["ap_at_20_x"], macro["ap_at_20_y"])
    assert np.array_equal(macro["ndcg_at_20_x"], macro["ndcg_at_20_y"])
    assert (macro["ap_at_20_x"] > 0).any() and (macro["ap_at_20_x"] < 1).any()


# --- the real data ------------------------------------------------------------------------


@real_data
def test_fb_test_s_is_reproduced_from_the_raw_test_file():
    raw = raw_splits(FB15K237_ARCHIVE, test_only=True)["test"]
    assert check_sample(KGC, raw) == (20466, 1023)


@real_data
@pytest.mark.slow
def test_real_depth_sets_span_sample_to_pooled(fb15k237_dir, capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        data = read_kgc_sparsity(KGC, fb15k237_dir, FB15K237_ARCHIVE)
    notes = capsys.readouterr().err.splitlines()
    assert len(notes) == 2 and "63 labels" in notes[0]
    # FB-Test-S drew one raw test triple of /m/0jvq, an entity FB15k-237's training split lacks
    assert "1 entity (/m/0jvq) unknown to the training split" in notes[1]
    evaluations = data.evaluations
    triples = {
        name: set(map(tuple, frame[["head", "relation", "tail"]].values))
        for name, frame in evaluations.groupby("evaluation")
    }
    assert triples["pooled-d0"] == triples["sample"]
    assert triples["pooled-d10"] == triples["pooled"]
    counts = data.counts.set_index(["file", "quantity"])["value"]
    assert counts[str(FB15K237_ARCHIVE), "rows_read"] == 20466
    assert counts["FB-Test-S/samples.txt", "rows_read"] == 1023
    assert counts["FB-Test-S-C/test.txt", "rows_read"] == 2738
    assert counts["FB-Test-S-C/annotations.txt", "rows_read"] == 22492
    assert counts["FB-Test-S-C/supplementary/human_labeled.txt", "stray_labels"] == 63
    # the pool and the test split as Sec. 3.1 and 3.2 count them: 7,087 entities and 151
    # relations of 21,469 pooled triples, 224 relations of FB-Test-O
    pool = "FB-Test-S-C/supplementary/pooling_depth.txt"
    assert counts[pool, "rows_read"] == 21469
    assert (counts[pool, "distinct_entities_read"], counts[pool, "distinct_relations_read"]) == (7087, 151)
    assert counts["FB-Test-O", "distinct_relations_read"] == 224
    dropped = {
        "FB-Test-S/samples.txt": 1,
        "FB-Test-S-C/test.txt": 1,
        "FB-Test-S-C/annotations.txt": 46,
        "FB-Test-S-C/supplementary/filtered.txt": 45,
        "FB-Test-S-C/supplementary/human_labeled.txt": 0,
        "FB-Test-S-C/supplementary/pooling_depth.txt": 45,
        "FB-Test-S-C/trec_queries.txt": 1,
        "FB-Test-O/trec_queries.txt": 29,
        "FB-Test-O/mid2name.txt": 36,
    }
    assert {file: counts[file, "rows_dropped"] for file in dropped} == dropped
    assert (data.counts[data.counts["quantity"] == "unknown_relations"]["value"] == 0).all()
    names = data.counts.set_index(["file", "quantity"])["names"]
    assert names["FB-Test-S-C/annotations.txt", "unknown_entities"] == "/m/0jvq"
    assert (data.relations["category"] != "unknown").all()
    divergences = data.divergences.set_index(["first", "second"])
    assert divergences["first_triples"].to_dict() == {
        ("FB-Test-S", "FB-Test-O"): 1023,
        ("FB-Test-O", "train+valid+test"): 20466,
        ("FB-Test-S-C", "FB-Test-O"): 2738,
    }
    assert divergences.loc[("FB-Test-O", "train+valid+test"), "second_triples"] == 310116
    # the printed 0.0889, 0.2789 and 0.2386 (Sec. 3.2) under add-one smoothing: the claims judge them
    kl = divergences["kl_second_first"].round(4).to_dict()
    assert kl == {
        ("FB-Test-S", "FB-Test-O"): 0.081,
        ("FB-Test-O", "train+valid+test"): 0.279,
        ("FB-Test-S-C", "FB-Test-O"): 0.2362,
    }


def test_relation_divergences_equal_the_sum_by_hand():
    from kgrank.studies.ir.kgc_sparsity import relation_divergences

    relations = {
        "FB-Test-S": np.array(["a", "a", "b"], dtype=object),
        "FB-Test-O": np.array(["a", "b", "b", "c"], dtype=object),
    }
    row = relation_divergences(relations, smoothing=1.0).iloc[0]
    # counts + 1 over {a, b, c}: S (3, 2, 1) / 6, O (2, 3, 2) / 7
    s, o = np.array([3, 2, 1]) / 6, np.array([2, 3, 2]) / 7
    assert row["kl_second_first"] == pytest.approx(float(np.sum(o * np.log(o / s))), rel=1e-12)
    assert row["kl_first_second"] == pytest.approx(float(np.sum(s * np.log(s / o))), rel=1e-12)
    assert (row["first_triples"], row["second_triples"], row["relations"]) == (3, 4, 3)
    # the pairs whose sets are not both given are left out; identical sets diverge by 0
    assert relation_divergences({"FB-Test-S": relations["FB-Test-S"]}).empty
    same = relation_divergences({"FB-Test-S": relations["FB-Test-O"], "FB-Test-O": relations["FB-Test-O"]})
    assert same["kl_second_first"].iloc[0] == pytest.approx(0.0, abs=1e-15)
    unsmoothed = relation_divergences(relations, smoothing=0.0).iloc[0]
    # S lacks c: O || S is infinite, S || O is not
    assert unsmoothed["kl_second_first"] == np.inf and np.isfinite(unsmoothed["kl_first_second"])


def test_run_order_breaks_ties_by_id_at_the_cut():
    from kgrank.studies.ir.evaluation import _run_order

    scores = torch.tensor([[0.5, 0.9, 0.5, float("nan"), 0.5, 0.1], [float("nan")] * 5 + [0.0]])
    assert [order.tolist() for order in _run_order(scores, 2)] == [[1, 0], [5]]
    assert [order.tolist() for order in _run_order(scores, 3)] == [[1, 0, 2], [5]]
    assert [order.tolist() for order in _run_order(scores, 10)] == [[1, 0, 2, 4, 5], [5]]


def test_fixture_is_what_the_script_writes(tmp_path):
    import importlib.util

    script = Path(__file__).resolve().parents[2] / "scripts" / "make_ir_fixture.py"
    spec = importlib.util.spec_from_file_location("make_ir_fixture", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(tmp_path)
    written = sorted(path.relative_to(tmp_path) for path in tmp_path.rglob("*.txt"))
    assert written == sorted(path.relative_to(FIXTURE) for path in FIXTURE.rglob("*.txt"))
    for relative in written:
        assert (tmp_path / relative).read_bytes() == (FIXTURE / relative).read_bytes(), relative


def test_raw_splits_leave_out_a_missing_split_and_refuse_a_damaged_one(tmp_path):
    """The whole graph of the relation divergences is read where the archive holds train
    and valid, left out where it lacks one, and a malformed train split is refused, never
    passed over as if it were missing."""
    import tarfile

    from kgrank.studies.ir.kgc_sparsity import raw_splits

    def archive(name: str, members: dict[str, bytes]) -> Path:
        path = tmp_path / name
        with tarfile.open(path, "w:gz") as tar:
            for member, data in members.items():
                (tmp_path / member).write_bytes(data)
                tar.add(tmp_path / member, arcname=f"data/{member}")
        return path

    test = NATIONS_RAW_TEST.read_bytes()
    whole = raw_splits(archive("whole.tar.gz", {"test.txt": test, "train.txt": test, "valid.txt": test}))
    assert sorted(whole) == ["test", "train", "valid"] and len(whole["train"]) == len(whole["test"])
    assert sorted(raw_splits(archive("test-only.tar.gz", {"test.txt": test, "valid.txt": test}))) == ["test"]
    damaged = archive("damaged.tar.gz", {"test.txt": test, "train.txt": b"a\tb\n", "valid.txt": test})
    with pytest.raises(KgrankInputError, match=r"damaged.tar.gz:data/train.txt"):
        raw_splits(damaged)
