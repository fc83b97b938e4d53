"""Shared figure conventions: a colour-blind-safe palette, one style, PDF and PNG together."""

from __future__ import annotations

import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # files only; the workflow runs headless
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from kgrank.io import atomic_path  # noqa: E402

PALETTE = "colorblind"


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
