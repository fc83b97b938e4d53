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
PNG_DPI = 200


def set_style() -> None:
    sns.set_theme(context="paper", style="whitegrid", palette=PALETTE, font_scale=1.1)


def add_caption(figure: plt.Figure, caption: str, characters_per_line: int = 150) -> None:
    """A caption under the figure, wrapped so that it never widens the figure."""
    if caption:
        text = textwrap.fill(caption, width=characters_per_line)
        figure.text(0.5, -0.01, text, fontsize=8, ha="center", va="top")


def save_figure(figure: plt.Figure, pdf_path: str | Path, png_path: str | Path) -> None:
    """Write both formats atomically; PDF for papers, PNG (200 dpi) for the README and report,
    both cropped to what the figure draws (its caption included) plus savefig's padding."""
    # The layout and the crop are computed once for both files. savefig with
    # bbox_inches="tight" lays the figure out again for each file (a draw without
    # rendering, then the bounding box of every artist, then the draw itself): a third of
    # what saving a figure costs, paid twice.
    figure.set_dpi(PNG_DPI)  # text is measured as the PNG draws it
    figure.draw_without_rendering()
    crop = figure.get_tightbbox().padded(plt.rcParams["savefig.pad_inches"])
    figure.set_layout_engine(None)  # keep the positions the layout engine, if any, just gave
    # No creation date in the PDF, so that the same data give the same bytes.
    for path, options in ((pdf_path, {"metadata": {"CreationDate": None}}), (png_path, {"dpi": PNG_DPI})):
        with atomic_path(path) as temporary:
            figure.savefig(temporary, format=Path(path).suffix.lstrip("."), bbox_inches=crop, **options)
    plt.close(figure)
