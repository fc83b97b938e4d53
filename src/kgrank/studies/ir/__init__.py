"""Study `ir`: Zhou et al. 2022, link prediction evaluated as information retrieval."""

from __future__ import annotations

import argparse


def add_commands(commands: argparse._SubParsersAction) -> None:
    """The study's subcommands (`kgrank ir-*`)."""
