"""The local stack's ready file (local/running.py): a reader sees all of it or nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from local import running
from local.running import read_ready_file, write_ready_file

INFO = {"endpoint": "http://127.0.0.1:8000", "port": 8000, "userId": "usr_developer"}


def test_the_ready_file_is_written_aside_in_the_same_folder_then_renamed_into_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ready = tmp_path / "ready.json"
    renames: list[tuple[Path, Any, bool]] = []
    rename = os.replace

    def watched(source: str, target: str) -> None:
        # At the moment of the rename: where the content is, whether it is whole, and
        # whether a reader could have seen the target before.
        renames.append((Path(source).parent, json.loads(Path(source).read_text()), ready.exists()))
        rename(source, target)

    monkeypatch.setattr(running.os, "replace", watched)

    write_ready_file(ready, INFO)

    assert renames == [(tmp_path, INFO, False)]
    assert read_ready_file(ready) == INFO
    assert [p.name for p in tmp_path.iterdir()] == ["ready.json"]


def test_a_failed_write_leaves_neither_a_ready_file_nor_a_temporary_one(tmp_path: Path) -> None:
    with pytest.raises(TypeError):
        write_ready_file(tmp_path / "ready.json", {"not json": object()})

    assert list(tmp_path.iterdir()) == []


def test_no_ready_file_yet_reads_as_none(tmp_path: Path) -> None:
    assert read_ready_file(tmp_path / "ready.json") is None
