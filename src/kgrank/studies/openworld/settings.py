"""The study's settings as the rule file reads them at parse time (its commands read theirs
through ``--settings``: kgrank.workflow.settings): kept free of torch, PyKEEN, pandas and
numpy, which every Snakemake call (dry runs, cluster jobs) would otherwise load. The
training caption is here, not in ``report``, because the rule file builds it at parse
time (it states the config's settings)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kgrank.errors import KgrankInputError
from kgrank.training.hyperparameters import validate_pipeline
from kgrank.workflow.scheduling import DatasetSize, training_seconds, triples_file_queries, triples_file_size

# The study's hook for systems from outside (kgrank.studies.external_parts): each part, None
# when an external system joins it, else why it does not.
EXTERNAL_PARTS: dict[str, str | None] = {"every part": "simulated models and the family tree only"}

DENSITIES_KEY = "studies.openworld.family_tree.densities"
# the files a family-tree job reads from each graph's density folder
FAMILY_TREE_FILES = ("train.tsv", "test_answers.tsv")


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


def check_family_tree_settings(settings: Mapping[str, Any], source: str = "the config") -> None:
    """At parse time: an enabled family-tree experiment needs at least one configuration,
    each density must name a folder (a fraction of whole per cent), and each configuration
    must validate like a hyperparameter file (names, keywords, every value), so that a
    model ``complx`` or a learning rate of -0.1 stops the plan and not the training job."""
    if settings["enabled"] and not settings["configurations"]:
        raise KgrankInputError(
            f"{source}: key studies.openworld.family_tree.configurations: empty; name at least one "
            "(see config/config.yaml) or set studies.openworld.family_tree.enabled: false"
        )
    density_percentages(settings["densities"])
    for name, pipeline in settings["configurations"].items():
        validate_pipeline(pipeline, source, f"studies.openworld.family_tree.configurations.{name}")


def check_family_tree_folders(settings: Mapping[str, Any], root: Path, source: str = "the config") -> None:
    """At parse time: every graph and density names a folder of ``root`` with the two files a
    family-tree job reads; Snakemake would otherwise stop with a missing-input listing."""
    if not settings["enabled"]:
        return
    for graph in settings["graphs"]:
        graph_dir = Path(root) / graph
        if not graph_dir.is_dir():
            present = sorted(path.name for path in Path(root).glob("*") if path.is_dir())
            raise KgrankInputError(
                f"{source}: key studies.openworld.family_tree.graphs: {graph!r} is no folder of {root} "
                f"(it has: {', '.join(present) or 'none'}); name one of those or fix family_tree.root"
            )
        for percentage in density_percentages(settings["densities"]):
            folder = graph_dir / f"density-{percentage}"
            missing = [name for name in FAMILY_TREE_FILES if not (folder / name).is_file()]
            if missing:
                present = sorted(path.name for path in graph_dir.glob("density-*"))
                raise KgrankInputError(
                    f"{source}: key {DENSITIES_KEY}: {percentage / 100:g} needs {folder}/{missing[0]}, "
                    f"which is missing ({graph} has: {', '.join(present) or 'none'}); "
                    "use one of those densities"
                )


def strength_count(start: float, stop: float, step: float) -> int:
    """How many strengths the grid start, start + step, ..., stop holds (< 1: none)."""
    return int(round((stop - start) / step)) + 1


# How close a grid strength must be to lie at a strength (rounding of the grid).
STRENGTH_TOLERANCE = 1e-9
# Grid strengths a local slope is fitted to, at the least.
SLOPE_POINTS = 3


def check_simulation_settings(settings: Mapping[str, Any], source: str = "the config") -> None:
    """At parse time, what the schema cannot say of studies.openworld (its settings with
    their defaults): fewer answers than entities, a strength grid that runs upwards, some
    pair of strengths to compare, the saturation's strengths on the grid with enough grid
    points around them, and its comparison at a simulated number of queries."""
    key = f"{source}: key studies.openworld"
    simulation, inconsistency, saturation = (
        settings[part] for part in ("simulation", "inconsistency", "saturation")
    )
    entities, answers = simulation["entities"], simulation["answers"]
    if answers >= entities:
        raise KgrankInputError(
            f"{key}.simulation.answers: {answers} answers per query among {entities} entities; a "
            "query needs fewer answers than entities (some candidate must be wrong); lower answers "
            "or raise studies.openworld.simulation.entities"
        )
    strength = simulation["strength"]
    start, stop, step = strength["start"], strength["stop"], strength["step"]
    if strength_count(start, stop, step) < 1:
        raise KgrankInputError(
            f"{key}.simulation.strength: start {start} > stop {stop}, so the strength grid is empty; "
            "give start <= stop"
        )
    weaker, gaps = inconsistency["weaker_strengths"], inconsistency["gaps"]
    if not any(s2 + gap <= 1 + 1e-12 for s2 in weaker for gap in gaps):
        raise KgrankInputError(
            f"{key}.inconsistency: every weaker strength {weaker} plus every gap {gaps} exceeds 1, so "
            "there is no pair of models to compare; add a weaker strength or a gap whose sum is <= 1"
        )
    queries, counts = saturation["comparison_queries"], inconsistency["query_counts"]
    if queries not in counts:
        raise KgrankInputError(
            f"{key}.saturation.comparison_queries: {queries} is not among "
            f"studies.openworld.inconsistency.query_counts {counts}, so no inversion is simulated "
            "there; name one of them or add it there"
        )
    low, high, half_width = saturation["low"], saturation["high"], saturation["half_width"]
    if low >= high:
        raise KgrankInputError(
            f"{key}.saturation: low {low} >= high {high}; the weaker strength comes first, give low < high"
        )
    grid = [start + step * index for index in range(strength_count(start, stop, step))]
    for name, at in (("low", low), ("high", high)):
        near = sum(abs(value - at) <= half_width + STRENGTH_TOLERANCE for value in grid)
        if near < SLOPE_POINTS:
            raise KgrankInputError(
                f"{key}.saturation.{name}: {at} has {near} grid strength(s) within half_width "
                f"{half_width} (studies.openworld.simulation.strength: {start} to {stop} by {step}); "
                f"a slope needs {SLOPE_POINTS}: move it into the grid or widen half_width"
            )


def family_tree_seconds(
    family_tree: Mapping[str, Any], root: Path, density: str, configuration: str
) -> float:
    """Estimated seconds of one family-tree training (the workflow's scheduling hook): the
    configuration's pipeline on the density's graph, evaluated every ``evaluate_every``
    epochs on the full and each graph's sparse answers (``family_tree``: the study's
    settings; ``root``: their folder, resolved)."""
    graphs = family_tree["graphs"]
    folder = Path(root) / graphs[0] / f"density-{density}"
    train, entities = triples_file_size(str(folder / "train.tsv"))
    answers, _ = triples_file_size(str(folder / "test_answers.tsv"), header=True)
    pipeline = family_tree["configurations"][configuration]
    epochs = int(pipeline["training_kwargs"]["num_epochs"])
    size = DatasetSize(entities, train, 0, 0, triples_file_queries(str(folder / "train.tsv")))
    return training_seconds(
        pipeline, size, epochs, family_tree["evaluate_every"], answers * (1 + len(graphs))
    )
