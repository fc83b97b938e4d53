"""The studies: each module or package here reproduces one paper's figures and tables.

The rule of the house: a study imports the core (``kgrank.*`` outside this package),
never another study; the core never imports a study. Each study is a package whose
``commands`` module exposes ``add_commands(subparsers)`` for its ``kgrank`` subcommands;
the command line finds the studies here, so no core module names a study.

What a study tells the shared parts of kgrank (its hooks) lives in its light ``settings``
module, read here by name: ``EXTERNAL_PARTS``, which of its parts a system from outside
joins (the external-systems table and the metrics rules read it through
:func:`external_parts`). The workflow's hooks (scheduling estimates, the scorecard's
sources) are filled by each study's rule file (``workflow/rules/common.smk``).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from kgrank.workflow.parts import RESCORES_MODEL

# (study, part, None when the part takes a system from outside, else why it does not)
ExternalPart = tuple[str, str, "str | None"]


def study_names() -> list[str]:
    """Every study shipped in this package, by name (its module's name)."""
    return sorted(module.name for module in pkgutil.iter_modules(__path__) if not module.name.startswith("_"))


def load_studies() -> list[ModuleType]:
    """Every study's ``commands`` module, imported; each defines ``add_commands``."""
    return [importlib.import_module(f"{__name__}.{name}.commands") for name in study_names()]


def study_settings(name: str) -> ModuleType:
    """The light ``settings`` module of the study ``name`` (no torch, no pandas)."""
    if name not in study_names():
        raise ValueError(f"no study {name!r}; the studies are {', '.join(study_names())}")
    return importlib.import_module(f"{__name__}.{name}.settings")


def external_parts(studies: list[str] | None = None) -> list[ExternalPart]:
    """Each study's parts (of ``studies``, by default every study) with whether a system
    from outside joins them, as its ``settings.EXTERNAL_PARTS`` says, in the order given."""
    return [
        (name, part, skipped)
        for name in (study_names() if studies is None else studies)
        for part, skipped in study_settings(name).EXTERNAL_PARTS.items()
    ]


def external_studies() -> list[str]:
    """The studies with at least one part that takes systems from outside."""
    return sorted({name for name, _, skipped in external_parts() if skipped in (None, RESCORES_MODEL)})
