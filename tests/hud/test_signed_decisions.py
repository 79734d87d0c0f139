"""Signed decisions from the HUD and `hud decide`: signed with a key file or through
ssh-agent, verified by `ssh-keygen -Y verify` on `--print-payload`, shown on the request
screen, reported by `hud check`."""

from __future__ import annotations

import asyncio
import json
import tomllib
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from cli.main import main
from hud.app import HudApp
from store.index.approval_checks import review
from store.index.workspace import Workspace
from store.trust.sshsig import load_signer
from store.writers.agent import authorize
from tests.factory import mission, resume
from tests.hud.conftest import until
from tests.hud.test_approvals import open_request, shown
from tests.signing_support import allowed_line, keygen, ssh_agent, ssh_verify
from widgets.request_view import earlier_text


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keys")
    return {kind: keygen(folder, kind, kind) for kind in ("ed25519", "ecdsa", "other")}


def signed_state(tmp_path: Path, keys: dict[str, Path], required: bool = True) -> Path:
    """beta/r1 (read_only) in a mission that requires signatures; signers/allowed lists
    the ed25519 and ecdsa keys for any approver (`*`)."""
    root = tmp_path / "state"
    beta = mission(root, "beta")
    beta.request("r1", risk="read_only", tool="ls", args={"path": "/"})
    approval = {"require_signature": required, "allowed_signers": "signers/allowed"}
    beta.constraints(approval=approval)
    (root / "signers").mkdir()
    lines = allowed_line("*", keys["ed25519"]) + allowed_line("*", keys["ecdsa"])
    (root / "signers/allowed").write_text(lines)
    return root


def decision_file(root: Path) -> Path:
    return root / "missions/beta/approvals/r1.toml"


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa"])
def test_hud_decide_signs_and_ssh_keygen_verifies(
    tmp_path: Path,
    keys: dict[str, Path],
    kind: str,
    capfdbinary: pytest.CaptureFixture[bytes],
) -> None:
    root = signed_state(tmp_path, keys)
    assert main(["decide", str(root), "beta", "r1", "approve", "--sign-key", str(keys[kind])]) == 0
    assert b"signed by SHA256:" in capfdbinary.readouterr().out
    saved = tomllib.loads(decision_file(root).read_text())
    assert saved["signature"].startswith("-----BEGIN SSH SIGNATURE-----")
    assert authorize(root, "beta", "r1").ok
    assert main(["decide", str(root), "beta", "r1", "--print-payload"]) == 0
    payload = capfdbinary.readouterr().out
    assert payload.startswith(b'{"approver":') and b'"mission":"beta"' in payload
    workspace = tomllib.loads((root / "workspace.toml").read_text())["id"]
    assert payload.endswith(b'"version":2,"workspace":"' + workspace.encode() + b'"}')
    done = ssh_verify(
        root / "signers/allowed", saved["decided_by"], saved["signature"], payload, tmp_path
    )
    assert done.returncode == 0, done.stderr


def test_hud_decide_signs_through_ssh_agent(
    tmp_path: Path, keys: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = signed_state(tmp_path, keys)
    public = keys["ecdsa"].with_name("ecdsa.pub")
    with ssh_agent(tmp_path, keys["ecdsa"]) as sock:
        monkeypatch.setenv("SSH_AUTH_SOCK", sock)
        assert main(["decide", str(root), "beta", "r1", "approve", "--sign-key", str(public)]) == 0
    assert authorize(root, "beta", "r1").ok


def test_hud_decide_signing_fails_writes_nothing(
    tmp_path: Path,
    keys: dict[str, Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root = signed_state(tmp_path, keys)
    monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "no-agent.sock"))
    public = keys["ed25519"].with_name("ed25519.pub")
    assert main(["decide", str(root), "beta", "r1", "approve", "--sign-key", str(public)]) == 1
    assert "not signed, nothing written: ssh-agent could not sign" in capsys.readouterr().err
    assert not decision_file(root).exists()
    assert main(["decide", str(root), "beta", "r1", "approve", "--sign-key", "/nope"]) == 2


def test_hud_check_reports_signatures(
    tmp_path: Path, keys: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root = signed_state(tmp_path, keys)
    argv = ["decide", str(root), "beta", "r1", "approve", "--sign-key", str(keys["other"])]
    assert main(argv) == 0
    assert "warning: signature INVALID: its key is not listed" in capsys.readouterr().err
    assert main(["check", str(root)]) == 1
    out = capsys.readouterr().out
    assert "signature INVALID: its key is not listed in signers/allowed" in out
    assert main(["approvals", str(root), "--json", "--all"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["signature"]["state"] == "invalid" and listed["signature"]["required"]


async def test_the_request_screen_shows_the_signature(
    tmp_path: Path, keys: dict[str, Path], make_app: Callable[..., HudApp]
) -> None:
    root = signed_state(tmp_path, keys)
    app = make_app(root, signer=load_signer(keys["ed25519"].read_bytes()))
    async with app.run_test(size=(100, 40)) as pilot:
        await open_request(pilot, app)
        await pilot.press("y", "enter")
        await until(pilot, lambda: decision_file(root).exists())
        await until(pilot, lambda: "signed, valid:" in shown(app))
        assert "(SHA256:" in shown(app)
    assert authorize(root, "beta", "r1").ok


@pytest.mark.parametrize(
    ("sign", "edit", "expected"),
    [
        (False, False, "unsigned — this mission requires signatures"),
        (True, True, "signature INVALID: the signature does not match the payload"),
        (True, False, "signed, valid: "),
    ],
)
async def test_unsigned_and_invalid_are_shown(
    tmp_path: Path,
    keys: dict[str, Path],
    make_app: Callable[..., HudApp],
    sign: bool,
    edit: bool,
    expected: str,
) -> None:
    root = signed_state(tmp_path, keys)
    argv = ["decide", str(root), "beta", "r1", "approve"]
    argv += ["--sign-key", str(keys["ed25519"])] if sign else []
    assert await asyncio.to_thread(main, argv) == 0
    if edit:
        path = decision_file(root)
        path.write_text(path.read_text().replace('reason = ""', 'reason = "edited"'))
    app = make_app(root)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: app.scanned.is_set())
        await pilot.press("a", "h")
        await until(pilot, lambda: "beta/r1" in app.screen.query_one("QueueTable").keys)  # type: ignore[attr-defined]
        await pilot.press("enter")
        await until(pilot, lambda: expected in shown(app))


def test_hud_sign_key_that_cannot_sign_is_refused_at_start(
    tmp_path: Path, keys: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root = signed_state(tmp_path, keys)
    garbage = tmp_path / "not-a-key"
    garbage.write_text("hello")
    assert main(["--sign-key", str(garbage), str(root)]) == 2
    assert "--sign-key: " in (err := capsys.readouterr().err) and "not an OpenSSH" in err


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        (None, "unsigned — this mission requires signatures"),
        ("other", "signature INVALID: its key is not listed in signers/allowed"),
        ("ecdsa", "signed, valid: "),
    ],
)
def test_earlier_decisions_show_their_signature(
    tmp_path: Path, keys: dict[str, Path], key: str | None, expected: str
) -> None:
    root = signed_state(tmp_path, keys)
    argv = ["decide", str(root), "beta", "r1", "approve"]
    assert main([*argv, *(["--sign-key", str(keys[key])] if key else [])]) in (0, 1)
    resume(root, "beta").request("r2", risk="read_only", tool="ls", args={"path": "/tmp"})
    workspace = Workspace(root)
    workspace.scan()
    checked = review(workspace.missions["beta"], "r2", datetime.now(UTC))
    (earlier,) = checked.earlier
    assert earlier.signature.describe().startswith(expected)
    assert expected in earlier_text(checked, None).plain


def test_signed_where_no_file_vouches_is_a_warning_not_invalid(
    tmp_path: Path, keys: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 22, point 2: signed with --sign-key in a mission that names no allowed-signers
    file, the decision is not "INVALID ... edited after signing": no file vouches for it."""
    root = tmp_path / "state"
    mission(root, "beta").request("r1", risk="read_only", tool="ls", args={"path": "/"})
    argv = ["decide", str(root), "beta", "r1", "approve", "--sign-key", str(keys["ed25519"])]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "warning: signed by a key no file vouches for (SHA256:" in err and "INVALID" not in err
    assert main(["check", str(root)]) == 0  # a warning
    out = capsys.readouterr().out
    assert "signed by a key no file vouches for" in out and "edited after signing" not in out
    assert main(["approvals", str(root), "--json", "--all"]) == 0
    (listed,) = json.loads(capsys.readouterr().out)
    assert listed["signature"]["state"] == "unvouched"


def test_without_a_workspace_id_nothing_is_signed(
    tmp_path: Path, keys: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """A workspace.toml that does not load: a signed decision is refused (it would bind to
    no state directory); an unsigned one is still written."""
    root = signed_state(tmp_path, keys, required=False)
    (root / "workspace.toml").write_text("schema = 1\nid = 'not-a-uuid'\n")
    argv = ["decide", str(root), "beta", "r1", "approve", "--sign-key", str(keys["ed25519"])]
    assert main(argv) == 1
    assert "not signed, nothing written: workspace.toml" in capsys.readouterr().err
    assert not decision_file(root).exists()
    assert main(["decide", str(root), "beta", "r1", "approve"]) == 0
    assert decision_file(root).exists()
