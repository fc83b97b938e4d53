"""Every `kgrank` subcommand: its help, and bad input ending with one line and exit code 2.

The subcommands come from the parser itself (the stages' and every study's), so a new
command is covered by the help and missing-option tests without touching this file, and
fails the coverage test until it has a bad-input case: here for the stages and the user
commands, in tests/studies/test_<study>_cli.py for a study's (the check and the helpers they
share: tests/cli_cases.py); none trains a model or uses the network.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from cli_cases import (
    BAD_HYPERPARAMETER_VALUES,
    DAMAGED_RANK_TABLES,
    TRANSE,
    TRIPLES,
    Case,
    _bad_dataset,
    _bad_key_yaml,
    _damaged_rank_table,
    _dataset_without,
    _error_line,
    _hyperparameters_with,
    _long_ranks,
    _prepare_archive,
    _prepare_folder,
    _published,
    _run,
    _train,
    _write,
    case_params,
    check_bad_input,
)
from conftest import REPO

from kgrank.cli.main import build_parser, main


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (action,) = (action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return dict(action.choices)


COMMANDS = sorted(_subcommands(build_parser()))


# --- the parser --------------------------------------------------------------------


def test_top_level_help_lists_every_command(capsys):
    code, out, _ = _run(["--help"], capsys)
    assert code == 0
    for command in COMMANDS:
        assert command in out


def test_no_command_is_a_usage_error(capsys):
    code, _, err = _run([], capsys)
    assert code == 2
    assert err.strip().splitlines()[-1].startswith("kgrank: error: ")


def test_unknown_command_is_a_usage_error(capsys):
    code, _, err = _run(["no-such-command"], capsys)
    assert code == 2
    assert "invalid choice: 'no-such-command'" in err.strip().splitlines()[-1]


@pytest.mark.parametrize("command", COMMANDS)
def test_help(command, capsys):
    code, out, err = _run([command, "--help"], capsys)
    assert code == 0
    assert out.startswith(f"usage: kgrank {command}")
    assert "-h, --help" in out
    assert err == ""


@pytest.mark.parametrize("command", COMMANDS)
def test_every_option_says_what_it_is(command):
    options = [
        action.option_strings[0] if action.option_strings else action.dest
        for action in _subcommands(build_parser())[command]._actions
        if not isinstance(action, argparse._HelpAction) and not (action.help or "").strip()
    ]
    assert not options, f"kgrank {command}: no help text for {options}"


@pytest.mark.parametrize("command", COMMANDS)
def test_missing_required_options(command, capsys):
    required = [action for action in _subcommands(build_parser())[command]._actions if action.required]
    if not required:
        pytest.skip(f"{command} has no required option")
    code, out, err = _run([command], capsys)
    assert code == 2
    assert out == ""
    line = _error_line(command, err)
    assert "the following arguments are required: " in line
    # the first missing one is named
    first = required[0]
    assert (first.option_strings[0] if first.option_strings else first.dest) in line


def test_an_unknown_option_is_refused_by_its_subcommand(capsys):
    """argparse leaves an argument no subcommand knows to the top parser, whose --help does
    not list the subcommand's options; the subcommand's parser refuses it instead."""
    code, out, err = _run(["evaluate", "--dataset", "x", "--ranks", "y.csv", "--no-such-option", "1"], capsys)
    assert (code, out) == (2, "")
    line = _error_line("evaluate", err)
    assert "unrecognized arguments: --no-such-option 1" in line
    assert "(kgrank evaluate --help lists the options)" in line


CASES = [
    # --- stages
    Case(
        "prepare-dataset",
        "unknown-dataset",
        lambda tmp, _: ["prepare-dataset", "--name", "no_such_dataset", "--out-dir", str(tmp / "o")],
        ("'no_such_dataset'",),
    ),
    Case(
        "prepare-dataset",
        "missing-archive",
        lambda tmp, _: [
            "prepare-dataset",
            "--name",
            "x",
            "--archive",
            str(tmp / "missing.tar.gz"),
            "--out-dir",
            str(tmp / "o"),
        ],
        ("missing.tar.gz", "not found"),
    ),
    Case(
        "prepare-dataset",
        "archive-and-folder",
        lambda tmp, _: _prepare_folder(tmp, "--archive", str(tmp / "g.tar.gz")),
        ("argument --archive: not allowed with argument --folder",),
    ),
    Case(
        "prepare-dataset",
        "missing-folder",
        lambda tmp, _: [
            *("prepare-dataset", "--name", "mykg", "--folder", str(tmp / "nowhere")),
            *("--out-dir", str(tmp / "o")),
        ],
        ("folder ", "nowhere not found"),
    ),
    Case(
        "prepare-dataset",
        "folder-without-a-split",
        lambda tmp, _: _prepare_folder(tmp, names=("train.tsv", "test.tsv")),
        ("kg: no valid.tsv or valid.txt in the folder",),
    ),
    Case(
        "prepare-dataset",
        "split-under-both-names",
        lambda tmp, _: _prepare_folder(tmp, names=("train.tsv", "valid.tsv", "test.tsv", "test.txt")),
        ("both test.tsv and test.txt", "keep one of them"),
    ),
    Case(
        "prepare-dataset",
        "folder-sha256-mismatch",
        lambda tmp, _: _prepare_folder(tmp, "--sha256", "valid=" + "0" * 64),
        ("kg/valid.tsv has sha256 ", "expects " + "0" * 64, "replace the file"),
    ),
    Case(
        "prepare-dataset",
        "folder-sha256-not-a-pair",
        lambda tmp, _: _prepare_folder(tmp, "--sha256", "0" * 64),
        ("a folder takes SPLIT=HEX pairs", "--sha256 train=HEX valid=HEX test=HEX"),
    ),
    Case(
        "prepare-dataset",
        "archive-two-sha256",
        lambda tmp, _: [
            *("prepare-dataset", "--name", "x", "--archive", str(tmp / "g.tar.gz")),
            *("--sha256", "0" * 64, "1" * 64, "--out-dir", str(tmp / "o")),
        ],
        ("an archive takes one sha256",),
    ),
    Case(
        "prepare-dataset",
        "header-without-local-data",
        lambda tmp, _: [
            "prepare-dataset",
            "--name",
            "nations",
            "--header",
            "no",
            "--out-dir",
            str(tmp / "o"),
        ],
        ("--header needs --archive or --folder",),
    ),
    Case(
        "prepare-dataset",
        "only-a-header-with-header-yes",
        lambda tmp, _: _prepare_folder(tmp, "--header", "yes", content="a\tr\tb\n"),
        ("kg/train.tsv: no triples found; the file is empty but for its header line",),
    ),
    Case(
        "prepare-dataset",
        "archive-with-two-train-members",
        lambda tmp, _: _prepare_archive(
            tmp,
            [
                ("a/train.txt", TRIPLES),
                ("b/train.txt", TRIPLES),
                ("valid.txt", TRIPLES),
                ("test.txt", TRIPLES),
            ],
        ),
        ("g.tar.gz: holds both a/train.txt and b/train.txt", "keep one of them"),
    ),
    Case(
        "prepare-dataset",
        "archive-member-over-the-limit",
        lambda tmp, _: _prepare_archive(
            tmp, [("valid.txt", TRIPLES), ("train.txt", TRIPLES)], sizes={"train.txt": 2**31}
        ),
        ("g.tar.gz: member train.txt declares 2,147,483,648 bytes", "268,435,456", "source: folder"),
    ),
    Case(
        "import-hyperparameters",
        "dataset-outside-out-dir",
        lambda tmp, _: [
            "import-hyperparameters",
            _published(tmp, dataset="../../x"),
            "--out-dir",
            str(tmp / "o" / "h"),
        ],
        ("published.json: key dataset: '../../x': a name may hold only letters", "fix the field"),
    ),
    Case(
        "import-hyperparameters",
        "model-an-absolute-path",
        lambda tmp, _: [
            "import-hyperparameters",
            _published(tmp, model=str(tmp / "x")),
            "--out-dir",
            str(tmp / "o"),
        ],
        ("published.json: key model: '/", "a name may hold only letters"),
    ),
    Case(
        "import-hyperparameters",
        "missing-file",
        lambda tmp, _: ["import-hyperparameters", str(tmp / "missing.json"), "--out-dir", str(tmp / "o")],
        ("missing.json",),
    ),
    Case(
        "import-hyperparameters",
        "malformed-json",
        lambda tmp, _: [
            "import-hyperparameters",
            _write(tmp / "bad.json", "{not json\n"),
            "--out-dir",
            str(tmp / "o"),
        ],
        ("bad.json",),
    ),
    Case(
        "validate-hyperparameters",
        "bad-key",
        lambda tmp, _: ["validate-hyperparameters", _bad_key_yaml(tmp)],
        ("transe.yaml", "bogus_key"),
    ),
    Case(
        "validate-hyperparameters",
        "missing-file",
        lambda tmp, _: ["validate-hyperparameters", str(tmp / "missing.yaml")],
        ("missing.yaml", "not found"),
    ),
    *(
        Case(
            "validate-hyperparameters",
            problem,
            lambda tmp, _, problem=problem: ["validate-hyperparameters", _hyperparameters_with(tmp, problem)],
            (
                f"key pipeline.{section}.{keyword}: {value!r}",
                f"{keyword} must be ",
                "write such a value",
            ),
        )
        for problem, (_, section, keyword, value) in BAD_HYPERPARAMETER_VALUES.items()
    ),
    Case(
        "train",
        "no-epochs",
        lambda tmp, _: _train(tmp, "--max-epochs", "0"),
        ("--max-epochs: 0 is less than the minimum of 1", "--max-epochs must be a whole number of epochs"),
    ),
    Case(
        "train",
        "negative-learning-rate",
        lambda tmp, _: _train(tmp, "--learning-rate", "-0.1"),
        ("--learning-rate: -0.1 is less than or equal to the minimum of 0", "a learning rate > 0"),
    ),
    Case(
        "train",
        "zero-learning-rate",
        lambda tmp, _: _train(tmp, "--learning-rate", "0"),
        ("--learning-rate: 0.0 is less than or equal to the minimum of 0",),
    ),
    Case(
        "train",
        "zero-sub-batch-size",
        lambda tmp, _: _train(tmp, "--sub-batch-size", "0"),
        ("argument --sub-batch-size: 0 is less than the minimum of 1", "sub_batch_size"),
    ),
    Case(
        "train",
        "bad-value-in-the-file",
        lambda tmp, _: [
            *("train", "--dataset-dir", str(tmp / "nodata"), "--hyperparameters"),
            *(_hyperparameters_with(tmp, "zero-embedding-dim"), "--out-dir", str(tmp / "o"), "--seed", "1"),
        ],
        ("key pipeline.model_kwargs.embedding_dim: 0 is less than the minimum of 1",),
    ),
    Case(
        "train",
        "malformed-tsv",
        lambda tmp, nations: [
            "train",
            "--dataset-dir",
            _bad_dataset(tmp, nations),
            "--hyperparameters",
            TRANSE,
            "--out-dir",
            str(tmp / "o"),
            "--seed",
            "1",
        ],
        ("train.tsv:", "expected 3 non-empty tab-separated fields"),
        needs_nations=True,
    ),
    Case(
        "train",
        "empty-validation-split",
        lambda tmp, nations: [
            *("train", "--dataset-dir", _dataset_without(tmp, nations, "valid"), "--hyperparameters", TRANSE),
            *("--out-dir", str(tmp / "o"), "--seed", "1"),
        ],
        ("no-valid/valid.tsv: no triples found",),
        needs_nations=True,
    ),
    Case(
        "train",
        "missing-dataset-dir",
        lambda tmp, _: [
            "train",
            "--dataset-dir",
            str(tmp / "nodata"),
            "--hyperparameters",
            TRANSE,
            "--out-dir",
            str(tmp / "o"),
            "--seed",
            "1",
        ],
        ("nodata",),
    ),
    Case(
        "ranks",
        "unknown-filter-split",
        lambda tmp, _: [
            "ranks",
            "--dataset-dir",
            str(tmp),
            "--model-dir",
            str(tmp),
            "--out",
            str(tmp / "r.parquet"),
            "--seed",
            "1",
            "--filter-splits",
            "train",
            "tset",
        ],
        ("--filter-splits", "invalid choice: 'tset'"),
    ),
    Case(
        "ranks",
        "unknown-tie-rule",
        lambda tmp, _: [
            "ranks",
            "--dataset-dir",
            str(tmp),
            "--model-dir",
            str(tmp),
            "--out",
            str(tmp / "r.parquet"),
            "--tie-rule",
            "float32",
        ],
        ("--tie-rule", "invalid choice: 'float32'"),
    ),
    Case(
        "ranks",
        "missing-model-dir",
        lambda tmp, nations: [
            "ranks",
            "--dataset-dir",
            str(nations),
            "--model-dir",
            str(tmp / "nomodel"),
            "--out",
            str(tmp / "r.parquet"),
            "--seed",
            "1",
        ],
        ("nomodel",),
        needs_nations=True,
    ),
    Case(
        "metrics",
        "groups-out-without-dataset-dir",
        lambda tmp, _: [
            "metrics",
            "--ranks",
            str(tmp / "r.parquet"),
            "--model-dir",
            str(tmp),
            "--dataset",
            "nations",
            "--model",
            "transe",
            "--out",
            str(tmp / "m.tsv"),
            "--groups-out",
            str(tmp / "g.tsv"),
            "--seed",
            "1",
        ],
        ("--groups-out needs --dataset-dir",),
    ),
    Case(
        "metrics",
        "missing-ranks",
        lambda tmp, _: [
            "metrics",
            "--ranks",
            str(tmp / "missing.parquet"),
            "--model-dir",
            str(tmp),
            "--dataset",
            "nations",
            "--model",
            "transe",
            "--out",
            str(tmp / "m.tsv"),
            "--seed",
            "1",
        ],
        ("missing.parquet",),
    ),
    *(
        Case(
            "metrics",
            problem,
            lambda tmp, _, problem=problem: [
                "metrics",
                *("--ranks", _damaged_rank_table(tmp, problem), "--model-dir", str(tmp)),
                *("--dataset", "nations", "--model", "transe", "--out", str(tmp / "m.tsv"), "--seed", "1"),
            ],
            names,
        )
        for problem, names in DAMAGED_RANK_TABLES.items()
    ),
    # --- evaluate (a system from outside)
    Case(
        "evaluate",
        "seed-above-32-bits",
        lambda tmp, nations: [
            "evaluate",
            "--dataset",
            str(nations),
            "--ranks",
            "r.csv",
            "--seed",
            str(2**70),
        ],
        (
            "argument --seed",
            "greater than the maximum of 4294967295",
            "the config's seed",
            "--help lists the options",
        ),
    ),
    Case(
        "evaluate",
        "unknown-device",
        lambda tmp, nations: ["evaluate", "--dataset", str(nations), "--ranks", "r.csv", "--device", "tpu"],
        (
            "argument --device",
            "'tpu' is not allowed",
            "auto (a GPU if there is one), cpu, cuda, cuda:N or mps",
        ),
    ),
    Case(
        "evaluate",
        "out-under-a-file",
        lambda tmp, nations: [
            *("evaluate", "--dataset", str(nations), "--ranks", _write(tmp / "r.csv", _long_ranks(nations))),
            *("--out", f"{_write(tmp / 'plain', 'x')}/m.tsv"),
        ],
        ("plain/m.tsv", "is a file, not a folder"),
        needs_nations=True,
    ),
    Case(
        "evaluate",
        "missing-rank-table",
        lambda tmp, nations: [
            *("evaluate", "--dataset", str(nations), "--ranks", str(tmp / "missing.csv")),
            *("--out", str(tmp / "m.tsv"), "--markdown", str(tmp / "m.md")),
        ],
        ("missing.csv", "no such file"),
        needs_nations=True,
    ),
    Case(
        "evaluate",
        "rank-table-without-header",
        lambda tmp, nations: [
            "evaluate",
            *("--dataset", str(nations), "--ranks", _write(tmp / "r.csv", "brazil,embassy,china,tail,2\n")),
            *("--out", str(tmp / "m.tsv")),
        ],
        ("r.csv:1: the first line looks like data", "add a header line"),
        needs_nations=True,
    ),
    Case(
        "evaluate",
        "unknown-label",
        lambda tmp, nations: [
            "evaluate",
            "--dataset",
            str(nations),
            "--ranks",
            _write(tmp / "r.tsv", "head\trelation\ttail\tside\trank\nbrasil\tembassy\tchina\ttail\t2\n"),
        ],
        ("r.tsv:2: column head: 'brasil' is not an entity label",),
        needs_nations=True,
    ),
    Case(
        "evaluate",
        "scores-without-queries",
        lambda tmp, _: ["evaluate", "--dataset", "nations", "--scores", str(tmp / "s.npy")],
        ("--scores needs --queries",),
    ),
    Case(
        "evaluate",
        "unknown-dataset",
        lambda tmp, _: ["evaluate", "--dataset", "no_such_dataset", "--ranks", str(tmp / "r.csv")],
        ("'no_such_dataset': no such folder, and not a PyKEEN dataset",),
    ),
    Case(
        "evaluate",
        "unknown-metric",
        lambda tmp, _: ["evaluate", "--dataset", "nations", "--ranks", "r.csv", "--metrics", "mmr"],
        ("unknown metric",),
    ),
    Case(
        "evaluate",
        "out-not-a-table",
        lambda tmp, _: ["evaluate", "--dataset", "nations", "--ranks", "r.csv", "--out", str(tmp / "m.csv")],
        ("m.csv: name it .tsv or .parquet",),
    ),
    Case(
        "evaluate",
        "folder-without-model",
        lambda tmp, nations: ["evaluate", "--dataset", str(nations), "--model", str(tmp)],
        ("a folder without trained_model.pkl",),
        needs_nations=True,
    ),
    Case(
        "evaluate",
        "ranks-out-not-parquet",
        lambda tmp, _: [
            *("evaluate", "--dataset", "nations", "--ranks", "r.csv"),
            *("--ranks-out", str(tmp / "r.tsv")),
        ],
        ("r.tsv: name it .parquet",),
    ),
    Case(
        "external-systems",
        "systems-not-json",
        lambda tmp, _: [
            *("external-systems", "--systems", "{nations: x}"),
            *("--out", str(tmp / "s.tsv"), "--markdown", str(tmp / "s.md")),
        ],
        ("--systems: not JSON", "pass an object"),
    ),
    Case(
        "external-systems",
        "a-system-of-no-kind",
        lambda tmp, _: [
            *("external-systems", "--systems", '{"nations": {"a": {"identifiers": "auto"}}}'),
            *("--out", str(tmp / "s.tsv"), "--markdown", str(tmp / "s.md")),
        ],
        ("external system nations/a: none of model, ranks, scores",),
    ),
    Case(
        "external-systems",
        "rescored-not-names",
        lambda tmp, _: [
            *("external-systems", "--systems", '{"nations": {"a": {"ranks": "r.csv"}}}'),
            *("--rescored", '{"ir: every part": [NaN]}'),
            *("--out", str(tmp / "s.tsv"), "--markdown", str(tmp / "s.md")),
        ],
        ("--rescored: write an object part -> [dataset/name, ...]",),
    ),
    # --- compare (systems from outside, on one or more datasets)
    Case(
        "compare",
        "datasets-and-systems-unpaired",
        lambda tmp, nations: [
            *("compare", "--dataset", str(nations), "--dataset", str(nations)),
            *("--systems", f"a={tmp / 'a.csv'}", f"b={tmp / 'b.csv'}"),
        ],
        ("2 --dataset but 1 --systems", "follow each --dataset"),
        needs_nations=True,
    ),
    Case(
        "compare",
        "a-name-taken-twice-from-paths",
        lambda tmp, nations: [
            *("compare", "--dataset", str(nations)),
            *("--systems", str(tmp / "x" / "ranks.csv"), str(tmp / "y" / "ranks.csv")),
        ],
        ("the name 'ranks' is given twice, at least once taken from a path", "name them apart"),
        needs_nations=True,
    ),
    Case(
        "compare",
        "a-run-twice",
        lambda tmp, nations: [
            *("compare", "--dataset", str(nations)),
            *("--systems", f"a={tmp / 'a.csv'}", f"a={tmp / 'a.csv'}"),
        ],
        ("given twice", "the runs of a system are different files"),
        needs_nations=True,
    ),
    Case(
        "compare",
        "a-metric-that-is-no-mean",
        lambda tmp, nations: [
            *("compare", "--dataset", str(nations), "--systems", f"a={tmp / 'a.csv'}", f"b={tmp / 'b.csv'}"),
            *("--metrics", "mmr"),
        ],
        ("unknown metric",),
        needs_nations=True,
    ),
    Case(
        "compare",
        "missing-rank-table",
        lambda tmp, nations: [
            *("compare", "--dataset", str(nations)),
            *("--systems", f"a={tmp / 'missing.csv'}", f"b={tmp / 'missing.csv'}"),
        ],
        ("missing.csv", "no such file"),
        needs_nations=True,
    ),
    Case(
        "compare",
        "a-tie-tolerance-for-rank-tables",
        lambda tmp, nations: [
            *("compare", "--dataset", str(nations), "--tie-tolerance", "relative:1e-6"),
            *("--systems", f"a={REPO / 'tests/data/external-nations/ranks.csv'}", f"b={tmp / 'b.csv'}"),
        ],
        ("a rank table holds ranks, not scores", "pass the model or its score matrix"),
        needs_nations=True,
    ),
    Case(
        "compare",
        "a-misspelt-tie-tolerance",
        lambda tmp, nations: [
            *("compare", "--dataset", str(nations), "--tie-tolerance", "loose"),
            *("--systems", f"a={tmp / 'a.csv'}", f"b={tmp / 'b.csv'}"),
        ],
        ("tie tolerance 'loose'", "absolute:<a> or relative:<r>"),
        needs_nations=True,
    ),
    # --- the scorecard (core)
    Case(
        "scorecard",
        "bad-claims-file",
        lambda tmp, _: [
            *("scorecard", "--results", str(tmp)),
            *("--claims", _write(tmp / "claims.tsv", "id\tpaper\nx\ty\n")),
            *("--tsv", str(tmp / "s.tsv"), "--markdown", str(tmp / "s.md"), "--latex", str(tmp / "s.tex")),
        ],
        ("claims.tsv", "columns"),
    ),
    Case(
        "scorecard",
        "bad-param",
        lambda tmp, _: [
            *("scorecard", "--results", str(tmp), "--param", "ir_dataset"),
            *("--tsv", str(tmp / "s.tsv"), "--markdown", str(tmp / "s.md"), "--latex", str(tmp / "s.tex")),
        ],
        ("--param", "NAME=VALUE"),
    ),
]


STUDY_CASE_MODULES = sorted((REPO / "tests" / "studies").glob("test_*_cli.py"))


def _all_cases() -> list[Case]:
    """The cases here and each study's (tests/studies/test_<study>_cli.py)."""
    import importlib.util

    cases = list(CASES)
    for path in STUDY_CASE_MODULES:
        spec = importlib.util.spec_from_file_location(f"_cases_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        cases += module.CASES
    return cases


def test_every_command_has_a_bad_input_case():
    """The commands come from the parser: a new command without a case fails here."""
    cases = _all_cases()
    assert len(STUDY_CASE_MODULES) >= 6
    assert {case.command for case in cases} == set(COMMANDS)
    assert len({(case.command, case.id) for case in cases}) == len(cases)


@pytest.mark.parametrize("case", case_params(CASES))
def test_bad_input_is_one_line_and_exit_code_2(case, tmp_path, capsys, request):
    check_bad_input(case, tmp_path, capsys, request)


# --- intermediate tables: empty, header only, NaN-carrying --------------------------------
#
# Every command that reads a table another step wrote, each such input of it in turn: the
# commands and their argv are the probe's (scripts/probe_bad_tables.py), whose list must
# name every command of the parser that reads one; the intact inputs are one row made from
# the table kind's declaration (kgrank.data.tables), so every input but the damaged one passes.


def _probe():
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("probe_bad_tables", REPO / "scripts/probe_bad_tables.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


PROBE = _probe()
# The commands that read no table another step wrote: they read a dataset folder, a model,
# a config value or a file from outside (datasets.py, systems.py and the study readers
# check those), or nothing.
NO_INTERMEDIATE_TABLE = {
    "prepare-dataset",
    "import-hyperparameters",
    "validate-hyperparameters",
    "train",
    "ranks",
    "evaluate",
    "compare",
    "external-systems",
    "paper-table4",
    "paper-tables-1-3",
    "moments-table",
    "moments-montecarlo",
    "moments-errata",
    "openworld-simulate",
    "openworld-inconsistency",
    "openworld-family-tree",
    "ambiguity-subsets",
    "ir-queries",
    # rescores a trained model on its dataset folder (both checked by their loaders)
    "protocols-ties-pair",
    # judges claims on any table of a run: an unreadable or damaged one makes its claims
    # "not checkable" with the reason, in the scorecard itself (tests/test_scorecard.py)
    "scorecard",
}


def _kinds() -> dict:
    """The table kind of each of the probe's fixtures."""
    from kgrank.data import tables
    from kgrank.studies.ambiguity.inputs import drift_kind, subset_kind
    from kgrank.studies.ir import commands as ir
    from kgrank.studies.openworld import commands as openworld
    from kgrank.studies.paper.commands import AUDIT
    from kgrank.studies.protocols.inputs import sampled_kind, ties_kind, weighted_kind

    return {
        "ranks": tables.RANKS,
        "ranks2": tables.RANKS,
        "subsets": subset_kind(),
        "metrics": tables.METRICS,
        "micro": tables.METRICS,
        "curve": tables.LEARNING_CURVE,
        "moments": tables.MOMENTS,
        "checks": tables.MONTECARLO_CHECK,
        "drift": drift_kind(),
        "grid": openworld.GRID,
        "inversions": openworld.INVERSIONS,
        "needed": openworld.NEEDED,
        "saturation": openworld.SATURATION,
        "checkpoints": openworld.CHECKPOINTS,
        "evaluations": ir.evaluations_kind(),
        "items": ir.items_kind(),
        "items2": ir.items_kind(),
        "relations": ir.relations_kind(),
        "summary": ir.stability_summary_kind(),
        "audit": AUDIT,
        "weighted": weighted_kind(),
        "sampled": sampled_kind(),
        "ties": ties_kind(),
    }


def _row(kind) -> dict:
    """One row every declared check passes: the lowest allowed value, the first choice."""
    row = {}
    for column in kind.columns:
        if column.dtype in ("int", "float"):
            value = max(column.low if column.low is not None else 1, 1 if column.high is None else 0)
            if column.high is not None:
                value = min(value, column.high)
            row[column.name] = int(value) if column.dtype == "int" else float(value)
        elif column.dtype == "bool":
            row[column.name] = True
        else:
            row[column.name] = column.choices[0] if column.choices else "x"
    return row


def _write_kind(path: Path, kind, rows: list[dict] | None) -> None:
    """A table of ``kind`` at ``path``: ``rows`` (None: an empty file, no header)."""
    import pandas as pd

    path.parent.mkdir(parents=True, exist_ok=True)
    if rows is None:
        path.write_bytes(b"")
        return
    frame = pd.DataFrame(rows, columns=list(kind.names))
    if path.suffix == ".parquet":
        frame.to_parquet(path, index=False)
    else:
        frame.to_csv(path, sep="\t", index=False)


def _intact_inputs(tmp: Path) -> dict[str, str]:
    import json

    inputs = {}
    for key, kind in _kinds().items():
        path = tmp / "intact" / key / Path(PROBE.R[key]).name
        _write_kind(path, kind, [_row(kind)])
        inputs[key] = str(path)
    stats = tmp / "intact" / "stats.json"
    triples = {"train": 1, "valid": 1, "test": 1}
    stats.write_text(json.dumps({"dataset": "x", "entities": 2, "relations": 1, "triples": triples}))
    published = tmp / "intact" / "published.tsv"
    published.write_text("model\tdataset\ttest_mrr\nm\tx\t0.5\n")
    return inputs | {
        "stats": str(stats),
        "published_values": str(published),
        "published_results": _write(tmp / "intact" / "results.tsv", "model\tdataset\tsource\nm\tx\ts\n"),
        "model_dir": str(tmp / "no-model"),
        "data_dir": str(tmp / "no-data"),
    }


TABLE_DAMAGES = ("empty", "header-only", "nan")


def test_every_command_that_reads_a_table_is_probed():
    """The parser's commands: each reads an intermediate table (and the probe feeds it bad
    ones) or is listed as reading none; a new command fails here until it is one or the other."""
    probed = {slot.command for slot in PROBE.SLOTS}
    assert probed | NO_INTERMEDIATE_TABLE == set(COMMANDS)
    assert not probed & NO_INTERMEDIATE_TABLE
    assert {PROBE.SLOT_FIXTURE[slot.slot.rpartition(":")[2]] for slot in PROBE.SLOTS} <= set(_kinds())


@pytest.mark.parametrize("damage", TABLE_DAMAGES)
@pytest.mark.parametrize("slot", PROBE.SLOTS, ids=[f"{slot.command}-{slot.slot}" for slot in PROBE.SLOTS])
def test_a_damaged_table_is_one_line_and_nothing_written(slot, damage, tmp_path, capsys):
    kinds = _kinds()
    inputs = _intact_inputs(tmp_path)
    fixture = PROBE.SLOT_FIXTURE[slot.slot.rpartition(":")[2]]
    kind = kinds[fixture]
    bad = tmp_path / "bad" / Path(PROBE.R[fixture]).name
    row = _row(kind)
    rows = {"empty": None, "header-only": [], "nan": [row, {**row, slot.nan_column: None}]}[damage]
    _write_kind(bad, kind, rows)
    out = tmp_path / "out"
    out.mkdir()
    code, _, err = _run(slot.argv(inputs | {fixture: str(bad)}, out), capsys)
    assert code == 2, err
    line = _error_line(slot.command, err)
    assert len(err.strip().splitlines()) == 1, err
    assert bad.name in line, line
    expected = {
        "empty": "empty file" if bad.suffix == ".tsv" else "not a readable parquet file",
        "header-only": "no rows (a header only)",
        "nan": f"column {slot.nan_column}, {'row 2' if bad.suffix == '.parquet' else 'line 3'}: missing",
    }[damage]
    assert expected in line, line
    assert kind.producer in line, line
    assert not [path for path in out.rglob("*") if path.is_file()], "written despite the error"


def test_truncated_model_is_named_not_a_traceback(nations_dir, tmp_path, capsys):
    """A model.pt cut short (a disk that filled up, a copy interrupted) is one line."""
    model_dir = tmp_path / "model"
    train = ["train", "--dataset-dir", str(nations_dir), "--hyperparameters", TRANSE]
    code, _, err = _run(
        [*train, "--out-dir", str(model_dir), "--seed", "1", "--max-epochs", "1", "--quiet"], capsys
    )
    assert code == 0, err
    whole = (model_dir / "model.pt").read_bytes()
    for length in (len(whole) // 2, 0):
        (model_dir / "model.pt").write_bytes(whole[:length])
        argv = ["ranks", "--dataset-dir", str(nations_dir), "--model-dir", str(model_dir)]
        code, _, err = _run([*argv, "--out", str(tmp_path / "r.parquet"), "--seed", "1", "--quiet"], capsys)
        assert code == 2
        line = _error_line("ranks", err)
        assert f"{model_dir / 'model.pt'}: not a readable PyTorch state dict" in line
        assert "retrain it" in line
        assert not (tmp_path / "r.parquet").exists()


def test_prepare_dataset_from_a_folder(tmp_path, capsys):
    """--folder with --sha256 SPLIT=HEX pairs and --header: the header line is reported on
    stderr, the stats (with the files' sha256) on stdout."""
    import hashlib
    import json

    argv = _prepare_folder(tmp_path, names=("train.tsv", "valid.txt", "test.tsv"))
    folder = Path(argv[argv.index("--folder") + 1])
    digest = hashlib.sha256((folder / "valid.txt").read_bytes()).hexdigest()
    # the three files hold the same bytes
    code, out, err = _run(
        [*argv, "--sha256", *(f"{split}={digest}" for split in ("train", "valid", "test"))], capsys
    )
    assert code == 0, err
    stats = json.loads(out)
    assert stats["source"] == "folder" and stats["triples"] == {"train": 1, "valid": 1, "test": 1}
    assert stats["sources"]["valid"] == {"path": str(folder / "valid.txt"), "sha256": digest}
    assert err.count("line 1 read as a header (head, relation, tail)") == 3
    # --header no: `head relation tail` is a triple
    argv[argv.index(str(tmp_path / "o"))] = str(tmp_path / "no")
    code, out, err = _run([*argv, "--header", "no"], capsys)
    assert code == 0, err
    assert json.loads(out)["triples"]["train"] == 2
    assert err == ""


def test_prepare_dataset_header_choices_are_the_datasets_modes():
    from kgrank.data.datasets import HEADER_OPTION

    (action,) = (
        action
        for action in _subcommands(build_parser())["prepare-dataset"]._actions
        if "--header" in action.option_strings
    )
    assert list(action.choices) == list(HEADER_OPTION)


def test_evaluate_a_pykeen_folder_and_a_rank_csv_end_to_end(nations_dir, tmp_path, capsys):
    """`kgrank evaluate` on what a user brings: PyKEEN's own pipeline folder, then the same
    ranks as a CSV by label from "another framework"; both print MRR with its interval and
    agree."""
    import re

    import pandas as pd
    from test_systems import train_pykeen_folder

    from kgrank.data.datasets import load_factories
    from kgrank.systems import load_system

    folder = train_pykeen_folder(tmp_path / "pk_transe", num_epochs=1)
    printed = {}
    for option, system in (("--model", folder), ("--ranks", tmp_path / "ranks.csv")):
        argv = ["evaluate", "--dataset", str(nations_dir), option, str(system), "--quiet", "--trust-pickle"]
        out_option = ["--out", str(tmp_path / ("pk.tsv" if option == "--model" else "csv.tsv"))]
        code, out, err = _run([*argv, *out_option, "--markdown", str(tmp_path / "t.md")], capsys)
        assert code == 0, err
        mrr = next(line for line in out.splitlines() if line.startswith("MRR "))
        assert re.match(r"MRR\s+\d\.\d+ \[\d\.\d+, \d\.\d+\]\s+0\.3844\s+-?\d", mrr), mrr
        assert (
            "402 ranks of 201 test triples (both sides), realistic ranks, filtered by train, valid, test"
            in out
        )
        printed[option] = mrr
        if option == "--model":
            # the same ranks as another framework would write them: labels, no triple ids
            table = load_system(folder, nations_dir, trusted=True)
            training = load_factories(nations_dir).training
            entities = {index: label for label, index in training.entity_to_id.items()}
            relations = {index: label for label, index in training.relation_to_id.items()}
            pd.DataFrame(
                {
                    "head": table["head"].map(entities),
                    "relation": table["relation"].map(relations),
                    "tail": table["tail"].map(entities),
                    "side": table["side"],
                    "optimistic": table["optimistic"],
                    "pessimistic": table["pessimistic"],
                }
            ).to_csv(tmp_path / "ranks.csv", index=False)
    assert printed["--model"] == printed["--ranks"]
    model, csv = (pd.read_csv(tmp_path / name, sep="\t") for name in ("pk.tsv", "csv.tsv"))
    assert list(model["system"].unique()) == ["pk_transe"] and list(model["dataset"].unique()) == ["nations"]
    pd.testing.assert_frame_equal(model.drop(columns="system"), csv.drop(columns="system"))
    assert "| MRR " in (tmp_path / "t.md").read_text(encoding="utf-8")


def test_ranks_refuses_a_dataset_without_test_triples(tmp_path, capsys, monkeypatch):
    """Were a test split empty after loading (the loader refuses an empty file), `ranks`
    stops instead of writing an empty rank table every later step would take."""
    from types import SimpleNamespace

    import torch

    import kgrank.training.train

    empty = SimpleNamespace(testing=SimpleNamespace(mapped_triples=torch.zeros((0, 3), dtype=torch.long)))
    monkeypatch.setattr(kgrank.training.train, "load_model", lambda *args, **kwargs: (None, empty))
    out = tmp_path / "r.parquet"
    argv = ["ranks", "--dataset-dir", str(tmp_path / "d"), "--model-dir", str(tmp_path / "m")]
    code, _, err = _run([*argv, "--out", str(out), "--seed", "1", "--quiet"], capsys)
    assert code == 2
    assert f"{tmp_path / 'd' / 'test.tsv'}: no test triples to rank" in _error_line("ranks", err)
    assert not out.exists()


def test_metrics_command_seeds_its_intervals(tmp_path):
    # the workflow's `seed:` reaches the metric table's resampled intervals
    from test_weighted import rank_table

    from kgrank.cli.main import main

    ranks = tmp_path / "ranks.parquet"
    rank_table().to_parquet(ranks)
    tables = []
    for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        out = tmp_path / f"{name}.tsv"
        main(
            ["metrics", "--ranks", str(ranks), "--external", "ranks", "--dataset", "d", "--model", "m"]
            + ["--out", str(out), "--seed", seed]
        )
        tables.append(out.read_bytes())
    assert tables[0] == tables[1]
    assert tables[0] != tables[2]


def test_evaluate_weighs_tasks_for_the_weighted_geometric_mean_rank(nations_dir, tmp_path, capsys):
    """`kgrank evaluate --weights negatives`: WGMR and IWGMR of the rank file, the values
    and exact moments the protocols study's weighted evaluator gives; an unweighted metric
    named beside --weights ends in one line."""
    import numpy as np
    import pandas as pd

    from kgrank.data.datasets import load_factories
    from kgrank.engine.candidates import candidate_counts
    from kgrank.evaluation.weighted import evaluate_weighted_rank_table

    test = load_factories(nations_dir).testing.mapped_triples.numpy()
    counts = candidate_counts(nations_dir, "test")["num_candidates"].to_numpy()
    rng = np.random.default_rng(2)
    ranks = pd.DataFrame(
        {
            "head": np.tile(test[:, 0], 2),
            "relation": np.tile(test[:, 1], 2),
            "tail": np.tile(test[:, 2], 2),
            "side": np.repeat(["head", "tail"], len(test)),
            "rank": 1 + rng.integers(0, 10**6, size=2 * len(test)) % counts,
        }
    )
    ranks.to_csv(tmp_path / "ranks.csv", index=False)
    argv = ["evaluate", "--dataset", str(nations_dir), "--ranks", str(tmp_path / "ranks.csv"), "--quiet"]
    code, out, err = _run([*argv, "--weights", "negatives", "--out", str(tmp_path / "w.tsv")], capsys)
    assert code == 0, err
    assert "tasks weighted by negatives" in out and "WGMR " in out and "IWGMR " in out
    ours = pd.read_csv(tmp_path / "w.tsv", sep="\t").set_index("metric")
    table = pd.read_csv(tmp_path / "w.tsv", sep="\t")
    assert set(table["metric"]) >= {
        "weighted_geometric_mean_rank",
        "adjusted_weighted_geometric_mean_rank_index",
    }
    # the same ranks through the protocols study's weighted evaluator (every rank type: the realistic one)
    code, _, err = _run([*argv, "--ranks-out", str(tmp_path / "r.parquet"), "--metrics", "mr"], capsys)
    assert code == 0, err
    expected = evaluate_weighted_rank_table(pd.read_parquet(tmp_path / "r.parquet"), "negatives")
    expected = expected.query("side == 'both' and rank_type == 'realistic'").set_index("metric")
    for key in expected.index:  # the TSV holds 10 significant digits
        assert ours.loc[key, "value"] == pytest.approx(expected.loc[key, "value"], rel=1e-9)
        assert ours.loc[key, "random_expectation"] == pytest.approx(
            expected.loc[key, "expectation"], rel=1e-9
        )
    code, _, err = _run([*argv, "--weights", "negatives", "--metrics", "mrr"], capsys)
    assert code == 2 and err.strip().count("\n") == 0
    assert "--metrics mrr: takes no weights" in err
    code, _, err = _run([*argv, "--metrics", "awgmri"], capsys)
    assert code == 2 and err.strip().count("\n") == 0
    assert "--metrics awgmri: needs one weight per task; add --weights" in err


def test_evaluate_reports_a_sampled_protocol_and_its_estimators(nations_dir, tmp_path, capsys):
    """`kgrank evaluate --sampled K`: what k random negatives per task would report and each
    estimator's exact expectation, bias and spread, as kgrank.evaluate_sampled gives them on
    the same ranks; the naive expectation agrees with sampled ranks drawn from the full ones;
    bad combinations end in one line."""
    import numpy as np
    import pandas as pd

    import kgrank
    from kgrank.errors import KgrankInputError
    from kgrank.evaluation.sampled import FullRanks, sample_ranks_from_full

    data = REPO / "tests/data/external-nations"
    argv = ["evaluate", "--dataset", str(nations_dir), "--ranks", str(data / "ranks.csv"), "--allow-partial"]
    out_file, ranks_file = tmp_path / "sampled.tsv", tmp_path / "ranks.parquet"
    code, out, err = _run(
        [*argv, "--sampled", "4", "8", "--sampled-out", str(out_file), "--ranks-out", str(ranks_file)], capsys
    )
    assert code == 0, err
    assert "Tasks with more than k negatives: k=4:" in out and "corrected" in out
    written = pd.read_csv(out_file, sep="\t")
    assert set(written["num_samples"]) == {4, 8} and set(written["estimator"]) == {
        "naive",
        "rescaled",
        "posterior-rank",
        "corrected",
    }
    ranks = pd.read_parquet(ranks_file)
    expected = kgrank.evaluate_sampled(ranks, [4, 8])
    for column in ("full_value", "estimate_expectation", "standard_deviation"):  # 10 digits in the TSV
        assert written[column].to_numpy() == pytest.approx(expected[column].to_numpy(), rel=1e-9, abs=1e-12)
    naive = expected.query("num_samples == 4 and estimator == 'naive' and label == 'MRR'").iloc[0]
    draws = sample_ranks_from_full(FullRanks.from_table(ranks), 4, seed=1, replicates=4000)
    simulated = np.mean(1.0 / draws.optimistic, axis=1)
    assert abs(simulated.mean() - naive["estimate_expectation"]) < 4 * naive["standard_deviation"] / np.sqrt(
        4000
    )
    assert simulated.std(ddof=1) == pytest.approx(naive["standard_deviation"], rel=0.1)
    for bad, message in (
        ([*argv, "--sampled", "13"], "--sampled 13: the largest task has 14 candidates"),
        ([*argv, "--estimators", "naive"], "--estimators goes with --sampled K"),
        ([*argv, "--sampled", "4", "--sampled-out", str(tmp_path / "s.csv")], "name it .tsv or .parquet"),
    ):
        code, _, err = _run(bad, capsys)
        assert code == 2 and err.strip().count("\n") == 0 and message in err, err
    with pytest.raises(KgrankInputError, match="estimate a base metric; name inverse_harmonic"):
        kgrank.evaluate_sampled(ranks, 4, metrics=["amrr"])


class _OpensAFile:
    """Unpickled, it opens (creates) ``marker``: the code a pickle can run when loaded."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple:
        return (open, (self.marker, "w"))


def test_an_untrusted_pickle_never_runs(nations_dir, tmp_path, capsys):
    """A PyKEEN folder whose trained_model.pkl runs code is refused in one line by kgrank
    evaluate, kgrank compare and load_system unless trusted: no marker file appears. With
    the trust given, the code runs (why the gate is there) and the file is refused after."""
    import torch

    from kgrank.errors import KgrankInputError
    from kgrank.systems import load_system

    folder, marker = tmp_path / "folder", tmp_path / "marker"
    folder.mkdir()
    torch.save(_OpensAFile(str(marker)), folder / "trained_model.pkl")
    evaluate = ["evaluate", "--dataset", str(nations_dir), "--model", str(folder), "--quiet"]
    compare = ["compare", "--dataset", str(nations_dir), "--systems", f"a={folder}", f"b={folder}", "--quiet"]
    for argv in (evaluate, compare):
        code, _, err = _run(argv, capsys)
        assert code == 2 and err.strip().count("\n") == 0, err
        assert "not loaded: a pickle runs code from its file" in err and "--trust-pickle" in err
    with pytest.raises(KgrankInputError, match="trusted=True from Python"):
        load_system(folder, nations_dir)
    assert not marker.exists()
    code, _, err = _run([*evaluate, "--trust-pickle"], capsys)
    assert code == 2 and "not a PyKEEN model" in err
    assert marker.exists()


def test_compare_ranks_a_pykeen_folder_within_a_tie_tolerance(nations_dir, tmp_path, capsys):
    """`kgrank compare --tie-tolerance`: the folders' scores tie within it, so with a
    tolerance wider than every score gap each pessimistic rank is the task's last place."""
    import numpy as np
    import pandas as pd

    folder = REPO / "tests/data/external-nations/pykeen-distmult"
    argv = ["compare", "--dataset", str(nations_dir), "--systems", f"a={folder}", f"b={folder}", "--quiet"]
    argv += ["--trust-pickle"]
    argv += ["--metrics", "mrr", "--rank-type", "pessimistic", "--bootstrap-resamples", "200"]
    results = {}
    for tolerance in ("exact", "absolute:1e9"):
        out_dir = tmp_path / tolerance.replace(":", "-")
        code, _, err = _run([*argv, "--tie-tolerance", tolerance, "--out-dir", str(out_dir)], capsys)
        assert code == 0, err
        results[tolerance] = pd.read_csv(out_dir / "systems.tsv", sep="\t")
    from kgrank.engine.candidates import candidate_counts

    counts = pd.concat([candidate_counts(nations_dir, "test")["num_candidates"]] * 2).to_numpy()
    wide = results["absolute:1e9"].query("metric == 'inverse_harmonic_mean_rank'")["value"]
    assert wide.to_numpy() == pytest.approx(np.mean(1.0 / counts), rel=1e-9)
    exact = results["exact"].query("metric == 'inverse_harmonic_mean_rank'")["value"]
    assert (exact.to_numpy() > wide.to_numpy() + 0.1).all()


def test_a_score_matrix_in_another_column_order_is_caught_and_named(nations_dir, tmp_path, capsys):
    """Issue 47's trap: columns in another entity order gave MRR near random with exit 0 and
    no word. Now a loud warning says so; --column-labels names each column and gives the
    ranks of the dataset's order; --id-maps writes that order."""
    import numpy as np
    import pandas as pd

    data = REPO / "tests/data/external-nations"
    scores = np.load(data / "scores.npy")
    permutation = np.random.default_rng(0).permutation(scores.shape[1])  # column j: entity permutation[j]
    np.save(tmp_path / "shuffled.npy", scores[:, permutation])
    base = [
        "evaluate",
        "--dataset",
        str(nations_dir),
        "--queries",
        str(data / "queries.tsv"),
        "--allow-partial",
    ]
    base += ["--quiet", "--metrics", "mrr"]
    code, out, err = _run(
        [*base, "--scores", str(data / "scores.npy"), "--id-maps", str(tmp_path / "maps")], capsys
    )
    assert code == 0 and "no better than random" not in err
    ordered = next(line for line in out.splitlines() if line.startswith("MRR"))
    entities = pd.read_csv(tmp_path / "maps" / "entity_to_id.tsv", sep="\t")
    assert entities["id"].tolist() == list(range(14)) and entities["label"].tolist() == sorted(
        entities["label"]
    )
    assert pd.read_csv(tmp_path / "maps" / "relation_to_id.tsv", sep="\t")["id"].tolist() == list(range(55))
    shuffled = [*base, "--scores", str(tmp_path / "shuffled.npy")]
    code, out, err = _run(shuffled, capsys)
    assert code == 0 and err.count("\n") == 1
    assert (
        "shuffled.npy ranks the test answers no better than random" in err and "--column-labels FILE" in err
    )
    code, out, err = _run([*shuffled, "--id-maps", str(tmp_path / "again")], capsys)  # the warning stays
    assert code == 0 and "no better than random" in err
    labels = tmp_path / "columns.txt"
    labels.write_bytes(b"brazil\n\xff\n")
    code, _, err = _run([*shuffled, "--column-labels", str(labels)], capsys)
    assert code == 2 and "byte 0xff at offset 7 is not UTF-8" in err
    labels.write_text("\n".join(entities["label"].to_numpy()[permutation]) + "\n")
    code, out, err = _run([*shuffled, "--column-labels", str(labels)], capsys)
    assert code == 0 and "no better than random" not in err
    assert next(line for line in out.splitlines() if line.startswith("MRR")) == ordered
    for content, message in (
        ("brazil\n", "1 lines for 14 entities"),
        ("\n".join(["atlantis", *entities["label"][1:]]), ":1: 'atlantis' is no entity of the dataset"),
        ("\n".join([*entities["label"][:13], "brazil"]), "'brazil' again (first on line 1)"),
    ):
        labels.write_text(content)
        code, _, err = _run([*shuffled, "--column-labels", str(labels)], capsys)
        assert code == 2 and err.strip().count("\n") == 0 and message in err, err
    code, _, err = _run(
        [
            "evaluate",
            "--dataset",
            str(nations_dir),
            "--ranks",
            str(data / "ranks.csv"),
            "--column-labels",
            "x",
        ],
        capsys,
    )
    assert code == 2 and "--column-labels goes with --scores" in err


def test_evaluate_settles_ties_within_a_tolerance(nations_dir, tmp_path, capsys):
    """`kgrank evaluate --tie-tolerance` on a score matrix: wider tie blocks than exact
    equality, said in the first line; refused in one line for a rank table, whose ties
    were settled where it was made, and for a tolerance that is none."""
    import pandas as pd

    data = REPO / "tests/data/external-nations"
    scores = ["--scores", str(data / "scores.npy"), "--queries", str(data / "queries.tsv")]
    argv = ["evaluate", "--dataset", str(nations_dir), *scores, "--allow-partial", "--quiet"]
    code, out, err = _run([*argv, "--ranks-out", str(tmp_path / "exact.parquet")], capsys)
    assert code == 0, err
    wide = [*argv, "--tie-tolerance", "absolute:0.5", "--ranks-out", str(tmp_path / "wide.parquet")]
    code, out, err = _run(wide, capsys)
    assert code == 0, err
    assert "ties within absolute:0.5" in out.splitlines()[0]
    # every tie rule side by side: with every candidate tied, the tie-neutral MRR is the random one
    assert "tie-neutral" in out and "Ties: tasks whose true answer ties another candidate: both 100.0%" in out
    exact, tolerant = (pd.read_parquet(tmp_path / f"{name}.parquet") for name in ("exact", "wide"))
    assert (
        tolerant["pessimistic"] - tolerant["optimistic"] >= exact["pessimistic"] - exact["optimistic"]
    ).all()
    assert (tolerant["pessimistic"] - tolerant["optimistic"]).sum() > (
        exact["pessimistic"] - exact["optimistic"]
    ).sum()
    ranks = ["evaluate", "--dataset", str(nations_dir), "--ranks", str(data / "ranks.csv"), "--allow-partial"]
    for bad, message in (
        ([*ranks, "--tie-tolerance", "relative:1e-3"], "a rank table holds ranks, not scores"),
        (
            [*argv, "--tie-tolerance", "loose"],
            "tie tolerance 'loose': pass exact, absolute:<a> or relative:<r>",
        ),
    ):
        code, _, err = _run(bad, capsys)
        assert code == 2 and err.strip().count("\n") == 0 and message in err, err


def _options_of_every_command() -> set[str]:
    import argparse

    from kgrank.cli.main import build_parser

    commands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return {option for sub in commands.choices.values() for a in sub._actions for option in a.option_strings}


def test_every_option_a_refusal_names_exists():
    """A hint that names an option the command line does not have (issue 47 found three)
    sends the user nowhere: every --option in a KgrankInputError's text is one of kgrank's."""
    import ast
    import re

    named: dict[str, list[str]] = {}
    for path in sorted((REPO / "src" / "kgrank").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            call = node.exc if isinstance(node, ast.Raise) else None
            function = getattr(call, "func", None)
            if getattr(function, "id", getattr(function, "attr", None)) != "KgrankInputError":
                continue
            for part in ast.walk(call):
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    for option in re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", part.value):
                        named.setdefault(option, []).append(f"{path.name}:{node.lineno}")
    assert {"--scores", "--column-labels", "--sampled"} <= set(named)  # the finder finds them
    missing = {
        option: places for option, places in named.items() if option not in _options_of_every_command()
    }
    assert missing == {}


def test_the_header_hint_runs_as_given(tmp_path, capsys):
    """kgrank evaluate on a folder whose first line adds a new head: a note names
    --header yes, and that option, as given, skips the line; compare's matrix hint names
    kgrank evaluate's options."""
    from pykeen.datasets import Nations

    raw = Path(Nations().training_path).parent
    folder = tmp_path / "graph"
    folder.mkdir()
    for split in ("train", "valid", "test"):
        content = (raw / f"{split}.txt").read_bytes()
        (folder / f"{split}.txt").write_bytes(
            b"atlantis\tembassy\tusa\n" + content  # the same first line in each split
        )
    ranks = REPO / "tests/data/external-nations/ranks.csv"
    argv = [
        "evaluate",
        "--dataset",
        str(folder),
        "--ranks",
        str(ranks),
        "--allow-partial",
        "--metrics",
        "mrr",
    ]
    code, out, err = _run(argv, capsys)
    assert code == 0 and "its head 'atlantis' occurs on no other line" in err and "(--header yes)" in err
    assert err.count("read as a triple") == 3
    code, out, err = _run([*argv, "--header", "yes"], capsys)
    assert code == 0 and "atlantis" not in err, err
    assert out.startswith("ranks on graph: 402 ranks")
    code, _, err = _run(
        [
            "compare",
            "--dataset",
            str(folder),
            "--header",
            "yes",
            "--systems",
            f"a={tmp_path / 'm.npy'}",
            "b=x",
        ],
        capsys,
    )
    assert code == 2 and "give kgrank evaluate both (--scores FILE --queries FILE)" in err


def test_evaluate_by_relation_and_category(nations_dir, tmp_path, capsys):
    """`kgrank evaluate --by relation_category`: each category's values, the tidy table
    equal to kgrank.evaluation.groups' on the same ranks; the groups' ranks add up to the whole."""
    import pandas as pd

    from kgrank.evaluation.groups import evaluate_groups
    from kgrank.evaluation.metrics import lookup

    data = REPO / "tests/data/external-nations"
    argv = ["evaluate", "--dataset", str(nations_dir), "--ranks", str(data / "ranks.csv"), "--allow-partial"]
    argv += ["--metrics", "mrr", "hits@10", "--ranks-out", str(tmp_path / "r.parquet")]
    code, out, err = _run([*argv, "--by", "relation_category", "--by-out", str(tmp_path / "by.tsv")], capsys)
    assert code == 0, err
    assert "relation category" in out and "N-N" in out and "AMRR" in out
    written = pd.read_csv(tmp_path / "by.tsv", sep="\t")
    assert set(written["metric"]) == {
        "inverse_harmonic_mean_rank",
        "adjusted_inverse_harmonic_mean_rank",
        "hits_at_10",
        "adjusted_hits_at_10",
    }
    assert written.drop_duplicates("group")["num_ranks"].sum() == 402
    ranks = pd.read_parquet(tmp_path / "r.parquet")
    expected = evaluate_groups(ranks, nations_dir, [lookup("mrr").metric], aggregations=["relation_category"])
    expected = expected.query(
        "side == 'both' and rank_type == 'realistic' and metric == 'inverse_harmonic_mean_rank'"
    )
    ours = written.query("metric == 'inverse_harmonic_mean_rank'").set_index("group")["value"]
    for row in expected.itertuples(index=False):
        assert ours[row.group] == pytest.approx(row.value, rel=1e-9)
    code, _, err = _run([*argv, "--by-out", str(tmp_path / "x.tsv")], capsys)
    assert code == 2 and "--by-out goes with --by relation" in err


class _Loaded(Exception):
    """Raised by a stand-in load_model: which device a command asked for."""


@pytest.mark.parametrize(
    "argv",
    [
        ["ranks", "--out", "r.parquet", "--seed", "1"],
        ["ambiguity-subsets", "--out", "s.parquet", "--seed", "1", "--batch-size", "8", "--threads", "1"],
    ],
    ids=["ranks", "ambiguity-subsets"],
)
def test_a_scoring_command_loads_its_model_on_the_device_it_is_given(argv, monkeypatch, tmp_path):
    import kgrank.training.train

    def load_model(model_dir, dataset_dir, device="cpu"):
        raise _Loaded(device)

    monkeypatch.setattr(kgrank.training.train, "load_model", load_model)
    with pytest.raises(_Loaded, match="^cuda:1$"):
        main([*argv, "--dataset-dir", str(tmp_path), "--model-dir", str(tmp_path), "--device", "cuda:1"])
