"""Shared figure conventions: a colour-blind-safe palette, one style, PDF and PNG together."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; the workflow runs headless
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from kgrank.data.io import atomic_path  # noqa: E402

PALETTE = "colorblind"
# The models the workflow trains, in the order that fixes their colours: a model has the
# same colour in every figure; any other system takes the next colours in the order given.
MODEL_ORDER = ("transe", "rotate", "complex", "tucker", "distmult", "rescal", "conve")
# Beyond the palette's ten colours a system also takes another line style (a colour-blind
# palette has no eleventh colour that stays apart from the ten).
LINE_STYLES = ("-", "--", ":", "-.")


def system_styles(systems: list[str]) -> dict[str, tuple[tuple[float, float, float], object]]:
    """A (colour, line style) per system, distinct for every system and the same for a
    model in every figure: the trained models first in :data:`MODEL_ORDER`, then the rest
    in the order given; the eleventh system on repeats a colour with another line style."""
    palette = sns.color_palette(PALETTE, 10)
    ordered = [*MODEL_ORDER, *(name for name in dict.fromkeys(systems) if name not in MODEL_ORDER)]
    return {
        name: (palette[index % 10], LINE_STYLES[(index // 10) % len(LINE_STYLES)])
        for index, name in enumerate(ordered)
        if name in systems
    }


def log_scale(axis: plt.Axes, which: str = "x") -> None:
    """A log scale labelled in plain numbers (3, 40, 500; 1e+04 beyond): matplotlib's
    default writes 3×10⁰ at every minor tick of a view narrower than a decade, and those
    labels run into each other; which minor ticks are labelled stays matplotlib's choice."""
    from matplotlib.ticker import LogFormatter

    getattr(axis, f"set_{which}scale")("log")
    scaled = axis.xaxis if which == "x" else axis.yaxis
    scaled.set_major_formatter(LogFormatter())
    scaled.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(1, 0.4)))


def set_style() -> None:
    sns.set_theme(context="paper", style="whitegrid", palette=PALETTE, font_scale=1.1)


def add_caption(figure: plt.Figure, caption: str, characters_per_line: int = 150) -> None:
    """A caption under the figure, wrapped so that it never widens the figure."""
    if caption:
        text = textwrap.fill(caption, width=characters_per_line)
        figure.text(0.5, -0.01, text, fontsize=8, ha="center", va="top")


def save_figure(figure: plt.Figure, pdf_path: str | Path, png_path: str | Path) -> None:
    """Write both formats atomically; PDF for papers, PNG (200 dpi) for the README and report."""
    # No creation date in the PDF, so that the same data give the same bytes.
    for path, options in ((pdf_path, {"metadata": {"CreationDate": None}}), (png_path, {"dpi": 200})):
        with atomic_path(path) as temporary:
            figure.savefig(temporary, format=Path(path).suffix.lstrip("."), bbox_inches="tight", **options)
    plt.close(figure)
