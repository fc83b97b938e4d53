"""Options that several commands share, defined once with their defaults from the core."""

from __future__ import annotations

import argparse

from kgrank.candidates import DEFAULT_FILTER_SPLITS, SPLITS
from kgrank.metrics import DEFAULT_HITS


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not positive; give at least 1")
    return value


def open_probability(text: str) -> float:
    """An argparse type: a level strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"{value} is not strictly between 0 and 1")
    return value


def add_figure_paths(command: argparse.ArgumentParser) -> None:
    """Every figure is written twice: PDF for papers, PNG for the README and the report."""
    command.add_argument("--pdf", required=True)
    command.add_argument("--png", required=True)


def add_hits(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--hits", type=positive_int, nargs="+", default=list(DEFAULT_HITS), help="k of Hits@k"
    )


def add_filter_splits(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--filter-splits",
        nargs="*",
        choices=SPLITS,
        default=list(DEFAULT_FILTER_SPLITS),
        help="splits whose known true triples leave the candidate lists (the filtered setting)",
    )


def add_quiet(command: argparse.ArgumentParser) -> None:
    command.add_argument("--quiet", action="store_true", help="no progress bars")
