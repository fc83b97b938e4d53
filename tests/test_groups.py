"""kgrank.evaluation.groups: metrics per relation and per relation category."""

import numpy as np
import pandas as pd
import pytest

from kgrank.data.datasets import load_factories
from kgrank.data.rank_table import RANK_COLUMNS, RANK_TABLE_COLUMNS, SIDES
from kgrank.engine.candidates import candidate_counts
from kgrank.evaluation.groups import evaluate_groups, relation_categories
from kgrank.evaluation.metrics import evaluate_rank_table, lookup

CATEGORY_TRIPLES = np.array(
    [
        [0, 0, 1],
        [2, 0, 3],  # relation 0: one tail per head, one head per tail -> 1-1
        [0, 1, 1],
        [0, 1, 2],
        [0, 1, 3],  # relation 1: three tails for one head -> 1-N
        [1, 2, 0],
        [2, 2, 0],
        [3, 2, 0],  # relation 2: three heads for one tail -> N-1
        [0, 3, 1],
        [0, 3, 2],
        [1, 3, 1],
        [1, 3, 2],  # relation 3: two and two -> N-N
    ]
)


def test_relation_categories_by_hand():
    table = relation_categories(CATEGORY_TRIPLES).set_index("relation")
    assert table["category"].to_dict() == {0: "1-1", 1: "1-N", 2: "N-1", 3: "N-N"}
    assert table.loc[1, "tails_per_head"] == 3.0 and table.loc[3, "heads_per_tail"] == 2.0


def test_relation_categories_threshold():
    # relation 3 has 2 tails per head: "many" at the usual 1.5, "one" at a threshold of 2.5
    table = relation_categories(CATEGORY_TRIPLES, threshold=2.5).set_index("relation")
    assert table["category"].to_dict() == {0: "1-1", 1: "1-N", 2: "N-1", 3: "1-1"}


METRICS = [lookup("mrr").metric, lookup("hits@10").metric, lookup("count").metric]


@pytest.fixture(scope="module")
def nations_ranks(nations_dir) -> pd.DataFrame:
    """A rank table of the Nations test split with random ranks (no model needed)."""
    mapped = load_factories(nations_dir).testing.mapped_triples.numpy()
    counts = candidate_counts(nations_dir, "test")
    generator = np.random.default_rng(5)
    optimistic = np.floor(generator.random(len(counts)) * counts["num_candidates"]).astype(int) + 1
    pessimistic = np.minimum(optimistic + generator.integers(0, 2, len(counts)), counts["num_candidates"])
    table = pd.DataFrame(
        {
            "triple_id": np.tile(np.arange(len(mapped)), 2),
            "head": np.tile(mapped[:, 0], 2),
            "relation": np.tile(mapped[:, 1], 2),
            "tail": np.tile(mapped[:, 2], 2),
            "side": np.repeat(SIDES, len(mapped)),
            "optimistic": optimistic,
            "realistic": (optimistic + pessimistic) / 2,
            "pessimistic": pessimistic,
            "random": pessimistic,
            "num_candidates": counts["num_candidates"],
        }
    )
    return table[list(RANK_TABLE_COLUMNS)]


@pytest.fixture(scope="module")
def nations_groups(nations_ranks, nations_dir) -> pd.DataFrame:
    return evaluate_groups(nations_ranks, nations_dir, METRICS)


def test_group_column_is_always_text(nations_groups, nations_dir):
    assert nations_groups["group"].map(type).eq(str).all()
    training = load_factories(nations_dir).training
    relations = nations_groups[nations_groups["aggregation"] == "relation"]
    assert set(relations["group"]) <= set(training.relation_to_id)
    categories = nations_groups[nations_groups["aggregation"] == "relation_category"]
    assert set(categories["group"]) <= {"1-1", "1-N", "N-1", "N-N"}
    assert set(nations_groups["aggregation"]) == {"relation", "relation_category"}


def test_group_table_reads_back_as_written(nations_groups, tmp_path):
    from kgrank.data.io import read_tables, write_table

    write_table(tmp_path / "groups.tsv", nations_groups)
    read = read_tables([tmp_path / "groups.tsv"])
    assert read["group"].map(type).eq(str).all()
    assert read["group"].tolist() == nations_groups["group"].tolist()


def test_group_sizes_add_up(nations_groups, nations_ranks):
    for _, table in nations_groups.groupby("aggregation"):
        sizes = table[(table["metric"] == "count") & (table["rank_type"] == "realistic")]
        by_side = sizes.groupby("side")["num_ranks"].sum()
        assert by_side.to_dict() == {"both": len(nations_ranks), "head": 201, "tail": 201}
        np.testing.assert_array_equal(sizes["value"].to_numpy(), sizes["num_ranks"].to_numpy())


@pytest.mark.parametrize("aggregation", ["relation", "relation_category"])
def test_count_weighted_group_means_give_the_overall_value(nations_groups, nations_ranks, aggregation):
    overall = evaluate_rank_table(nations_ranks, METRICS).set_index(["side", "rank_type", "metric"])["value"]
    groups = nations_groups[nations_groups["aggregation"] == aggregation]
    assert groups["group"].nunique() > 1
    for side in ("head", "tail", "both"):
        for rank_type in RANK_COLUMNS:
            for key in ("inverse_harmonic_mean_rank", "hits_at_10"):
                rows = groups[
                    (groups["side"] == side) & (groups["rank_type"] == rank_type) & (groups["metric"] == key)
                ]
                weighted = (rows["value"] * rows["num_ranks"]).sum() / rows["num_ranks"].sum()
                assert weighted == pytest.approx(overall[side, rank_type, key], rel=1e-12)


def test_relation_groups_match_their_category(nations_groups, nations_dir):
    training = load_factories(nations_dir).training
    categories = relation_categories(training.mapped_triples.numpy()).set_index("relation")["category"]
    relations = nations_groups[nations_groups["aggregation"] == "relation"]
    category_sizes = (
        relations[(relations["metric"] == "count") & (relations["side"] == "both")]
        .drop_duplicates("group")
        .assign(category=lambda frame: frame["group"].map(training.relation_to_id).map(categories))
        .groupby("category")["num_ranks"]
        .sum()
    )
    by_category = nations_groups[
        (nations_groups["aggregation"] == "relation_category")
        & (nations_groups["metric"] == "count")
        & (nations_groups["side"] == "both")
    ].drop_duplicates("group")
    assert by_category.set_index("group")["num_ranks"].to_dict() == category_sizes.to_dict()
