"""Issue 21, the root of trust: a policy that cannot be removed, loosened or backdated."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from store.agent import authorize
from store.check import check
from tests.factory import mission

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def _approved(tmp_path: Path) -> Path:
    """Mission beta: request r1 approved, unsigned, by anyone; constraints r2 (r1 kept)."""
    root = tmp_path / "state"
    beta = mission(root, "beta")
    beta.request("r1", risk="read_only", tool="ls", args={"path": "/"})
    beta.decision("r1", decided_by="mallory", decided_at=NOW, valid_until=NOW + timedelta(hours=1))
    history = root / "missions/beta/history"
    history.mkdir()
    (history / "constraints.r1.toml").write_text(
        'schema = 1\n[approval]\nrequire_signature = true\nallowed_signers = "signers/allowed"\n'
    )
    return root


def test_a_missing_constraints_toml_authorizes_nothing(tmp_path: Path) -> None:
    root = _approved(tmp_path)
    assert authorize(root, "beta", "r1", NOW + timedelta(minutes=1)).ok  # the policy allows it
    constraints = root / "missions/beta/constraints.toml"
    constraints.rename(constraints.with_name("constraints.toml.away"))
    auth = authorize(root, "beta", "r1", NOW + timedelta(minutes=1))
    assert not auth.ok
    assert "missions/beta/constraints.toml is missing" in auth.reason
    assert "history r1" in auth.reason and "require_signature = true" in auth.reason
    report = check(root)
    found = [p for p in report.all_problems() if p.code == "constraints-missing"]
    assert [p.path for p in found] == ["missions/beta/constraints.toml"]
    assert found[0].severity == "error" and found[0].message == auth.reason
    assert report.missions["beta"].status.value == "needs_you"


def test_an_unreadable_constraints_toml_authorizes_nothing(tmp_path: Path) -> None:
    root = _approved(tmp_path)
    (root / "missions/beta/constraints.toml").write_text("schema = [\n")
    auth = authorize(root, "beta", "r1", NOW + timedelta(minutes=1))
    assert not auth.ok and "constraints.toml does not load" in auth.reason
    assert check(root).missions["beta"].status.value == "needs_you"
