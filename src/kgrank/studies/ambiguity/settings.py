"""The study's settings as the rule file reads them at parse time (free of torch)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kgrank.errors import KgrankInputError


def subset_pairs(
    names: Sequence[str] | None, datasets: Sequence[str], models: Sequence[str]
) -> list[tuple[str, str]]:
    """The (dataset, model) pairs of the subset protocol: every trained pair when
    ``names`` is null, otherwise each ``dataset/model`` named, which must be trained."""
    trained = [(dataset, model) for dataset in datasets for model in models]
    if names is None:
        return trained
    pairs = []
    for name in names:
        dataset, _, model = name.partition("/")
        if (dataset, model) not in trained:
            raise KgrankInputError(
                f"config key studies.ambiguity.subsets.pairs: {name!r} is not a trained pair; name "
                f"<dataset>/<model> of the config's datasets and models (e.g. {'/'.join(trained[0])}), "
                "or null for all"
            )
        pairs.append((dataset, model))
    return pairs


def size_arguments(sizes: Sequence[int | str]) -> str:
    """The candidate-set sizes as the command line takes them."""
    return " ".join(str(size) for size in sizes)


def bootstrap_arguments(settings: Mapping[str, Any]) -> str:
    """The bootstrap options of the drift and pairwise commands, from studies.ambiguity."""
    return f"--confidence {settings['confidence']} --bootstrap-resamples {settings['bootstrap_resamples']}"
