"""Options that several commands share, defined once with their defaults from the core."""

from __future__ import annotations

import argparse

from kgrank.cli.config_options import add_config_options


def int_at_least(text: str, minimum: int, hint: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{value} {hint}; give at least {minimum}")
    return value


def positive_int(text: str) -> int:
    """An argparse type: a whole number of at least 1."""
    return int_at_least(text, 1, "is not positive")


def json_object(text: str, option: str, what: str) -> dict:
    """``text``, the value of ``option``, parsed as a JSON object (``what`` says what it
    holds); anything else is a one-line KgrankInputError."""
    import json

    from kgrank.errors import KgrankInputError

    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise KgrankInputError(
            f"{option}: not JSON ({error.msg} at character {error.pos}); pass {what} as a JSON object"
        ) from None
    if not isinstance(value, dict):
        raise KgrankInputError(f"{option}: a JSON {type(value).__name__}; pass {what} as a JSON object")
    return value


def add_figure_paths(command: argparse.ArgumentParser) -> None:
    """Every figure is written twice: PDF for papers, PNG for the README and the report."""
    command.add_argument("--pdf", required=True, help="where to write the figure as PDF (vector, for papers)")
    command.add_argument(
        "--png", required=True, help="where to write the figure as PNG (200 dpi, README and report)"
    )


def add_table_paths(command: argparse.ArgumentParser, latex: bool = True, prefix: str = "") -> None:
    """A report table is written as Markdown and, for papers, as LaTeX (``--<prefix>markdown``)."""
    command.add_argument(
        f"--{prefix}markdown", required=True, help="where to write the table as Markdown (report, README)"
    )
    if latex:
        command.add_argument(
            f"--{prefix}latex",
            required=True,
            help="where to write the table as LaTeX (with caption and label)",
        )


def add_caption(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--caption",
        default="",
        help="text stated under the figure or table: what was trained, on which budget",
    )


def add_threads(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--threads", type=positive_int, default=1, help="CPU threads torch may use (the rule's `threads`)"
    )


def add_header(command: argparse.ArgumentParser) -> None:
    """``--header`` for a --dataset that is a folder of raw split files."""
    command.add_argument(
        "--header",
        choices=["auto", "yes", "no"],
        default="auto",
        help="where --dataset is a folder of raw split files, their first line: auto (the default) skips "
        "a header (header words, or fields that occur on no other line), yes always skips it, no reads "
        "it as a triple",
    )


def add_quiet(command: argparse.ArgumentParser) -> None:
    command.add_argument("--quiet", action="store_true", help="no progress bars")


def add_dataset_dir(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--dataset-dir",
        required=True,
        help="a prepared dataset: the folder with train.tsv, valid.tsv and test.tsv (results/data/<dataset>)",
    )


def add_model_dir(command: argparse.ArgumentParser) -> None:
    """``--model-dir``, ``--trust-pickle`` and the ``--device`` the model scores on: every
    command that scores a model takes them (through ``systems.load_scoring_model``), so
    that the config's device and its PyKEEN folders reach every scoring rule."""
    command.add_argument(
        "--model-dir",
        required=True,
        help="a trained model's folder: kgrank's (model.pt, config.json) or a PyKEEN pipeline folder "
        "(trained_model.pkl, training_triples/)",
    )
    command.add_argument(
        "--trust-pickle",
        action="store_true",
        help="with a PyKEEN folder: load its trained_model.pkl, which runs code from the file; only for a "
        "folder you trust (written by your own training)",
    )
    add_config_options(command, "device")
