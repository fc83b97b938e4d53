"""scripts/probe_bad_entry_points.py as a test: every damaged input of `kgrank evaluate`,
`kgrank compare` and the Python API (99 cases) is refused in one line that names it, with
exit code 2 (a KgrankInputError from Python) and nothing written; the inputs to keep are
kept with at most one note."""

from __future__ import annotations

import importlib.util
import sys

import pytest
from conftest import REPO


def _probe():
    sys.path.insert(0, str(REPO / "scripts"))
    spec = importlib.util.spec_from_file_location(
        "probe_bad_entry_points", REPO / "scripts" / "probe_bad_entry_points.py"
    )
    module = importlib.util.module_from_spec(spec)
    # its dataclasses look their module up by name
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_every_bad_input_of_the_entry_points_is_refused_in_one_line(tmp_path):
    outcomes = _probe().run_cases(tmp_path)
    assert len(outcomes) >= 95
    not_good = [
        f"{outcome['case']} ({outcome['grade']}): {outcome['detail']}"
        for outcome in outcomes
        if outcome["grade"] != "good"
    ]
    assert not_good == [], "\n".join(not_good)
