"""The permissions recipe of docs/approvals.md ("Permissions"), as tried: with the root
folder, policy.toml and signers/ owned by the admin and mission folders writable by the
agent, an agent user cannot remove, rename or loosen the floor or the signers files, and
`authorize()` (run as the agent) still refuses an unsigned approval after the agent
renames or rewrites the mission's constraints.toml. Runs as root (as CI does) with the
agent as uid/gid 65534; skipped when not root."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from store.writers.agent import authorize
from tests.factory import mission

AGENT = 65534
NOW = datetime.now(UTC).replace(microsecond=0)
FLOOR = """schema = 1
[approval]
require_signature = true
allowed_signers = "signers/allowed"
never_auto = ["external_write", "irreversible"]
"""
ALLOWED = "alice ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl\n"

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to act as another uid")


def _agent_acts(root: Path) -> dict[str, object]:
    """What the agent tries (run in the child, as the agent): each outcome by name, and
    what `authorize()` says after it renamed, then rewrote, constraints.toml."""
    tried: dict[str, str] = {}

    def attempt(name: str, act: Callable[[], object]) -> None:
        try:
            act()
            tried[name] = "done"
        except OSError as exc:
            tried[name] = type(exc).__name__

    constraints = root / "missions/beta/constraints.toml"
    attempt("unlink policy.toml", (root / "policy.toml").unlink)
    attempt("rename policy.toml", lambda: (root / "policy.toml").rename(root / "p.bak"))
    attempt("write policy.toml", lambda: (root / "policy.toml").write_text("schema = 1\n"))
    attempt("create beside policy.toml", lambda: (root / "policy.new").write_text("schema = 1\n"))
    attempt("unlink workspace.toml", (root / "workspace.toml").unlink)
    attempt("unlink signers/allowed", (root / "signers/allowed").unlink)
    attempt("rename signers/allowed", lambda: (root / "signers/allowed").rename(root / "s.bak"))
    attempt("write signers/allowed", lambda: (root / "signers/allowed").write_text("* x\n"))
    attempt("create in signers/", lambda: (root / "signers/mine").write_text(""))
    attempt("rename signers/", lambda: (root / "signers").rename(root / "signers.bak"))
    attempt("write handoff.json", lambda: (root / "missions/beta/handoff.json").write_text("{}"))
    attempt("rename constraints.toml", lambda: constraints.rename(constraints.with_name("c.bak")))
    first = authorize(root, "beta", "r1").reason
    loose = "schema = 1\n[approval]\nrequire_signature = false\n"
    attempt("write constraints.toml", lambda: constraints.write_text(loose))
    second = authorize(root, "beta", "r1").reason
    return {"tried": tried, "after rename": first, "after rewrite": second}


@pytest.fixture
def layout() -> Iterator[Path]:
    """The recipe: root, policy.toml, workspace.toml, signers/ and missions/ owned by the
    admin (root) and not writable by others; missions/beta/ owned by the agent."""
    top = Path(tempfile.mkdtemp(prefix="hud-perms-", dir="/tmp"))
    os.chmod(top, 0o755)
    root = top / "state"
    try:
        beta = mission(root, "beta")
        beta.constraints(approval={"require_signature": True, "allowed_signers": "signers/allowed"})
        beta.request("r1", risk="read_only", tool="ls", args={"path": "/"})
        beta.decision(
            "r1", decided_by="mallory", decided_at=NOW, valid_until=NOW + timedelta(minutes=30)
        )
        (root / "policy.toml").write_text(FLOOR)
        (root / "workspace.toml").write_text(
            'schema = 1\nid = "0b5e4f8e-3a47-4c1e-9a51-2f1c8f9c1a11"\n'
        )
        (root / "signers").mkdir()
        (root / "signers/allowed").write_text(ALLOWED)
        for path in (root, root / "signers", root / "missions"):
            os.chmod(path, 0o755)
        for path in (root / "policy.toml", root / "workspace.toml", root / "signers/allowed"):
            os.chmod(path, 0o644)
        for folder, _, names in os.walk(root / "missions/beta"):
            os.chown(folder, AGENT, AGENT)
            for name in names:
                os.chown(os.path.join(folder, name), AGENT, AGENT)
        yield root
    finally:
        shutil.rmtree(top)


def _as_agent(root: Path) -> dict[str, object]:
    """`_agent_acts` in a child process running as uid/gid 65534 (its answer as JSON)."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(read)
            os.setgroups([])
            os.setgid(AGENT)
            os.setuid(AGENT)
            os.write(write, json.dumps(_agent_acts(root)).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as answer:
        data = answer.read()
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0, data
    result: dict[str, object] = json.loads(data)
    return result


def test_an_agent_cannot_reach_the_floor_and_authorize_still_refuses(layout: Path) -> None:
    assert not authorize(layout, "beta", "r1").ok  # unsigned, and the floor requires it
    found = _as_agent(layout)
    tried = found["tried"]
    assert isinstance(tried, dict)
    for name, outcome in tried.items():
        if name in ("write handoff.json", "rename constraints.toml", "write constraints.toml"):
            assert outcome == "done", name  # the mission folder is the agent's
        else:
            assert outcome == "PermissionError", name
    assert (layout / "policy.toml").read_text() == FLOOR
    assert (layout / "signers/allowed").read_text() == ALLOWED
    assert "constraints.toml is missing" in str(found["after rename"])
    assert "requires signatures" in str(found["after rewrite"])


def test_the_sticky_bit_keeps_the_admins_constraints_in_place(layout: Path) -> None:
    """missions/beta/ owned by the admin, group-writable by the agent, sticky (1775):
    the agent writes its own files there but cannot rename or remove constraints.toml."""
    folder = layout / "missions/beta"
    os.chown(folder, 0, AGENT)
    os.chmod(folder, 0o1775)
    os.chown(folder / "constraints.toml", 0, 0)
    os.chmod(folder / "constraints.toml", 0o644)
    tried = _as_agent(layout)["tried"]
    assert isinstance(tried, dict)
    assert tried["write handoff.json"] == "done"
    assert tried["rename constraints.toml"] == "PermissionError"
    assert tried["write constraints.toml"] == "PermissionError"
