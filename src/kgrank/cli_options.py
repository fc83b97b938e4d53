"""Options that several commands share, defined once with their defaults from the core."""

from __future__ import annotations

import argparse

from kgrank.candidates import DEFAULT_FILTER_SPLITS, SPLITS
from kgrank.metrics import DEFAULT_HITS


def add_figure_paths(command: argparse.ArgumentParser) -> None:
    """Every figure is written twice: PDF for papers, PNG for the README and the report."""
    command.add_argument("--pdf", required=True)
    command.add_argument("--png", required=True)


def add_hits(command: argparse.ArgumentParser) -> None:
    command.add_argument("--hits", type=int, nargs="+", default=list(DEFAULT_HITS), help="k of Hits@k")


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
