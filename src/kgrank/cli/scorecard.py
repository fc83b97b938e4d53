"""`kgrank scorecard`: every checkable claim of the five papers against this run's tables
(:mod:`kgrank.scorecard`)."""

from __future__ import annotations

import argparse
from typing import Any

from kgrank.errors import KgrankInputError


def _parameters(pairs: list[str]) -> dict[str, str]:
    parameters = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise KgrankInputError(f"--param {pair!r}: expected NAME=VALUE")
        parameters[name] = value
    return parameters


def _scorecard(args: argparse.Namespace) -> None:
    from kgrank.scorecard.card import run_scorecard, summary
    from kgrank.studies import study_names

    card = run_scorecard(
        args.results,
        args.tsv,
        args.markdown,
        args.latex,
        enabled=args.studies,
        params=_parameters(args.param),
        claims_files=args.claims,
        studies=study_names(),
    )
    print(summary(card).to_string())


def add_commands(commands: Any) -> None:
    """Add `scorecard` to the `kgrank` subcommands."""
    from kgrank.studies import study_names

    command = commands.add_parser(
        "scorecard",
        help="judge every published claim of the five papers against this run's tables",
        description="Reads the claims files (published value, location, how kgrank's value is obtained, "
        "tolerance) and the study tables under --results; writes the scorecard as TSV, Markdown (the counts "
        "per paper and verdict first) and LaTeX, and prints the counts.",
    )
    command.add_argument("--results", default="results", help="the run's results folder (default: results)")
    command.add_argument(
        "--studies",
        nargs="*",
        default=study_names(),
        choices=study_names(),
        help="the studies this run made; a claim of another study is 'not checkable: study not run' "
        "(default: all)",
    )
    command.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a value for a {NAME} placeholder of the claims' sources, e.g. ir_dataset=fb15k237",
    )
    command.add_argument("--claims", nargs="+", help="claims files instead of the package's claims/*.tsv")
    command.add_argument("--tsv", required=True, help="where to write the scorecard (TSV, every column)")
    command.add_argument("--markdown", required=True, help="where to write the report table (Markdown)")
    command.add_argument("--latex", required=True, help="where to write the report table (LaTeX)")
    command.set_defaults(handler=_scorecard)
