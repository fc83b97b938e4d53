"""The rule of the house, checked on the source: a study imports the core, never another
study; the core never imports a study. The one sanctioned meeting point is
``kgrank/cli/main.py``, which imports the registry ``kgrank.studies`` and nothing below it.

Imports are read with ``ast`` (``import x`` and ``from x import y``, at any depth,
relative ones resolved, plus ``importlib.import_module("...")`` / ``__import__("...")``
with a literal name), so an import hidden inside a function counts too.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import REPO

SRC = REPO / "src"
PACKAGE = "kgrank"
REGISTRY = f"{PACKAGE}.studies"
# The command line (the package kgrank.cli) may import the registry, and only the
# registry: the one meeting point of the core and the studies.
REGISTRY_USER = f"{PACKAGE}.cli"


def _is_registry_user(name: str) -> bool:
    return name == REGISTRY_USER or name.startswith(f"{REGISTRY_USER}.")


@dataclass(frozen=True)
class Module:
    name: str
    source: str
    is_package: bool


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    line: int


def collect_modules(src_root: Path, package: str = PACKAGE) -> dict[str, Module]:
    """Every module of ``package`` under ``src_root`` by dotted name."""
    modules = {}
    for path in sorted((src_root / package).rglob("*.py")):
        parts = path.relative_to(src_root).with_suffix("").parts
        is_package = parts[-1] == "__init__"
        name = ".".join(parts[:-1] if is_package else parts)
        modules[name] = Module(name, path.read_text(encoding="utf-8"), is_package)
    return modules


def _resolve_relative(module: Module, level: int, target: str | None) -> str:
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    parts = package.split(".")
    if level - 1 > len(parts) - 1:
        raise ValueError(f"{module.name}: relative import beyond the top-level package")
    base = ".".join(parts[: len(parts) - (level - 1)])
    return f"{base}.{target}" if target else base


def imports_of(module: Module, known: set[str]) -> list[Import]:
    """Every module that ``module`` imports, wherever the import statement sits.

    ``from a import b`` imports ``a`` and, where ``a.b`` is a module in ``known``, ``a.b``.
    """
    found = []
    for node in ast.walk(ast.parse(module.source)):
        if isinstance(node, ast.Import):
            found += [Import(module.name, alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve_relative(module, node.level, node.module) if node.level else node.module
            assert base is not None
            found.append(Import(module.name, base, node.lineno))
            found += [
                Import(module.name, f"{base}.{alias.name}", node.lineno)
                for alias in node.names
                if f"{base}.{alias.name}" in known
            ]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            function = node.func
            called = function.attr if isinstance(function, ast.Attribute) else getattr(function, "id", None)
            if called in {"import_module", "__import__"} and isinstance(node.args[0].value, str):
                found.append(Import(module.name, node.args[0].value, node.lineno))
    return found


def _study_of(name: str) -> str | None:
    """The study a module belongs to (``kgrank.studies.<study>...``); None for the core and
    for the registry ``kgrank.studies`` itself."""
    parts = name.split(".")
    return parts[2] if len(parts) > 2 and ".".join(parts[:2]) == REGISTRY else None


def _under_registry(name: str) -> bool:
    return name == REGISTRY or name.startswith(REGISTRY + ".")


def violations(modules: dict[str, Module]) -> list[str]:
    """Every import that breaks the rule of the house, one readable line each."""
    known = set(modules)
    found = []
    for module in modules.values():
        own = _study_of(module.name)
        for imported in imports_of(module, known):
            target = imported.imported
            if not _under_registry(target):
                continue
            where = f"{module.name} (line {imported.line}) imports {target}"
            if module.name == REGISTRY:
                # The registry finds the studies by name at run time; naming one would
                # mean adding a study touches a file outside it.
                if _study_of(target) is not None:
                    found.append(f"{where}: the registry must not name a study")
            elif own is None:
                if not (_is_registry_user(module.name) and target == REGISTRY):
                    found.append(
                        f"{where}: the core never imports a study"
                        + (f" (the command line may import exactly {REGISTRY})" if target != REGISTRY else "")
                    )
            elif _study_of(target) != own:
                found.append(f"{where}: study {own!r} imports only the core and itself")
    return sorted(found)


# --- the rule holds on the shipped source --------------------------------------------


def test_no_module_breaks_the_import_rule():
    modules = collect_modules(SRC)
    assert REGISTRY in modules and REGISTRY_USER in modules
    assert violations(modules) == []


def test_the_import_reader_sees_the_real_imports():
    """Guards against a reader that finds nothing (and so passes vacuously)."""
    modules = collect_modules(SRC)
    known = set(modules)
    cli = {imported.imported for imported in imports_of(modules[f"{REGISTRY_USER}.main"], known)}
    assert REGISTRY in cli
    # imports inside the command handlers (function bodies) count too
    assert "kgrank.training.train" in cli
    study_imports = {
        imported.imported
        for name, module in modules.items()
        if _study_of(name) is not None
        for imported in imports_of(module, known)
    }
    assert any(name.startswith(f"{PACKAGE}.") and not _under_registry(name) for name in study_imports)


# --- the checker catches what it should ------------------------------------------------


def _synthetic(sources: dict[str, str]) -> dict[str, Module]:
    """A module tree by dotted name; names ending in ``/`` are packages."""
    return {
        name.rstrip("/"): Module(name.rstrip("/"), source, name.endswith("/"))
        for name, source in sources.items()
    }


CLEAN = {
    "kgrank/": "",
    "kgrank.evaluation.metrics": "import numpy as np\n",
    "kgrank.cli/": "",
    "kgrank.cli.main": "from kgrank.studies import load_studies\nimport kgrank.evaluation.metrics\n",
    "kgrank.studies/": "import importlib\n\ndef load(n):\n    return importlib.import_module(f'.{n}')\n",
    "kgrank.studies.a/": (
        "from kgrank.evaluation.metrics import x\nfrom . import plots\nfrom .plots import y\n"
    ),
    "kgrank.studies.a.plots": "from kgrank.studies.a import z\nfrom ..a import w\n",
    "kgrank.studies.b": "import kgrank.evaluation.metrics\n",
}


def test_a_clean_synthetic_tree_passes():
    assert violations(_synthetic(CLEAN)) == []


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        # the core, at the top and hidden in a function
        (
            "kgrank.evaluation.metrics",
            "import kgrank.studies.a\n",
            "kgrank.evaluation.metrics (line 1) imports kgrank.studies.a",
        ),
        (
            "kgrank.evaluation.metrics",
            "def f():\n    from kgrank.studies.a import plots\n",
            "(line 2) imports kgrank.studies.a",
        ),
        ("kgrank.evaluation.metrics", "from ..studies import b\n", "imports kgrank.studies.b"),
        ("kgrank.evaluation.metrics", "from kgrank import studies\n", "imports kgrank.studies:"),
        (
            "kgrank.evaluation.metrics",
            "import importlib\nimportlib.import_module('kgrank.studies.a')\n",
            "(line 2)",
        ),
        # cli may import the registry, nothing below it
        (
            "kgrank.cli.main",
            "from kgrank.studies.a import add_commands\n",
            "kgrank.cli.main (line 1) imports kgrank.studies.a",
        ),
        (
            "kgrank.cli.main",
            "from kgrank.studies import b\n",
            "kgrank.cli.main (line 1) imports kgrank.studies.b",
        ),
        # a study imports no other study, however the import is spelled
        ("kgrank.studies.a.plots", "from kgrank.studies.b import x\n", "study 'a' imports only the core"),
        ("kgrank.studies.a.plots", "from ...studies import b\n", "imports kgrank.studies.b"),
        ("kgrank.studies.a.plots", "from ..b import x\n", "imports kgrank.studies.b"),
        (
            "kgrank.studies.b",
            "def f():\n    import kgrank.studies.a.plots\n",
            "imports kgrank.studies.a.plots",
        ),
        ("kgrank.studies.b", "import kgrank.studies\n", "kgrank.studies.b (line 1) imports kgrank.studies:"),
        # the registry names no study
        ("kgrank.studies", "from . import a\n", "the registry must not name a study"),
    ],
)
def test_the_checker_catches_a_violation(module, source, expected):
    sources = dict(CLEAN)
    key = next(name for name in sources if name.rstrip("/") == module)
    sources[key] = source
    found = violations(_synthetic(sources))
    assert found, f"no violation found in {module}: {source!r}"
    assert all(line.startswith(f"{module} (line ") for line in found), found
    assert any(expected in line for line in found), found


def test_the_checker_reads_a_tree_from_disk(tmp_path):
    sources = {**CLEAN, "kgrank.studies.b": "def f():\n    from kgrank.studies.a import plots\n"}
    for name, source in sources.items():
        parts = name.rstrip("/").split(".")
        path = (
            tmp_path.joinpath(*parts, "__init__.py")
            if name.endswith("/")
            else tmp_path.joinpath(*parts[:-1], parts[-1] + ".py")
        )
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source)
    modules = collect_modules(tmp_path)
    assert set(modules) == {name.rstrip("/") for name in CLEAN}
    assert modules["kgrank.studies.a"].is_package and not modules["kgrank.studies.b"].is_package
    rule = "study 'b' imports only the core and itself"
    assert set(violations(modules)) == {
        f"kgrank.studies.b (line 2) imports kgrank.studies.a: {rule}",
        f"kgrank.studies.b (line 2) imports kgrank.studies.a.plots: {rule}",
    }


# --- no core module and no shared rule file names a study --------------------------
# What the core needs of a study (the parts a system from outside joins, what a scoring
# pass costs, which scorecard sources a run writes) it gets through the study's hooks: its
# settings module's EXTERNAL_PARTS, read by the registry, and the hooks its rule file fills
# in common.smk. Core strings equal to a study's name for another reason, with the reason:
NOT_A_STUDY = {
    ("kgrank.plotting", "paper"): "seaborn's plotting context",
    ("kgrank.scorecard.card", "paper"): "the claims' column that names the publication",
}


def _docstrings(tree: ast.AST) -> set[int]:
    kinds = (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
    }


def study_names_in_core(modules: dict[str, Module], studies: list[str]) -> list[str]:
    """Every string of a core module (docstrings aside) that is a study's name, a path in
    its results folder or its config section (``studies.<name>``)."""
    found = []
    for module in modules.values():
        if _under_registry(module.name):
            continue
        tree = ast.parse(module.source)
        docstrings = _docstrings(tree)
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Constant) and isinstance(node.value, str)) or id(node) in docstrings:
                continue
            for study in studies:
                named = (
                    node.value == study
                    or node.value.startswith(f"{study}/")
                    or f"studies.{study}" in node.value
                )
                if named and (module.name, node.value) not in NOT_A_STUDY:
                    found.append(
                        f"{module.name} (line {node.lineno}) names the study {study!r}: {node.value!r}"
                    )
    return found


def study_names_in_shared_rules(paths: list[Path], studies: list[str]) -> list[str]:
    """Every line of the Snakefile and the stage rule files that names a study: its name
    quoted, or a global with its prefix (IR_..., PAPER_...)."""
    names = "|".join(studies)
    pattern = re.compile(rf"""["']({names})["']|\b({names.upper()})_[A-Z_]+\b""")
    return [
        f"{path.name}:{number}: {line.strip()}"
        for path in paths
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line) and not line.lstrip().startswith("#")
    ]


def _shared_rule_files() -> list[Path]:
    return [REPO / "Snakefile", *sorted((REPO / "workflow" / "rules").glob("*.smk"))]


def test_no_core_module_and_no_shared_rule_file_names_a_study():
    from kgrank.studies import study_names

    studies = study_names()
    assert study_names_in_core(collect_modules(SRC), studies) == []
    assert study_names_in_shared_rules(_shared_rule_files(), studies) == []


def test_the_study_name_finders_find_a_name(tmp_path):
    modules = {
        "kgrank.evaluation.metrics": Module(
            "kgrank.evaluation.metrics", '"""paper"""\nPARTS = {("paper", "x"): None}\n', False
        ),
        "kgrank.workflow.config": Module("kgrank.workflow.config", 'KEY = "key studies.ir.dataset"\n', False),
        "kgrank.plotting": Module("kgrank.plotting", 'CONTEXT = "paper"\n', False),
        "kgrank.studies.ir.settings": Module("kgrank.studies.ir.settings", 'NAME = "ir"\n', False),
    }
    assert study_names_in_core(modules, ["paper", "ir"]) == [
        "kgrank.evaluation.metrics (line 2) names the study 'paper': 'paper'",
        "kgrank.workflow.config (line 1) names the study 'ir': 'key studies.ir.dataset'",
    ]
    rules = tmp_path / "common.smk"
    rules.write_text('# enabled("ir") in a comment\nif enabled("ir"):\n    x = IR_SETTINGS["run_depth"]\n')
    assert study_names_in_shared_rules([rules], ["paper", "ir"]) == [
        'common.smk:2: if enabled("ir"):',
        'common.smk:3: x = IR_SETTINGS["run_depth"]',
    ]


# --- the registry, the workflow and the schemas agree on the studies ------------------


def _studies_on_disk() -> list[str]:
    folder = SRC / PACKAGE / "studies"
    packages = [path.name for path in folder.iterdir() if (path / "__init__.py").is_file()]
    modules = [path.stem for path in folder.glob("*.py") if path.name != "__init__.py"]
    return sorted(name for name in packages + modules if not name.startswith("_"))


def test_the_registry_lists_every_study():
    from kgrank.studies import load_studies, study_names

    on_disk = _studies_on_disk()
    assert {"paper", "moments"} <= set(on_disk)
    assert study_names() == on_disk
    loaded = load_studies()
    assert [module.__name__ for module in loaded] == [f"{REGISTRY}.{name}.commands" for name in on_disk]
    for module in loaded:
        assert callable(getattr(module, "add_commands", None)), f"{module.__name__} has no add_commands"


def _commands_of(add_commands) -> set[str]:
    parser = argparse.ArgumentParser(prog="kgrank")
    commands = parser.add_subparsers(dest="command")
    add_commands(commands)
    return set(commands.choices)


def _parser_commands(parser: argparse.ArgumentParser) -> set[str]:
    (action,) = (action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    return set(action.choices)


def test_each_study_adds_its_own_commands(monkeypatch):
    import kgrank.cli.main
    from kgrank.studies import study_names

    every = _parser_commands(kgrank.cli.main.build_parser())
    monkeypatch.setattr(kgrank.cli.main, "load_studies", list)
    core = _parser_commands(kgrank.cli.main.build_parser())
    assert core and core < every
    seen = dict.fromkeys(core, "the core")
    for name in study_names():
        added = _commands_of(importlib.import_module(f"{REGISTRY}.{name}.commands").add_commands)
        assert added, f"study {name!r} adds no command"
        for command in added:
            assert command.startswith(f"{name}-"), f"study {name!r}'s command {command!r} lacks its prefix"
            assert command not in seen, f"{command!r} added by both {seen[command]} and study {name!r}"
            seen[command] = f"study {name!r}"
    assert set(seen) == every


def _included_study_rules() -> list[str]:
    snakefile = (REPO / "Snakefile").read_text(encoding="utf-8")
    pattern = r'^[ \t]*include:\s*"workflow/rules/studies/([^"/]+)\.smk"'
    return re.findall(pattern, snakefile, flags=re.MULTILINE)


def test_every_study_has_rules_and_a_schema_fragment():
    from kgrank.studies import study_names
    from kgrank.workflow.config import study_schemas

    studies = study_names()
    included = _included_study_rules()
    assert len(included) == len(set(included)), f"a study's rules are included twice: {included}"
    assert sorted(included) == studies, (
        "the Snakefile includes workflow/rules/studies/<study>.smk once per study"
    )
    rule_files = sorted(path.stem for path in (REPO / "workflow/rules/studies").glob("*.smk"))
    assert rule_files == studies
    assert sorted(study_schemas(REPO / "src/kgrank/schemas/studies")) == studies
    for name in studies:
        assert (REPO / f"workflow/rules/studies/{name}.smk").is_file()
        assert (REPO / f"src/kgrank/schemas/studies/{name}.schema.yaml").is_file()


# --- every study has the same shape ---------------------------------------------------

# What a rule file may not pull in at Snakemake's parse through a study's settings.
HEAVY_MODULES = ("torch", "pykeen", "pandas", "scipy", "matplotlib", "statsmodels")


def _docstring_only(path: Path) -> bool:
    body = ast.parse(path.read_text(encoding="utf-8")).body
    return (
        len(body) == 1
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    )


def test_every_study_is_a_package_of_the_same_shape():
    from kgrank.studies import study_names

    for name in study_names():
        folder = SRC / PACKAGE / "studies" / name
        assert folder.is_dir(), f"study {name!r} is a module, not a package"
        assert _docstring_only(folder / "__init__.py"), f"{name}/__init__.py holds more than its docstring"
        for required in ("commands.py", "settings.py"):
            assert (folder / required).is_file(), f"study {name!r} has no {required}"
        commands = ast.parse((folder / "commands.py").read_text(encoding="utf-8"))
        assert any(
            isinstance(node, ast.FunctionDef) and node.name == "add_commands" for node in commands.body
        ), f"{name}/commands.py defines no add_commands"
        # argparse belongs to commands.py alone
        for path in folder.glob("*.py"):
            if path.name != "commands.py":
                assert "add_parser(" not in path.read_text(encoding="utf-8"), f"{path} builds commands"


def test_study_settings_import_nothing_heavy():
    """A rule file imports its study's settings at every Snakemake parse (dry runs, cluster
    jobs): they must not load torch, pandas or scipy."""
    import subprocess
    import sys

    from kgrank.studies import study_names

    script = (
        "import sys\n"
        + "".join(f"import kgrank.studies.{name}.settings\n" for name in study_names())
        + f"print(' '.join(m for m in {HEAVY_MODULES!r} if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split() == []


def test_the_parser_imports_no_computing_stack():
    """Every `kgrank` call (one per job of the DAG) builds the whole parser: its defaults
    and choices come from light modules (kgrank.defaults, each study's settings), so that
    a call imports torch, pandas, scipy.stats, statsmodels or matplotlib only if its
    command computes with them."""
    import subprocess
    import sys

    script = (
        "import sys\nfrom kgrank.cli.main import build_parser\nbuild_parser()\n"
        "print(' '.join(m for m in ('torch', 'pykeen', 'pandas', 'scipy.stats', 'statsmodels', 'matplotlib')"
        " if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.split() == []


# Modules of steps that read tables and write tables or figures; the rank engine (torch,
# PyKEEN) is for the steps that score or train (1.2-2.5 s of imports a job).
TORCH_FREE_MODULES = (
    "kgrank.engine.candidates",
    "kgrank.evaluation.groups",
    "kgrank.engine.ties",
    "kgrank.studies.ambiguity.inputs",
    "kgrank.studies.ambiguity.drift",
    "kgrank.studies.ambiguity.figures",
    "kgrank.studies.protocols.ties",
    "kgrank.studies.openworld.consistency",
)


def _loaded_by_importing(modules: tuple[str, ...], watched: tuple[str, ...]) -> list[str]:
    """Which of ``watched`` a fresh interpreter holds after importing ``modules``."""
    import subprocess
    import sys

    script = (
        "import importlib, sys\n"
        f"for name in {modules!r}: importlib.import_module(name)\n"
        f"print(' '.join(m for m in {watched!r} if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return result.stdout.split()


def test_table_steps_import_no_torch():
    assert _loaded_by_importing(TORCH_FREE_MODULES, ("torch", "pykeen")) == []


# Modules of table steps that seed, sum and sort but neither test nor resample: scipy.stats
# and statsmodels (about 1 s of imports a job) come with the functions that do.
STATS_FREE_MODULES = (
    "kgrank.evaluation.metrics",
    "kgrank.evaluation.moments",
    "kgrank.evaluation.stats",
    "kgrank.evaluation.groups",
    "kgrank.studies.paper.tables",
    "kgrank.studies.moments.errata",
    "kgrank.studies.moments.montecarlo",
    "kgrank.studies.protocols.weighted",
    "kgrank.studies.protocols.sampled",
    "kgrank.studies.ir.stability",
)


def test_table_steps_import_no_scipy_stats():
    assert _loaded_by_importing(STATS_FREE_MODULES, ("scipy.stats", "statsmodels")) == []


def _top_level_names(source: str) -> list[str]:
    """Names a Snakemake file defines at its top level: rules, assignments, imports, defs."""
    names = re.findall(r"^(?:rule|checkpoint)\s+(\w+)\s*:", source, flags=re.MULTILINE)
    names += re.findall(r"^use rule .* as (\w+)", source, flags=re.MULTILINE)
    names += re.findall(r"^def\s+(\w+)", source, flags=re.MULTILINE)
    names += re.findall(r"^([A-Za-z_]\w*)\s*(?:\+|-)?=", source, flags=re.MULTILINE)
    names += re.findall(r"^import\s+[\w.]+\s+as\s+(\w+)", source, flags=re.MULTILINE)
    names += [
        name.strip().split(" as ")[-1].strip()
        for imported in re.findall(r"^from\s+\S+\s+import\s+\(?([^)\n]+)", source, flags=re.MULTILINE)
        for name in imported.split(",")
        if name.strip()
    ]
    return names


def test_top_level_names_reader_finds_them():
    source = (
        "import kgrank.x as ir_x\nfrom a import b, c as d\nIR = 1\nTARGETS += []\n"
        "rule ir_queries:\n    input: 'x'\nuse rule ir_queries as ir_more with:\n"
    )
    assert _top_level_names(source) == ["ir_queries", "ir_more", "IR", "TARGETS", "ir_x", "b", "d"]


def test_study_rule_files_follow_one_convention():
    """Each study's rule file defines only names with its study's prefix (nothing it
    defines can shadow common.smk or another study), declares localrules, and takes every
    log and benchmark path from common.smk's providers, under its study's folder."""
    from kgrank.studies import study_names

    for name in study_names():
        source = (REPO / f"workflow/rules/studies/{name}.smk").read_text(encoding="utf-8")
        for defined in _top_level_names(source):
            if defined == "TARGETS":
                continue  # the one shared list a study extends
            assert defined.lower() == name or defined.lower().startswith(f"{name}_"), (
                f"{name}.smk defines {defined!r}: a study's rule file names things {name}_..."
            )
        assert re.search(r"^localrules:", source, flags=re.MULTILINE), f"{name}.smk declares no localrules"
        assert "/logs/" not in source and "/benchmarks/" not in source, f"{name}.smk writes a log by hand"
        for directive in ("log", "benchmark"):
            values = re.findall(rf"^\s+{directive}:\n\s+(.+)$", source, flags=re.MULTILINE)
            assert values, f"{name}.smk has no {directive}"
            for value in values:
                assert value.startswith(f'{directive}_file("{name}", '), (
                    f'{name}.smk: {directive}: {value} is not {directive}_file("{name}", ...)'
                )


# --- one statistics layer ----------------------------------------------------------------

# The calls that only kgrank.evaluation.stats makes (and the core modules that seed their own
# documented streams: the rank engine's tie breaking, the moments' sampler).
STATISTICS_CALLS = (
    *("multipletests(", "kendalltau(", "ttest_rel(", "wilcoxon(", "bootstrap("),
    *("default_rng(", "SeedSequence("),
)
OWN_STREAMS = {"evaluation/stats.py", "engine/ranks.py", "evaluation/moments.py"}


def test_statistics_have_one_home():
    found = []
    for path in sorted((SRC / PACKAGE).rglob("*.py")):
        if path.relative_to(SRC / PACKAGE).as_posix() in OWN_STREAMS:
            continue
        text = path.read_text(encoding="utf-8")
        found += [f"{path.relative_to(SRC)}: {call}" for call in STATISTICS_CALLS if call in text]
    assert found == [], "statistics outside kgrank.evaluation.stats: " + "; ".join(found)


# --- the import graph ---------------------------------------------------------------------

# Deferred imports (inside a function) that close a circle, each with why it stays: none.
KNOWN_DEFERRED_CIRCLES: set[frozenset[str]] = set()


def _runtime_imports(module: Module, known: set[str], *, at_import: bool) -> set[str]:
    """The modules of ``known`` that ``module`` imports when it runs: when it is imported
    (``at_import``: module and class bodies), or ever (function bodies too); never in an
    ``if TYPE_CHECKING:`` block."""
    found: set[str] = set()

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                visit(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = _resolve_relative(module, node.level, node.module) if node.level else node.module
                found.update([base, *(f"{base}.{alias.name}" for alias in node.names)])
            if at_import and isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    visit([child])
                elif isinstance(child, ast.excepthandler):
                    visit(child.body)

    visit(ast.parse(module.source).body)
    return {name for name in found if name in known} - {module.name}


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every circle a depth-first walk of ``graph`` (module -> modules it imports) closes."""
    state: dict[str, int] = {}
    found: list[list[str]] = []

    def walk(name: str, path: list[str]) -> None:
        state[name] = 1
        path.append(name)
        for imported in sorted(graph.get(name, ())):
            if state.get(imported) == 1:
                found.append([*path[path.index(imported) :], imported])
            elif imported not in state:
                walk(imported, path)
        path.pop()
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            walk(name, [])
    return found


def _graph(modules: dict[str, Module], *, at_import: bool) -> dict[str, set[str]]:
    known = set(modules)
    return {name: _runtime_imports(module, known, at_import=at_import) for name, module in modules.items()}


def test_the_import_graph_has_no_circle():
    modules = collect_modules(SRC)
    assert circles(_graph(modules, at_import=True)) == []
    deferred = {frozenset(circle) for circle in circles(_graph(modules, at_import=False))}
    assert deferred <= KNOWN_DEFERRED_CIRCLES, deferred - KNOWN_DEFERRED_CIRCLES


def test_the_circle_finder_finds_a_circle_and_skips_type_checking():
    modules = _synthetic(
        {
            "kgrank/": "",
            "kgrank.a": "from kgrank import b\n",
            "kgrank.b": "def f():\n    from kgrank import c\n",
            "kgrank.c": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from kgrank import d\n"
            "def g():\n    import kgrank.a\n",
            "kgrank.d": "import kgrank.c\n",
        }
    )
    assert circles(_graph(modules, at_import=True)) == []
    found = [set(circle) for circle in circles(_graph(modules, at_import=False))]
    assert found == [{"kgrank.a", "kgrank.b", "kgrank.c"}]


# --- the layout the architecture page draws -----------------------------------------------


def _drawn_layout() -> dict[str, str]:
    """The text of each folder in docs/architecture.md's tree of ``src/kgrank/`` (``""``
    for the modules at the top), continuation lines joined."""
    page = (REPO / "docs" / "architecture.md").read_text(encoding="utf-8")
    tree = page.split("```\nsrc/kgrank/\n", 1)[1].split("```", 1)[0]
    drawn: dict[str, str] = {}
    folder = None
    for line in tree.splitlines():
        entry = re.match(r"^  (\w+)/", line)
        if entry:
            folder = entry.group(1)
            drawn[folder] = line
        elif re.match(r"^  \w+\.py", line):
            folder = ""
            drawn[folder] = line
        elif folder is not None:
            drawn[folder] += line
    return drawn


def test_the_architecture_page_draws_every_core_module_where_it_lies():
    drawn = _drawn_layout()
    root = SRC / PACKAGE
    top = sorted(path.name for path in root.glob("*.py") if path.name != "__init__.py")
    assert top and all(name in drawn[""] for name in top), (top, drawn[""])
    folders = sorted(path.parent.name for path in root.glob("*/__init__.py"))
    assert set(folders) == set(drawn) - {""}, (folders, sorted(drawn))
    for folder in set(folders) - {"studies", "scorecard"}:
        for module in sorted((root / folder).glob("*.py")):
            if module.name != "__init__.py":
                assert re.search(rf"\b{module.stem}\b", drawn[folder]), f"{folder}/{module.name} not drawn"
