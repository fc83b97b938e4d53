"""Study ir: the two filtering protocols (`paper`, Zhou et al.'s per-evaluation-set filter,
and `all-known`) against brute force on a tiny hand-made graph."""

import itertools

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import protocol_runs

from kgrank.engine.candidates import KnownAnswers
from kgrank.errors import KgrankInputError
from kgrank.studies.ir import trec
from kgrank.studies.ir.evaluation import evaluate_scores
from kgrank.studies.ir.settings import ALL_KNOWN, PAPER, protocol_filter_splits

NUM_ENTITIES, NUM_RELATIONS = 9, 2
LABELS = [f"e{i}" for i in range(NUM_ENTITIES)]
TRAIN = np.array([[0, 0, 5], [7, 0, 1], [0, 1, 2], [4, 0, 3]])
VALID = np.array([[0, 0, 6], [8, 0, 2]])
# (0, 0, ?) has the test answers 1, 2, 3 and 4; (?, 0, 2) the test heads 0 and 3
TEST = np.array([[0, 0, 1], [0, 0, 2], [0, 0, 3], [0, 0, 4], [3, 0, 2], [1, 1, 4], [2, 0, 7]])
# FB-Test-S-like: a sample of the test set that keeps one answer of (0, 0, ?)
SAMPLE = np.array([[0, 0, 2], [1, 1, 4], [3, 0, 2]])
# a pooled relabelling adds an answer that no split knows
POOLED = np.array([[0, 0, 2], [0, 0, 8], [1, 1, 4], [3, 0, 2]])


def table_scores(seed: int) -> dict:
    """A score of every entity for every (side, relation, given): integers in 0..5 so that
    ties happen, the same row for every triple of a query."""
    generator = np.random.default_rng(seed)
    return {
        key: generator.integers(0, 6, NUM_ENTITIES).astype(float)
        for key in itertools.product(("head", "tail"), range(NUM_RELATIONS), range(NUM_ENTITIES))
    }


def score_function(table: dict):
    def score(triples: torch.Tensor, side: str) -> torch.Tensor:
        triples = np.asarray(triples)  # the score loop hands a score function a tensor on the CPU
        given = triples[:, 2] if side == "head" else triples[:, 0]
        return torch.tensor(np.stack([table[side, r, g] for r, g in zip(triples[:, 1], given, strict=True)]))

    return score


def answers_of(triples: np.ndarray, side: str, relation: int, given: int) -> set[int]:
    if side == "tail":
        return {int(t) for h, r, t in triples if r == relation and h == given}
    return {int(h) for h, r, t in triples if r == relation and t == given}


def evaluation_frame() -> pd.DataFrame:
    return pd.concat(
        [
            pd.DataFrame(triples, columns=["head", "relation", "tail"]).assign(evaluation=name)
            for name, triples in (("test", TEST), ("sample", SAMPLE), ("pooled", POOLED))
        ],
        ignore_index=True,
    )[["evaluation", "head", "relation", "tail"]]


FILTERS = {
    PAPER: np.concatenate([TRAIN, VALID]),
    ALL_KNOWN: np.concatenate([TRAIN, VALID, TEST]),
}
SETS = {"test": TEST, "sample": SAMPLE, "pooled": POOLED}


def brute_force(scores: dict) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Micro ranks and run lists by definition: a protocol filters its known triples and the
    evaluated set's other answers (micro), or its known triples but the set's answers (run)."""
    micro, runs = [], []
    for protocol, known in FILTERS.items():
        for name, triples in SETS.items():
            for side in ("head", "tail"):
                for h, r, t in triples:
                    given, answer = (t, h) if side == "head" else (h, t)
                    row = scores[side, r, given]
                    relevant = answers_of(triples, side, r, given)
                    removed = answers_of(known, side, r, given) - relevant
                    candidates = [e for e in range(NUM_ENTITIES) if e not in removed and e not in relevant]
                    micro.append(
                        {
                            "protocol": protocol,
                            "evaluation": name,
                            "side": side,
                            "head": h,
                            "relation": r,
                            "tail": t,
                            "optimistic": 1 + sum(row[e] > row[answer] for e in candidates),
                            "pessimistic": 1 + sum(row[e] >= row[answer] for e in candidates),
                            "num_other": len(candidates),
                            "relevant_above": sum(row[e] > row[answer] for e in relevant),
                        }
                    )
                    listed = sorted(
                        (e for e in range(NUM_ENTITIES) if e not in removed), key=lambda e: (-row[e], e)
                    )
                    runs.append(
                        {
                            "protocol": protocol,
                            "evaluation": name,
                            "side": side,
                            "relation": r,
                            "given": given,
                            "run": listed,
                        }
                    )
    return pd.DataFrame(micro), pd.DataFrame(runs).drop_duplicates(
        ["protocol", "evaluation", "side", "relation", "given"]
    )


@pytest.fixture(scope="module", params=[0, 1, 2])
def passes(request):
    scores = table_scores(request.param)
    filters = {
        protocol: KnownAnswers([known], NUM_ENTITIES, NUM_RELATIONS) for protocol, known in FILTERS.items()
    }
    result = evaluate_scores(
        score_function(scores),
        filters,
        evaluation_frame(),
        LABELS,
        hits=(1, 3),
        run_depth=NUM_ENTITIES,
        export=("test", "sample", "pooled"),
        batch_size=3,
        progress=False,
    )
    return result, brute_force(scores)


def test_protocol_splits():
    assert protocol_filter_splits(["train", "valid", "test"]) == {
        PAPER: ("train", "valid"),
        ALL_KNOWN: ("train", "valid", "test"),
    }


def test_micro_ranks_of_both_protocols_equal_brute_force(passes):
    result, (expected, _) = passes
    keys = ["protocol", "evaluation", "side", "head", "relation", "tail"]
    merged = result.micro.merge(expected, on=keys, suffixes=("", "_expected"), validate="one_to_one")
    assert len(merged) == len(expected) == len(result.micro)
    for column in ("optimistic", "pessimistic", "num_other", "relevant_above"):
        assert (merged[column] == merged[f"{column}_expected"]).all(), column


def test_unsampled_answers_are_candidates_under_paper_only(passes):
    result, _ = passes
    micro = result.micro
    item = micro[(micro["evaluation"] == "sample") & (micro["side"] == "tail") & (micro["tail"] == 2)]
    item = item[item["head"] == 0].set_index("protocol")
    # (0, 0, ?) in FB-Test-S: the test answers 1, 3, 4 are unlabelled negatives under paper
    # (9 entities - train 5 - valid 6 = 7 candidates, the answer itself among them)
    assert item.loc[PAPER, "num_other"] == 6
    assert item.loc[ALL_KNOWN, "num_other"] == 3
    run = result.runs[(result.runs["evaluation"] == "sample") & (result.runs["side"] == "tail")]
    first = run[run["query"] == item.loc[PAPER, "query"]]
    assert {1, 3, 4} <= set(first.loc[first["protocol"] == PAPER, "entity"])
    assert not {1, 3, 4} & set(first.loc[first["protocol"] == ALL_KNOWN, "entity"])


def test_run_lists_of_both_protocols_equal_brute_force(passes):
    result, (_, expected) = passes
    micro = result.micro
    queries = micro.assign(given=np.where(micro["side"] == "head", micro["tail"], micro["head"]))[
        ["protocol", "evaluation", "side", "relation", "given", "query"]
    ].drop_duplicates()
    expected = expected.merge(queries, on=["protocol", "evaluation", "side", "relation", "given"])
    assert len(expected) == len(queries)
    for row in expected.itertuples(index=False):
        runs = protocol_runs(result.runs, row.protocol, row.evaluation)
        run = runs[(runs["side"] == row.side) & (runs["query"] == row.query)]
        assert run["entity"].tolist() == row.run
        assert run["position"].tolist() == list(range(1, len(row.run) + 1))


def test_protocols_coincide_on_the_whole_test_set(passes):
    result, _ = passes
    items = result.items[result.items["evaluation"] == "test"]
    paper = items[items["protocol"] == PAPER].drop(columns="protocol").reset_index(drop=True)
    known = items[items["protocol"] == ALL_KNOWN].drop(columns="protocol").reset_index(drop=True)
    pd.testing.assert_frame_equal(paper, known)
    # the pass keeps the all-known run lists of the test set out, as they equal the paper's
    runs = result.runs[result.runs["evaluation"] == "test"]
    assert set(runs["protocol"]) == {PAPER}
    pd.testing.assert_frame_equal(
        protocol_runs(result.runs, ALL_KNOWN, "test"), protocol_runs(result.runs, PAPER, "test")
    )
    # and differ on the sample, where (0, 0, ?) lacks test answers
    sample = result.items[(result.items["evaluation"] == "sample") & (result.items["averaging"] == "micro")]
    assert not np.array_equal(
        sample.loc[sample["protocol"] == PAPER, "num_candidates"].to_numpy(),
        sample.loc[sample["protocol"] == ALL_KNOWN, "num_candidates"].to_numpy(),
    )


def test_run_files_write_the_second_protocol_only_where_it_differs(passes):
    result, _ = passes
    written = [(evaluation, protocol) for evaluation, protocol, _ in trec.run_files(result.runs, SETS)]
    assert written == [
        ("test", PAPER),
        ("sample", PAPER),
        ("sample", ALL_KNOWN),
        ("pooled", PAPER),
        ("pooled", ALL_KNOWN),
    ]
    assert trec.run_file_name("test", PAPER) == "test.run.gz"
    assert trec.run_file_name("sample", ALL_KNOWN) == "sample.all-known.run.gz"


def test_macro_items_follow_the_protocols_run_lists(passes):
    """A macro item's candidates are the run list's entities; its position the first
    relevant one's place, under each protocol."""
    result, _ = passes
    items = result.items[result.items["averaging"] == "macro"]
    qrels = result.qrels
    for row in items.itertuples(index=False):
        runs = protocol_runs(result.runs, row.protocol, row.evaluation)
        run = runs[(runs["side"] == row.side) & (runs["query"] == row.query)]
        relevant = set(
            qrels.loc[
                (qrels["evaluation"] == row.evaluation)
                & (qrels["side"] == row.side)
                & (qrels["query"] == row.query),
                "entity",
            ]
        )
        assert len(run) == row.num_candidates
        assert run.loc[run["entity"].isin(relevant), "position"].min() == row.position


# --- stability: a subset under each protocol against a brute-force recomputation --------


def _filters() -> dict[str, KnownAnswers]:
    return {
        protocol: KnownAnswers([known], NUM_ENTITIES, NUM_RELATIONS) for protocol, known in FILTERS.items()
    }


def _items(scores: dict, evaluations: pd.DataFrame) -> pd.DataFrame:
    return evaluate_scores(
        score_function(scores),
        _filters(),
        evaluations,
        LABELS,
        hits=(1, 3),
        run_depth=NUM_ENTITIES,
        progress=False,
    ).items


def _brute_force_subset(scores: dict, micro: pd.DataFrame, protocol: str) -> pd.DataFrame:
    """The item rows of the subset ``micro`` (the sampled answers: side and triple),
    evaluated afresh as the evaluated set itself: per side, the sampled triples of that
    side are the set (a query is one side, so the other side's draws do not touch it)."""
    frames = []
    for side, chosen in micro.groupby("side"):
        triples = chosen[["head", "relation", "tail"]].to_numpy()
        evaluations = pd.DataFrame(triples, columns=["head", "relation", "tail"]).assign(evaluation="subset")
        items = _items(scores, evaluations[["evaluation", "head", "relation", "tail"]])
        frames.append(items[(items["side"] == side) & (items["protocol"] == protocol)])
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("protocol", [PAPER, ALL_KNOWN])
@pytest.mark.parametrize("draw", range(3))
def test_stability_subsets_equal_a_brute_force_recomputation(protocol, draw):
    from kgrank.studies.ir.aggregate import aggregate_rows, split_protocols
    from kgrank.studies.ir.stability import best_rank_tables, micro_rows, subset_values

    system_scores = {f"s{seed}": table_scores(seed) for seed in range(3)}
    test = pd.DataFrame(TEST, columns=["head", "relation", "tail"]).assign(evaluation="test")
    test = test[["evaluation", "head", "relation", "tail"]]
    items = split_protocols({name: _items(scores, test) for name, scores in system_scores.items()})[protocol]
    rows, tables = micro_rows(items, "test")
    num_rows = rows.query_order.size
    sampled = np.zeros((1, num_rows))
    sampled[0, np.random.default_rng(draw).choice(num_rows, size=num_rows // 2, replace=False)] = 1.0
    candidates = protocol == PAPER
    best_rank = best_rank_tables(rows, rows.metrics, discarded_are_candidates=candidates)
    values = subset_values(rows, tables, sampled, best_rank, discarded_are_candidates=candidates)
    reference_micro = next(iter(tables.values()))
    if candidates:
        # the discarded answers matter here: filtering them instead gives other values
        filtered = subset_values(rows, tables, sampled, best_rank_tables(rows, rows.metrics))
        assert not np.allclose(
            filtered["micro", "arithmetic_mean_rank"]["raw"], values["micro", "arithmetic_mean_rank"]["raw"]
        )
    for column, scores in enumerate(system_scores.values()):
        # the sampled micro rows as (side, triple): recover the triples from the test pass
        micro = evaluate_scores(score_function(scores), _filters(), test, LABELS, progress=False).micro
        micro = micro[micro["protocol"] == protocol].reset_index(drop=True)
        assert np.array_equal(micro["side"].to_numpy(), reference_micro["side"].to_numpy())
        expected = _brute_force_subset(scores, micro[sampled[0] > 0], protocol)
        for (averaging, metric), variants in values.items():
            rows_of = expected[expected["averaging"] == averaging]
            truth = aggregate_rows(rows_of, metric)
            for variant, key in (
                ("raw", "value"),
                ("adjusted index", "adjusted_index"),
                ("z-score", "z_score"),
            ):
                if variant in variants:
                    assert variants[variant][0, column] == pytest.approx(truth[key], rel=1e-9, abs=1e-12), (
                        averaging,
                        metric,
                        variant,
                    )


# --- the side-by-side tables --------------------------------------------------------------


def test_sample_vs_test_by_hand(tmp_path):
    from kgrank.data.io import write_report_table
    from kgrank.studies.ir.protocols import SAMPLE_VS_TEST_COLUMNS, sample_vs_test
    from kgrank.studies.ir.report import sample_vs_test_caption, sample_vs_test_table

    rows = []
    values = {(PAPER, "a", "test"): 0.30, (PAPER, "a", "sample"): 0.25, (PAPER, "b", "test"): 0.20}
    values |= {(PAPER, "b", "sample"): 0.18, (ALL_KNOWN, "a", "test"): 0.30, (ALL_KNOWN, "a", "sample"): 0.31}
    values |= {(ALL_KNOWN, "b", "test"): 0.20, (ALL_KNOWN, "b", "sample"): 0.19}
    for (protocol, model, evaluation), value in values.items():
        for averaging in ("micro", "macro"):
            rows.append(
                {
                    "protocol": protocol,
                    "model": model,
                    "evaluation": evaluation,
                    "averaging": averaging,
                    "metric": "inverse_harmonic_mean_rank",
                    "value": value if averaging == "micro" else 1.0,
                }
            )
    table = sample_vs_test(pd.DataFrame(rows))
    assert list(table.columns) == list(SAMPLE_VS_TEST_COLUMNS)
    by_key = table.set_index(["protocol", "model"])["sample_minus_test"]
    assert by_key[(PAPER, "a")] == pytest.approx(-0.05)
    assert by_key[(PAPER, "b")] == pytest.approx(-0.02)
    assert by_key[(ALL_KNOWN, "a")] == pytest.approx(0.01)
    shown = sample_vs_test_table(table)
    assert list(shown.columns) == [
        "model",
        "FB-Test-O (paper)",
        "FB-Test-S (paper)",
        "S - O (paper)",
        "FB-Test-O (all-known)",
        "FB-Test-S (all-known)",
        "S - O (all-known)",
    ]
    write_report_table(shown, tmp_path / "t.md", tmp_path / "t.tex", caption=sample_vs_test_caption(table))
    assert "S - O (all-known)" in (tmp_path / "t.md").read_text()
    with pytest.raises(KgrankInputError, match="no micro inverse_harmonic_mean_rank on evaluation 'sample'"):
        sample_vs_test(pd.DataFrame(rows).query("evaluation == 'test'"))


def test_tau_by_protocol_by_hand():
    from kgrank.studies.ir.protocols import tau_by_protocol
    from kgrank.studies.ir.report import tau_by_protocol_table

    rows = []
    for protocol, tau in ((PAPER, -0.2), (ALL_KNOWN, 1.0)):
        for comparison, category in (("sample vs pooled", "all"), ("sample vs pooled", "1-1"), ("x", "all")):
            rows.append(
                {
                    "protocol": protocol,
                    "comparison": comparison,
                    "category": category,
                    "side": "both",
                    "variant": "raw",
                    "averaging": "micro",
                    "metric": "inverse_harmonic_mean_rank",
                    "tau": tau if (comparison, category) == ("sample vs pooled", "all") else 0.5,
                    "p_value": 0.1,
                }
            )
    table = tau_by_protocol(pd.DataFrame(rows))
    assert list(table.columns) == [
        "averaging",
        "metric",
        "tau paper",
        "tau all-known",
        "p paper",
        "p all-known",
    ]
    assert table[["tau paper", "tau all-known"]].to_numpy().tolist() == [[-0.2, 1.0]]
    assert tau_by_protocol_table(table)["metric"].tolist() == ["MRR"]
    with pytest.raises(KgrankInputError, match="no column protocol"):
        tau_by_protocol(pd.DataFrame(rows).drop(columns="protocol"))
