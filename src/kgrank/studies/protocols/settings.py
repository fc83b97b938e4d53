"""What the rule file reads at parse time (free of pandas and torch); the study's commands
read their settings through ``--settings`` (kgrank.workflow.settings).

The study has parts; each part is a key under ``studies.protocols`` with its own
``enabled`` switch, a command ``kgrank protocols-<part>...``, rules ``protocols_<part>...``
and outputs named ``protocols_<part>...`` under results/protocols/, results/tables/ and
results/figures/. :data:`PARTS` lists the parts this code wires.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kgrank.errors import KgrankInputError
from kgrank.workflow.parts import RESCORES_MODEL

# The study's hook for systems from outside (kgrank.studies.external_parts): each part, None
# when an external system joins it, else why it does not.
FIXED_SET_PART = "fixed set of sampled candidates"
TIE_RESCORING_PART = "tie tolerances and trec_eval's tie orders"
EXTERNAL_PARTS: dict[str, str | None] = {
    "weighted geometric mean rank": None,
    "sampled-candidate estimators (drawn from the full ranks)": None,
    FIXED_SET_PART: RESCORES_MODEL,
    "tie widths": None,
    TIE_RESCORING_PART: RESCORES_MODEL,
}

# The study's parts (issue #31), each with its block of settings below: part 1 sampled
# negatives, part 2 ties, part 3 the weighted geometric mean rank.
PARTS = ("sampled", "ties", "weighted")
# Part 2's scorers (studies.protocols.ties.scorers): the model, its scores quantised, a constant
SCORERS = ("model", "quantised", "constant")
# Results of part 3, relative to results/
WEIGHTED_VALUES = "protocols/weighted.tsv"
WEIGHTED_CHECK = "protocols/weighted_montecarlo.tsv"
# Report tables and the figure (table_files / figure_files names in common.smk)
WEIGHTED_TABLE = "protocols_weighted"
WEIGHTED_CHECK_TABLE = "protocols_weighted_montecarlo"
WEIGHTED_FIGURE = "protocols_weighted"


def part_enabled(settings: Mapping[str, Any], part: str) -> bool:
    """Whether a part of the study runs: the study's and the part's own ``enabled``."""
    if part not in PARTS:
        raise KgrankInputError(f"studies.protocols: no part {part!r}; the parts are {', '.join(PARTS)}")
    return bool(settings.get("enabled", True)) and bool(settings[part].get("enabled", True))


def dataset_representatives(datasets: Sequence[str], models: Sequence[str]) -> list[tuple[str, str]]:
    """One (dataset, model) pair per dataset whose rank table gives the dataset's candidate
    counts: in the filtered setting N_i depends on the test task alone, not on the model,
    so the first trained model's table serves (the check command refuses two of a dataset)."""
    if not models:
        raise KgrankInputError("models: none trained; the protocols study needs one rank table per dataset")
    return [(dataset, models[0]) for dataset in datasets]


# --- part 1: sampled negatives ------------------------------------------------------------

# Results of part 1, relative to results/
SAMPLED_VALUES = "protocols/sampled.tsv"
SAMPLED_AGREEMENT = "protocols/sampled_agreement.tsv"
# Report table and figure (table_files / figure_files names in common.smk)
SAMPLED_TABLE = "protocols_sampled"
SAMPLED_FIGURE = "protocols_sampled"


def fixed_set_pairs(
    fixed_set: Mapping[str, int],
    datasets: Sequence[str],
    scored: Sequence[tuple[str, str]],
    entity_counts: Mapping[str, int | None],
) -> list[tuple[str, str, int]]:
    """(dataset, model, k) of every sampled rank table the fixed-set variant reads: every
    scored pair (trained, or an external PyKEEN folder) of each dataset named in
    ``studies.protocols.sampled.fixed_set``. A dataset
    that is not trained, or a k that would keep every candidate of it (k >= entities - 1,
    where the count is known), stops the plan."""
    pairs = []
    for dataset, size in fixed_set.items():
        if dataset not in datasets:
            raise KgrankInputError(
                f"studies.protocols.sampled.fixed_set: dataset {dataset!r} is not trained here; use some of "
                f"{', '.join(datasets)}"
            )
        count = entity_counts.get(dataset)
        if count is not None and size >= count - 1:
            raise KgrankInputError(
                f"studies.protocols.sampled.fixed_set: k = {size} for {dataset}, which has {count} entities: "
                f"every task would keep all its candidates; use k below {count - 1}"
            )
        pairs += [
            (dataset, model, int(size)) for scored_dataset, model in scored if scored_dataset == dataset
        ]
    return pairs


# --- part 2: ties ---------------------------------------------------------------------------

# Results of part 2, relative to results/: one scoring pass per trained pair, then the
# gathered table and the rank widths of every evaluated pair
TIES_PAIR = "protocols/ties/{dataset}/{model}.tsv"
TIES_VALUES = "protocols/ties.tsv"
TIES_WIDTHS = "protocols/ties_widths.tsv"
# Report table and figure (table_files / figure_files names in common.smk)
TIES_TABLE = "protocols_ties"
TIES_FIGURE = "protocols_ties"
