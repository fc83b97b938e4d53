"""Loaded by every Python process of the figure test's Snakemake run (the test puts this
folder first on PYTHONPATH): wraps ``kgrank.plotting.save_figure`` so that each figure,
drawn once it is saved, leaves what a test can check of it in
``$KGRANK_FIGURE_AUDIT/<png name>.json``: every visible text with its box in pixels, and
each legend's labels. Processes that never import kgrank.plotting pay nothing."""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import json
import os
import sys
from pathlib import Path

TARGET = "kgrank.plotting"


def _drawn_tick_labels(axis) -> list:
    """The labels of the ticks drawn: those inside the axis' view (a locator also places
    ticks beyond it, which matplotlib leaves undrawn)."""
    low, high = sorted(axis.get_view_interval())
    margin = (high - low) * 1e-9
    return [
        label
        for tick in [*axis.get_major_ticks(), *axis.get_minor_ticks()]
        if low - margin <= tick.get_loc() <= high + margin
        for label in (tick.label1, tick.label2)
        if label.get_visible()
    ]


def _texts(figure) -> list[dict]:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    # the figure was saved and closed, which leaves it a bare canvas: draw it on a new one
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    roles = []
    for axes in figure.axes:
        roles += [("title", text) for text in (axes.title, axes._left_title, axes._right_title)]
        roles += [("axis label", axes.xaxis.label), ("axis label", axes.yaxis.label)]
        roles += [("tick label", text) for text in _drawn_tick_labels(axes.xaxis)]
        roles += [("tick label", text) for text in _drawn_tick_labels(axes.yaxis)]
        roles += [("annotation", text) for text in axes.texts]
    for legend in [axes.get_legend() for axes in figure.axes] + list(figure.legends):
        if legend is not None:
            roles += [("legend", text) for text in [legend.get_title(), *legend.get_texts()]]
    roles += [("figure text", text) for text in figure.texts]
    roles += [
        ("figure title", text)
        for text in (figure._suptitle, figure._supxlabel, figure._supylabel)
        if text is not None
    ]
    found, seen = [], set()
    for role, text in roles:
        # a suptitle is also among figure.texts: each text once
        if id(text) in seen or not text.get_visible() or not text.get_text().strip():
            continue
        seen.add(id(text))
        box = text.get_window_extent(renderer)
        # a rotated text's box is the axis-aligned hull of its rectangle: keep the rectangle
        # (its unrotated size and the angle; the hull's centre is the rectangle's)
        angle = text.get_rotation()
        text.set_rotation(0)
        flat = text.get_window_extent(renderer)
        text.set_rotation(angle)
        found.append(
            {
                "role": role,
                "text": text.get_text(),
                "box": [box.x0, box.y0, box.x1, box.y1],
                "size": [flat.width, flat.height],
                "angle": angle,
            }
        )
    return found


def _legends(figure) -> list[list[str]]:
    legends = [axes.get_legend() for axes in figure.axes] + list(figure.legends)
    return [[text.get_text() for text in legend.get_texts()] for legend in legends if legend is not None]


def _wrap(module) -> None:
    save = module.save_figure

    def save_figure(figure, pdf_path, png_path):
        # saved first: drawing before saving may move what a layout engine placed, and the
        # files must be those of a run without the audit
        save(figure, pdf_path, png_path)
        record = {"texts": _texts(figure), "legends": _legends(figure)}
        folder = Path(os.environ["KGRANK_FIGURE_AUDIT"])
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{Path(png_path).name}.json").write_text(json.dumps(record), encoding="utf-8")

    module.save_figure = save_figure


class _AuditFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module):
            execute(module)
            _wrap(module)

        spec.loader.exec_module = exec_module
        return spec


if os.environ.get("KGRANK_FIGURE_AUDIT"):
    sys.meta_path.insert(0, _AuditFinder())
