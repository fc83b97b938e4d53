"""The family-tree experiment's settings as the rule file reads them at parse time: kept
free of torch and PyKEEN, which every Snakemake call (dry runs, cluster jobs) would
otherwise load."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgrank.errors import KgrankInputError


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
    return (
        f"Profile: {profile}. Graphs: {', '.join(settings['graphs'])}; training densities "
        f"{', '.join(str(density) for density in settings['densities'])} %; checkpoints every "
        f"{settings['evaluate_every']} epochs; configurations: {'; '.join(described)}. Tail "
        "prediction on the test queries, realistic ranks, mean over each query's answers, then "
        "over queries."
    )


def check_family_tree_settings(settings: Mapping[str, Any]) -> None:
    """At parse time: an enabled family-tree experiment needs at least one configuration."""
    if settings["enabled"] and not settings["configurations"]:
        raise KgrankInputError(
            "config key studies.openworld.family_tree.configurations: empty; name at least one "
            "(see config/config.yaml) or set studies.openworld.family_tree.enabled: false"
        )
