"""The README's "Evaluate your own model" examples, run exactly as printed: each bash
block in a fresh folder where `.venv` is this test's environment, the Python block with
this interpreter."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

SECTION = "## Evaluate your own model"


def _blocks() -> list[tuple[str, str]]:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    start = readme.index(SECTION)
    end = readme.index("\n## ", start + len(SECTION))
    return re.findall(r"```(bash|python)\n(.*?)```", readme[start:end], flags=re.DOTALL)


def test_the_section_has_the_three_examples():
    blocks = _blocks()
    commands = "\n".join(code for language, code in blocks if language == "bash")
    assert "kgrank evaluate --dataset nations --model " in commands
    assert "kgrank evaluate --dataset nations --ranks " in commands
    assert "kgrank compare --dataset nations" in commands and "--dataset kinships" in commands
    assert [language for language, _ in blocks].count("python") == 1


@pytest.mark.slow
def test_the_examples_run_as_printed(tmp_path):
    # `.venv/bin/...` in the README is the environment running these tests
    (tmp_path / ".venv").symlink_to(Path(sys.executable).parent.parent)
    environment = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    outputs = []
    for language, code in _blocks():
        command = ["bash", "-e", "-c", code] if language == "bash" else [sys.executable, "-c", code]
        result = subprocess.run(
            command, cwd=tmp_path, env=environment, capture_output=True, text=True, timeout=900, check=False
        )
        assert result.returncode == 0, (code, result.stderr[-2000:])
        outputs.append(result.stdout)
    model, ranks, comparison, python = outputs
    assert model.startswith("pk_distmult on nations: 402 ranks of 201 test triples")
    assert re.search(r"^MRR\s+0\.\d+ \[0\.\d+, 0\.\d+\]", model, flags=re.MULTILINE)
    assert ranks.startswith("ranks on nations: 6 ranks of 3 test triples")
    assert "MRR" in ranks and "Hits@3" in ranks
    for title in ("Pairs", "Systems against random", "Across datasets"):
        assert title in comparison
    assert "MRR (adjusted index)" in python and "adjusted_arithmetic_mean_rank_index" in python
