"""The notifier tests' fixtures: a notify.toml and sent record of the test's own, a
state directory with one mission, a local receiver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.factory import mission
from tests.notify.receiver import Receiver
from tests.notify.support import write_config


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "notify.toml"
    monkeypatch.setenv("HUD_NOTIFY_CONFIG", str(path))
    monkeypatch.setenv("HUD_NOTIFY_STATE", str(tmp_path / "sent"))
    write_config(path)
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "state"
    root.mkdir()
    mission(root, "alpha").step("s1", "running")
    return root


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver() as receiver:
        yield receiver
