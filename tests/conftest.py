from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture(scope="session")
def nations_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Nations prepared once per test session (it ships inside the pykeen wheel)."""
    from kgrank.datasets import prepare_dataset

    out_dir = tmp_path_factory.mktemp("data") / "nations"
    prepare_dataset("nations", {"source": "pykeen"}, out_dir)
    return out_dir


@pytest.fixture(scope="session")
def kinships_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Kinships prepared once per test session (it ships inside the pykeen wheel too)."""
    from kgrank.datasets import prepare_dataset

    out_dir = tmp_path_factory.mktemp("data") / "kinships"
    prepare_dataset("kinships", {"source": "pykeen"}, out_dir)
    return out_dir


def markdown_row(markdown: str, label: str) -> list[str]:
    """The cells of the first Markdown table row that mentions ``label``."""
    line = next(line for line in markdown.splitlines() if label in line)
    return [cell.strip() for cell in line.strip("|").split("|")]
