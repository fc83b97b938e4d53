"""The family-tree experiment's settings as the rule file reads them at parse time: kept
free of torch, PyKEEN, pandas and numpy, which every Snakemake call (dry runs, cluster
jobs) would otherwise load. The training caption is here, not in ``report``, because the
rule file builds it at parse time (it states the config's settings)."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from kgrank.errors import KgrankInputError

DENSITIES_KEY = "studies.openworld.family_tree.densities"


def density_percentage(fraction: float) -> int:
    """A training density as the data's folders and the output paths name it: 0.65 is
    ``density-65``. A fraction whose percentage is not a whole number has no folder."""
    percentage = round(100 * fraction)
    if not 0 < fraction <= 1 or abs(100 * fraction - percentage) > 1e-9:
        raise KgrankInputError(
            f"config key {DENSITIES_KEY}: {fraction!r} is not a fraction of whole per cent "
            "(the folders are density-65 ...); write a fraction such as 0.65"
        )
    return percentage


def density_percentages(densities: Sequence[float]) -> list[int]:
    """The folders' percentages of the configured fractions, in the config's order."""
    return [density_percentage(fraction) for fraction in densities]


def pipeline_argument(configurations: Mapping[str, Any], name: str) -> str:
    """One configuration's PyKEEN pipeline as the JSON of `--pipeline`."""
    return json.dumps(configurations[name])


def family_tree_caption(profile: str, settings: Mapping[str, Any]) -> str:
    """What was trained, stated under the figure and the table: graphs, densities and each
    configuration's model, dimension, learning rate, loss and epochs."""
    described = []
    for name, pipeline in settings["configurations"].items():
        model_kwargs = pipeline.get("model_kwargs") or {}
        described.append(
            f"{name} ({pipeline['model']}, dim {model_kwargs.get('embedding_dim', 'default')}, "
            f"lr {(pipeline.get('optimizer_kwargs') or {}).get('lr', 'default')}, "
            f"{pipeline.get('loss', 'default loss')}, {pipeline['training_loop']}, "
            f"{pipeline['training_kwargs']['num_epochs']} epochs)"
        )
    percentages = density_percentages(settings["densities"])
    return (
        f"Profile: {profile}. Graphs: {', '.join(settings['graphs'])}; training densities "
        f"{', '.join(str(density) for density in percentages)} %; checkpoints every "
        f"{settings['evaluate_every']} epochs; configurations: {'; '.join(described)}. Tail "
        "prediction on the test queries, realistic ranks, mean over each query's answers, then "
        "over queries."
    )


def check_family_tree_settings(settings: Mapping[str, Any]) -> None:
    """At parse time: an enabled family-tree experiment needs at least one configuration,
    and each density must name a folder (a fraction of whole per cent)."""
    if settings["enabled"] and not settings["configurations"]:
        raise KgrankInputError(
            "config key studies.openworld.family_tree.configurations: empty; name at least one "
            "(see config/config.yaml) or set studies.openworld.family_tree.enabled: false"
        )
    density_percentages(settings["densities"])
