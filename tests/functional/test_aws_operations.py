"""build/aws-operations.json: each functional run rewrites it, so a stale grant is caught."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.functional import conftest
from tests.functional.aws_operations import Recording, read

GET = ("dynamodb", "GetItem")
SCAN = ("dynamodb", "Scan")  # an operation the code no longer performs


def finish_a_run(
    monkeypatch: pytest.MonkeyPatch, file: Path, recorded: set[tuple[str, ...]], ran: int
) -> None:
    """The functional conftest's end of session, after two collected tests of which `ran` ran."""
    test_file = conftest.FUNCTIONAL_TESTS / "test_x.py"
    items = [SimpleNamespace(nodeid=f"test_x.py::test_{n}", path=test_file) for n in range(2)]
    monkeypatch.setattr(conftest, "OPERATIONS_FILE", file)
    monkeypatch.setattr(conftest, "RECORDING", Recording({"APIHandler": set(recorded)}))
    monkeypatch.setattr(conftest, "_finished", {item.nodeid for item in items[:ran]})
    monkeypatch.setattr(conftest, "_worker", False)  # this test may run in an xdist worker
    monkeypatch.setattr(conftest, "_collected", set())
    conftest.pytest_sessionfinish(SimpleNamespace(items=items), 0)  # type: ignore[arg-type]


def test_an_operation_only_an_earlier_run_recorded_does_not_survive_the_next_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    file = tmp_path / "aws-operations.json"
    Recording({"APIHandler": {GET, SCAN}}).write(file)

    finish_a_run(monkeypatch, file, {GET}, ran=2)

    recording = read(file)
    assert recording.functions == {"APIHandler": {GET}}
    assert recording.complete


def test_a_run_that_stopped_early_marks_its_recording_incomplete(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    file = tmp_path / "aws-operations.json"

    finish_a_run(monkeypatch, file, {GET}, ran=1)

    assert read(file).complete is False


def test_a_session_that_ran_no_functional_test_keeps_the_last_runs_record(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    file = tmp_path / "aws-operations.json"
    Recording({"APIHandler": {GET}}).write(file)
    before = file.read_text()

    finish_a_run(monkeypatch, file, set(), ran=0)

    assert file.read_text() == before


def as_xdist_controller(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, ids: list[str]
) -> Path:
    """The conftest as the controller of an xdist run whose workers collected and finished
    `ids`; returns the file it will write."""
    file = tmp_path / "aws-operations.json"
    monkeypatch.setattr(conftest, "OPERATIONS_FILE", file)
    monkeypatch.setattr(conftest, "RECORDING", Recording())
    monkeypatch.setattr(conftest, "_worker", False)
    monkeypatch.setattr(conftest, "_collected", set())
    monkeypatch.setattr(conftest, "_finished", set(ids))
    conftest.pytest_xdist_node_collection_finished(SimpleNamespace(), ids)
    return file


def test_the_controller_writes_what_every_xdist_worker_recorded(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    ids = ["tests/functional/test_x.py::test_0", "tests/functional/test_y.py::test_0"]
    file = as_xdist_controller(monkeypatch, tmp_path, ids)
    for recorded in ([list(GET)], [list(SCAN)]):
        share = {"complete": True, "functions": {"APIHandler": recorded}}
        worker = SimpleNamespace(workeroutput={conftest.WORKER_OUTPUT: share})
        conftest.pytest_testnodedown(worker, None)

    conftest.pytest_sessionfinish(SimpleNamespace(items=[]), 0)  # type: ignore[arg-type]

    recording = read(file)
    assert recording.functions == {"APIHandler": {GET, SCAN}}
    assert recording.complete


def test_a_worker_that_skipped_tests_makes_the_merged_recording_incomplete(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    file = as_xdist_controller(monkeypatch, tmp_path, ["tests/functional/test_x.py::test_0"])
    share = {"complete": False, "functions": {"APIHandler": [list(GET)]}}
    worker = SimpleNamespace(workeroutput={conftest.WORKER_OUTPUT: share})
    conftest.pytest_testnodedown(worker, None)

    conftest.pytest_sessionfinish(SimpleNamespace(items=[]), 0)  # type: ignore[arg-type]

    assert read(file).complete is False


def test_a_recording_that_does_not_attribute_its_operations_is_refused(tmp_path: Path) -> None:
    file = tmp_path / "aws-operations.json"
    file.write_text(json.dumps([list(GET)]))  # what the first recorder wrote

    with pytest.raises(ValueError, match="which function"):
        read(file)
