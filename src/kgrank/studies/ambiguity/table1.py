"""Table 1 of Berrendorf et al. (2020) regenerated: AMRI from the published filtered mean
ranks, once against the full entity count (every task ranks all N entities) and once
against the per-task filtered candidate counts N_i of our own rank tables, and the
difference; also against the entity count the paper used; kgrank's own models as further
rows.

Which count did the paper use? Each published AMRI is compared, to its printed digit, with
the AMRI of four counts: the paper's entity count, ours (entities seen in training), our
per-task filtered counts, and those counts on the paper's entity set (N_i plus the
entities our preparation dropped; they are unseen in training, so they are candidates of
every task). The last reproduces all 12 published values; the full counts do not.

AMRI is the adjusted index of the mean rank, 1 - (MR - 1)/(E[MR] - 1) with
E[MR] = mean_i (N_i + 1)/2: the core's ``adjusted_arithmetic_mean_rank_index``. (The
ambiguity paper prints it as 2 sum_i (r_i - 1) / sum_i |S_i|; the `moments` study's
errata table checks that printed form.)
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from kgrank.data.tables import read_table, table_kind
from kgrank.evaluation.metrics import Variant, derived_values, lookup, metric_rows

PUBLISHED_COLUMNS = ("dataset", "model", "mean_rank", "entities", "amri_percent")
# The published AMRI is printed to 0.1 percent, the mean rank as an integer.
AMRI_HALF_UNIT = 0.0005
MEAN_RANK_HALF_UNIT = 0.5
# The counts a published AMRI is compared with, as `reproduced_by` names them.
COUNT_COLUMNS = {
    "amri_published_count": "paper's entities",
    "amri_full": "our entities",
    "amri_filtered": "filtered",
    "amri_filtered_published_entities": "filtered on paper's entities",
}
SOURCE = "Berrendorf et al. 2020, Table 1"


def published_table1_path() -> Path:
    """The published values shipped with the study (source in the file's header)."""
    return Path(str(resources.files(__package__).joinpath("published_table1.tsv")))


# the published mean ranks and AMRIs (lines starting with # are comments); a paper that
# does not state its entity count or an AMRI leaves it empty
PUBLISHED_TABLE1 = table_kind(
    "published Table 1",
    "the study's published_table1.tsv (its layout)",
    PUBLISHED_COLUMNS,
    strings=("dataset", "model"),
    floats=("mean_rank", "entities", "amri_percent"),
    nan=("entities", "amri_percent"),
    ranges={"mean_rank": (1, None), "entities": (1, None), "amri_percent": (-100, 100)},
    comment="#",
    fix="pass a published Table 1 like the study's own (dataset, model, mean_rank, entities, amri_percent)",
)


def read_published(path: str | Path) -> pd.DataFrame:
    """A published Table 1, checked (kgrank.data.tables)."""
    return read_table(path, PUBLISHED_TABLE1)


def amri(mean_rank: float, num_candidates: np.ndarray) -> float:
    """The adjusted mean rank index of ``mean_rank`` over tasks with these candidate counts."""
    metric = lookup("arithmetic_mean_rank").metric
    return derived_values(metric, mean_rank, metric.moments(np.asarray(num_candidates)))[Variant.INDEX].value


def amri_tolerance(num_candidates: np.ndarray) -> float:
    """How far a recomputed AMRI may lie from the published one: half a printed unit of
    the AMRI plus the printed mean rank's rounding carried through AMRI = 1 - (MR - 1)/(E[MR] - 1)."""
    expected_mean_rank = float(np.mean((np.asarray(num_candidates, dtype=float) + 1) / 2))
    return AMRI_HALF_UNIT + MEAN_RANK_HALF_UNIT / (expected_mean_rank - 1)


def reproduced_by(row: dict[str, float], published: float, tolerance: float) -> str:
    """The counts (COUNT_COLUMNS' names) whose AMRI lies within ``tolerance`` of ``published``."""
    names = [name for column, name in COUNT_COLUMNS.items() if abs(row[column] - published) <= tolerance]
    return "; ".join(names) if names else "none"


def indistinguishable_from_random(z_score: float, alpha: float) -> bool:
    """|z| below the two-sided normal quantile: the metric is within what a random
    scorer reaches with probability 1 - alpha."""
    return bool(abs(z_score) < stats.norm.ppf(1 - alpha / 2))


def model_row(ranks: pd.DataFrame) -> dict[str, float]:
    """MR, AMRI, MRR, AMRR, z-MRR of one rank table (realistic ranks, both sides, filtered)."""
    realistic = ranks["realistic"].to_numpy(dtype=float)
    n = ranks["num_candidates"].to_numpy()
    values = {}
    for key in ("arithmetic_mean_rank", "inverse_harmonic_mean_rank"):
        values.update({row["metric"]: row["value"] for row in metric_rows(realistic, n, lookup(key).metric)})
    return {
        "mean_rank": values["arithmetic_mean_rank"],
        "amri_filtered": values["adjusted_arithmetic_mean_rank_index"],
        "mrr": values["inverse_harmonic_mean_rank"],
        "amrr": values["adjusted_inverse_harmonic_mean_rank"],
        "z_mrr": values["z_inverse_harmonic_mean_rank"],
    }


def table1(
    published: pd.DataFrame,
    rank_tables: dict[tuple[str, str], pd.DataFrame],
    entities: dict[str, int],
    *,
    alpha: float,
) -> pd.DataFrame:
    """Published rows, then one row per (dataset, model) of ours. ``entities``: our
    datasets' entity counts (their stats.json).

    For a published row, ``amri_full`` and ``amri_filtered`` use the same entities (ours,
    where the dataset is in this run), so their difference is the effect of filtering
    alone; ``amri_published_count`` is the AMRI with the entity count the paper used,
    which differs from ours where preparing the dataset dropped entities unseen in
    training (WN18RR: 40,943 published, 40,559 in training)."""
    counts = {
        dataset: table["num_candidates"].to_numpy() for (dataset, _), table in sorted(rank_tables.items())
    }
    rows = []
    for record in published.itertuples(index=False):
        filtered = counts.get(record.dataset)
        # a paper that states no entity count leaves it NaN: its columns stay empty
        stated = float(record.entities)
        full_count = float(entities.get(record.dataset, stated))
        full = amri(record.mean_rank, np.array([full_count])) if full_count == full_count else np.nan
        per_task = amri(record.mean_rank, filtered) if filtered is not None else np.nan
        # the entities our preparation dropped are unseen in training: every task's candidates
        on_published = (
            amri(record.mean_rank, filtered + (stated - full_count))
            if filtered is not None and stated == stated
            else np.nan
        )
        row = {
            "source": SOURCE,
            "dataset": record.dataset,
            "model": record.model,
            "entities_published": stated,
            "entities": full_count,
            "mean_rank": float(record.mean_rank),
            "amri_published": float(record.amri_percent) / 100,
            "amri_published_count": amri(record.mean_rank, np.array([stated]))
            if stated == stated
            else np.nan,
            "amri_full": full,
            "amri_filtered": per_task,
            "amri_filtered_published_entities": on_published,
            "amri_difference": per_task - full,
        }
        count = stated if stated == stated else full_count
        printed = row["amri_published"] == row["amri_published"] and count == count
        row["reproduced_by"] = (
            reproduced_by(row, row["amri_published"], amri_tolerance(np.array([count]))) if printed else ""
        )
        rows.append(row)
    for (dataset, model), table in sorted(rank_tables.items()):
        ours = model_row(table)
        full = amri(ours["mean_rank"], np.array([entities[dataset]])) if dataset in entities else np.nan
        rows.append(
            {
                "source": "kgrank",
                "dataset": dataset,
                "model": model,
                "entities": entities.get(dataset, np.nan),
                **ours,
                "amri_full": full,
                "amri_difference": ours["amri_filtered"] - full,
                "random_like": indistinguishable_from_random(ours["z_mrr"], alpha),
            }
        )
    columns = [
        "source",
        "dataset",
        "model",
        "entities_published",
        "entities",
        "mean_rank",
        "amri_published",
        "amri_published_count",
        "amri_full",
        "amri_filtered",
        "amri_filtered_published_entities",
        "reproduced_by",
        "amri_difference",
        "mrr",
        "amrr",
        "z_mrr",
        "random_like",
    ]
    return pd.DataFrame(rows).reindex(columns=columns)
