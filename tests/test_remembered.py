"""kgrank.workflow.remembered: parse-time answers from PyKEEN kept between processes, refusals never."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO

from kgrank.errors import KgrankInputError
from kgrank.workflow import remembered as module
from kgrank.workflow.remembered import ENVIRONMENT_VARIABLE, OFF, remembered


@pytest.fixture
def folder(tmp_path, monkeypatch) -> Path:
    folder = tmp_path / "answers"
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, str(folder))
    return folder


class Counted:
    """An answer that counts how often it was asked."""

    def __init__(self, value):
        self.value, self.calls = value, 0

    def __call__(self):
        self.calls += 1
        return self.value


def test_an_answer_is_asked_once_per_question_and_details(folder):
    answer = Counted({"entities": 14, "names": ["a", "b"]})
    assert remembered("sizes", "nations", answer) == answer.value
    assert remembered("sizes", "nations", answer) == answer.value
    assert answer.calls == 1
    assert len(list(folder.glob("*.json"))) == 1
    remembered("sizes", "kinships", answer)
    remembered("other question", "nations", answer)
    assert answer.calls == 3


def test_a_refusal_is_never_kept(folder):
    calls = []

    def refuse():
        calls.append(1)
        raise KgrankInputError("no such dataset")

    for _ in range(2):
        with pytest.raises(KgrankInputError, match="no such dataset"):
            remembered("has dataset", "nation", refuse)
    assert len(calls) == 2
    assert not folder.exists() or not list(folder.iterdir())


def test_off_keeps_nothing(tmp_path, monkeypatch):
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, OFF)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    answer = Counted(True)
    remembered("q", 1, answer)
    remembered("q", 1, answer)
    assert answer.calls == 2
    assert list(tmp_path.iterdir()) == []


def test_the_default_folder_is_under_the_users_cache(tmp_path, monkeypatch):
    monkeypatch.delenv(ENVIRONMENT_VARIABLE, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    remembered("q", 1, Counted(True))
    assert len(list((tmp_path / "kgrank" / "answers").glob("*.json"))) == 1


def test_only_answers_that_json_gives_back_equal_are_kept(folder):
    pair = Counted((1, 2))  # JSON would give back a list
    assert remembered("q", "tuple", pair) == (1, 2)
    assert remembered("q", "tuple", pair) == (1, 2)
    assert pair.calls == 2
    numbers = Counted([0.1, 1e-300, None, "x"])
    remembered("q", "list", numbers)
    assert remembered("q", "list", numbers) == [0.1, 1e-300, None, "x"]
    assert numbers.calls == 1


def test_an_answer_that_json_cannot_write_is_given_and_not_kept(folder):
    answer = Counted({1, 2})
    assert remembered("q", "set", answer) == {1, 2}
    assert remembered("q", "set", answer) == {1, 2}
    assert answer.calls == 2
    assert not folder.exists() or not list(folder.glob("*.json"))


def test_details_that_are_not_json_are_asked_every_time(folder):
    answer = Counted(True)
    remembered("q", {1, 2}, answer)
    remembered("q", {1, 2}, answer)
    assert answer.calls == 2


def test_a_damaged_file_is_asked_again_and_rewritten(folder):
    answer = Counted(7)
    remembered("q", "d", answer)
    (path,) = folder.glob("*.json")
    path.write_text('{"key": ', encoding="utf-8")  # cut short
    assert remembered("q", "d", answer) == 7
    assert answer.calls == 2
    assert json.loads(path.read_text(encoding="utf-8"))["answer"] == 7


def test_a_change_of_code_or_versions_asks_again(folder, monkeypatch):
    answer = Counted(True)
    remembered("q", "d", answer)
    monkeypatch.setattr(module, "_code_version", lambda: "another kgrank, PyKEEN or torch")
    remembered("q", "d", answer)
    assert answer.calls == 2


def test_a_folder_that_cannot_be_written_still_gives_the_answer(tmp_path, monkeypatch):
    blocked = tmp_path / "a file"
    blocked.write_text("")
    monkeypatch.setenv(ENVIRONMENT_VARIABLE, str(blocked / "answers"))
    answer = Counted(5)
    assert remembered("q", "d", answer) == 5
    assert remembered("q", "d", answer) == 5
    assert answer.calls == 2


CHECKS = """
import sys
from pathlib import Path
from kgrank.workflow.config import check_datasets, known_entity_count
from kgrank.training.hyperparameters import load_hyperparameters
check_datasets({"nations": {"source": "pykeen"}})
print(known_entity_count("nations", {"source": "pykeen"}, Path("absent/stats.json")))
load_hyperparameters(Path(sys.argv[1]) / "config/hyperparameters/nations/transe.yaml")
print("pykeen" in sys.modules)
"""


def _checks(folder: Path) -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", CHECKS, str(REPO)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, ENVIRONMENT_VARIABLE: str(folder)},
    )
    return result.stdout.split()


def test_the_second_process_asks_pykeen_nothing(tmp_path):
    """The parse-time checks of a dataset and a hyperparameter file: the first process
    imports PyKEEN, a second with the same answers folder does not, and says the same."""
    folder = tmp_path / "answers"
    assert _checks(folder) == ["14", "True"]
    assert len(list(folder.glob("*.json"))) == 3
    assert _checks(folder) == ["14", "False"]


def test_refusals_still_come_with_every_answer_kept(folder):
    from kgrank.training.hyperparameters import load_hyperparameters, validate_hyperparameters
    from kgrank.workflow.config import check_datasets

    check_datasets({"nations": {"source": "pykeen"}})
    with pytest.raises(KgrankInputError, match="PyKEEN has no dataset 'nation'; did you mean nations"):
        check_datasets({"nation": {"source": "pykeen"}})
    data = load_hyperparameters(REPO / "config/hyperparameters/nations/transe.yaml")
    misspelt = {**data, "pipeline": {**data["pipeline"], "model_kwargs": {"embeding_dim": 8}}}
    for _ in range(2):
        with pytest.raises(KgrankInputError, match="TransE takes no argument 'embeding_dim'"):
            validate_hyperparameters(misspelt, "transe.yaml")
