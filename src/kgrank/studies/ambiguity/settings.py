"""The study's settings as the rule file reads them at parse time (its commands read
theirs through ``--settings``: kgrank.workflow.settings). Free of torch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kgrank.errors import KgrankInputError
from kgrank.workflow.parts import RESCORES_MODEL

# The study's hook for systems from outside (kgrank.studies.external_parts): each part, None
# when an external system joins it, else why it does not.
SUBSET_PART = "subset protocol"
EXTERNAL_PARTS: dict[str, str | None] = {
    "variants, drift (sampled protocol), Table 1, pairwise tests": None,
    SUBSET_PART: RESCORES_MODEL,
}


def subset_pairs(names: Sequence[str] | None, scored: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The (dataset, model) pairs of the subset protocol: every pair of ``scored`` (the
    trained pairs and the external PyKEEN folders, which kgrank can rescore) when ``names``
    is null, otherwise each ``dataset/model`` named, which must be one of them."""
    if names is None:
        return list(scored)
    pairs = []
    for name in names:
        dataset, _, model = name.partition("/")
        if (dataset, model) not in scored:
            raise KgrankInputError(
                f"config key studies.ambiguity.subsets.pairs: {name!r} is not a trained pair or an external "
                f"PyKEEN folder; name <dataset>/<model> of the config's datasets and models (e.g. "
                f"{'/'.join(scored[0])}), or null for all"
            )
        pairs.append((dataset, model))
    return pairs


def check_candidate_sizes(
    sizes: Sequence[int | str], entity_counts: Mapping[str, int | None], source: str = "the config"
) -> None:
    """At parse time: a sampled size must draw on some dataset the study ranks. A size at
    least the largest entity count keeps every candidate of every task, as ``all`` does (the
    drift would drop it, or let it stand in for ``all``). Sizes above a smaller dataset's
    count are the design (that dataset keeps its candidates). Unknown counts (a local
    dataset not prepared yet) leave the check to the drift job, on the rank tables."""
    if not entity_counts or any(count is None for count in entity_counts.values()):
        return
    dataset, largest = max(entity_counts.items(), key=lambda item: item[1])
    for size in sizes:
        if size != "all" and int(size) >= largest:
            raise KgrankInputError(
                f"{source}: key studies.ambiguity.candidate_sizes: {size} candidates per task, but the "
                f"largest dataset ranked ({dataset}) has {largest} entities, so every task would keep "
                f"all its candidates, as `all` does; use sizes below {largest} (and `all` for every "
                "candidate)"
            )
