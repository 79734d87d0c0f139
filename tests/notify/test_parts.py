"""The notifier's parts alone: agent text made inert (any text), the sent record's
bounds and a damaged record."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hud.notify import sent
from hud.notify.message import FIELD_CHARS, inert
from hud.notify.sent import SentRecord
from store.format.text import UNSEEN

ACTIVE = ("<", ">", "@", "](", "://", "www.")
"""What would be a tag, a mention or a link in some target's format."""


@given(
    st.text(alphabet=st.characters(), max_size=400)
    | st.lists(
        st.sampled_from(["<", ">", "@", "]", "(", ":", "/", "www.", "\x1b", "\u202e", "x", " "]),
        max_size=60,
    ).map("".join)
)
def test_any_agent_text_comes_out_inert_and_bounded(text: str) -> None:
    shown = inert(text)
    assert len(shown) <= FIELD_CHARS
    assert UNSEEN[False].search(shown) is None  # no control, bidi or invisible character
    for active in ACTIVE:
        assert active not in shown


def test_the_record_keeps_the_newest_keys_of_a_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sent, "MAX_KEYS", 3)
    record = SentRecord(tmp_path / "sent", Path("/state"))
    record.mark("t", ["a", "b"], 1.0)
    record.mark("t", ["c", "d"], 2.0)
    again = SentRecord(tmp_path / "sent", Path("/state"))
    assert list(again.targets["t"]) == ["b", "c", "d"]
    assert SentRecord(tmp_path / "sent", Path("/other")).targets == {}  # one file a directory


def test_a_damaged_record_is_said_and_started_afresh(tmp_path: Path) -> None:
    record = SentRecord(tmp_path, Path("/state"))
    record.path.write_text("{not json")
    damaged = SentRecord(tmp_path, Path("/state"))
    assert damaged.problem is not None and "starting afresh" in damaged.problem
    damaged.mark("t", ["a"], 1.0)
    assert json.loads(record.path.read_text())["targets"] == {"t": {"a": 1.0}}


def test_hud_toml_holds_workspace_targets_without_a_warning(tmp_path: Path) -> None:
    from store.format.load import load_document
    from store.format.records import Settings

    (tmp_path / "hud.toml").write_text(
        'schema = 1\n[[notify]]\nurl = "ntfys://ntfy.example.org/ops"\n'
        'missions = ["deploy-*"]\nrisks = ["irreversible", "escalation"]\n'
        'severities = ["critical"]\n'
    )
    loaded = load_document(tmp_path, "hud.toml", Settings)
    assert loaded.problems == []
    assert loaded.record is not None
    target = loaded.record.notify[0]
    assert (target.url, target.missions, target.risks, target.severities) == (
        "ntfys://ntfy.example.org/ops",
        ["deploy-*"],
        ["irreversible", "escalation"],
        ["critical"],
    )


def test_a_failure_reason_is_scrubbed_of_every_piece_of_the_url() -> None:
    from hud.notify.config import make_target
    from store.format.records import NotifyTarget

    url = "tgram://123456789:AAbotTOKENsecret/4242?token=QUERYsecret#FRAGsecret"
    pieces = make_target(NotifyTarget(url=url), "--to").secrets()
    for secret in ("123456789:AAbotTOKENsecret", "4242", "QUERYsecret", "FRAGsecret"):
        assert secret in pieces
