"""The studies: each module or package here reproduces one paper's figures and tables.

The rule of the house: a study imports the core (``kgrank.*`` outside this package),
never another study; the core never imports a study. Each study is a package whose
``commands`` module exposes ``add_commands(subparsers)`` for its ``kgrank`` subcommands;
the command line finds the studies here, so no core module names a study.
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType


def study_names() -> list[str]:
    """Every study shipped in this package, by name (its module's name)."""
    return sorted(module.name for module in pkgutil.iter_modules(__path__) if not module.name.startswith("_"))


def load_studies() -> list[ModuleType]:
    """Every study's ``commands`` module, imported; each defines ``add_commands``."""
    return [importlib.import_module(f"{__name__}.{name}.commands") for name in study_names()]
