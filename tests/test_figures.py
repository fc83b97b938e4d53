"""Every figure of the tiny config's run, checked for what a reviewer would send back:
text that runs into other text, a legend that names two series alike, a dataset named
that the run did not use (a hard-coded title). The run's figures leave their texts and
legends through tests/figure_audit (conftest.local_run); the checks are plain geometry."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest
from conftest import figure_audit_dir

from kgrank.labels import DATASET_LABELS

pytestmark = pytest.mark.slow

# the tiny config's datasets (.test/config.yaml)
RUN_DATASETS = {"nations"}
# figures that show published values of every dataset, whatever the run trained
PUBLISHED_FIGURES = {"figure1_published.png", "published_audit.png", "published_comparison.png"}
CAPTION_ROLES = {"figure text", "annotation"}
# overlaps smaller than this (pixels, either way) are antialiasing, not collisions
TOLERANCE = 1.0


def _corners(text: dict) -> np.ndarray:
    """The four corners of a text's rectangle, rotated as drawn."""
    x0, y0, x1, y1 = text["box"]
    width, height = text["size"]
    angle = math.radians(text["angle"])
    rotation = np.array([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]])
    half = np.array([[-1, -1], [1, -1], [1, 1], [-1, 1]]) * [width / 2, height / 2]
    return half @ rotation.T + [(x0 + x1) / 2, (y0 + y1) / 2]


def overlap(first: dict, second: dict, tolerance: float = TOLERANCE) -> bool:
    """Whether two texts' rectangles overlap by more than ``tolerance`` along every axis
    that could separate them (the separating axis theorem for two convex polygons)."""
    hull_a, hull_b = first["box"], second["box"]
    # apart hulls (most pairs) need no rotation
    if min(hull_a[2], hull_b[2]) - max(hull_a[0], hull_b[0]) <= tolerance:
        return False
    if min(hull_a[3], hull_b[3]) - max(hull_a[1], hull_b[1]) <= tolerance:
        return False
    if min(*first["size"], *second["size"]) <= 0:
        return False  # a text of no width or height covers nothing
    a, b = _corners(first), _corners(second)
    for polygon in (a, b):
        for index in range(2):
            edge = polygon[index + 1] - polygon[index]
            normal = np.array([-edge[1], edge[0]]) / np.hypot(*edge)
            pa, pb = a @ normal, b @ normal
            if min(pa.max(), pb.max()) - max(pa.min(), pb.min()) <= tolerance:
                return False
    return True


def _problems(record: dict, name: str) -> list[str]:
    problems = []
    for labels in record["legends"]:
        repeated = sorted({label for label in labels if labels.count(label) > 1})
        if repeated:
            problems.append(f"legend names {repeated} more than once")
    for first, second in itertools.combinations(record["texts"], 2):
        if overlap(first, second):
            problems.append(
                f"{first['role']} {first['text'][:40]!r} runs into {second['role']} {second['text'][:40]!r}"
            )
    if name not in PUBLISHED_FIGURES:
        others = {label for key, label in DATASET_LABELS.items() if key not in RUN_DATASETS}
        # captions may describe the published setting (every dataset); titles, labels and
        # legends name what the figure shows
        for text in (text for text in record["texts"] if text["role"] not in CAPTION_ROLES):
            named = sorted(label for label in others if label in text["text"])
            if named:
                problems.append(f"{text['role']} {text['text'][:60]!r} names {named}, not in the run")
    return problems


def _box(x0: float, y0: float, x1: float, y1: float, angle: float = 0.0, size=None) -> dict:
    return {
        "role": "t",
        "text": "t",
        "box": [x0, y0, x1, y1],
        "size": size or [x1 - x0, y1 - y0],
        "angle": angle,
    }


def test_overlap_is_geometry():
    assert overlap(_box(0, 0, 10, 10), _box(5, 5, 15, 15))
    assert not overlap(_box(0, 0, 10, 10), _box(10.5, 0, 20, 10))
    # two 10 x 2 labels rotated by 45 degrees, 4.2 apart across their length: their hulls
    # (8.5 wide) overlap, the labels do not; moved along their length they do
    hull = (10 + 2) / math.sqrt(2)
    first = _box(0, 0, hull, hull, angle=45, size=[10, 2])
    second = _box(3, -3, 3 + hull, -3 + hull, angle=45, size=[10, 2])
    assert overlap(_box(0, 0, hull, hull), _box(3, -3, 3 + hull, -3 + hull))
    assert not overlap(first, second)
    assert overlap(first, _box(1, 1, 1 + hull, 1 + hull, angle=45, size=[10, 2]))


def test_the_checks_find_each_kind_of_problem():
    record = {
        "texts": [
            {**_box(0, 0, 50, 10), "text": "3×10⁰"},
            {**_box(40, 0, 90, 10), "text": "4×10⁰"},
            {**_box(0, 100, 200, 120), "role": "title", "text": "IR systems on FB15k-237"},
            {**_box(0, 200, 200, 220), "role": "figure text", "text": "published: FB15k-237"},
        ],
        "legends": [["TransE", "TransE", "ComplEx"]],
    }
    found = _problems(record, "ir_systems.png")
    assert len(found) == 3, found
    assert "more than once" in found[0] and "runs into" in found[1] and "FB15k-237" in found[2]
    assert len(_problems(record, "figure1_published.png")) == 2


def test_every_figure_of_the_run_is_fit_to_print(local_run):
    workdir = local_run[0]
    audits = {path.name.removesuffix(".json"): path for path in figure_audit_dir(workdir).glob("*.json")}
    made = {path.name for path in (workdir / "results" / "figures").glob("*.png")}
    # every figure the run made was audited, none twice
    assert made and set(audits) == made, made ^ set(audits)
    problems = {
        name: found
        for name, path in sorted(audits.items())
        if (found := _problems(json.loads(Path(path).read_text(encoding="utf-8")), name))
    }
    assert problems == {}, json.dumps(problems, indent=1, ensure_ascii=False)[:4000]
