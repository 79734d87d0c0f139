"""Signed decisions in the store: what `authorize()` refuses where signatures are required,
the one signature state the HUD and `hud check` show, and the signers files live."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from store.format.records import request_digest
from store.index.check import check
from store.index.workspace import Workspace
from store.trust.signatures import NAMESPACE, payload
from store.trust.sshsig import load_signer
from store.writers.agent import authorize
from store.writers.human import HumanWriter
from tests.factory import mission
from tests.signing_support import allowed_line, keygen, ssh_sign

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
LATER = NOW + timedelta(minutes=5)
APPROVAL = {"allowed_signers": "signers/allowed", "revoked_keys": "signers/revoked"}
WORKSPACE = "0b5e4f8e-3a47-4c1e-9a51-2f1c8f9c1a11"


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keys")
    return {name: keygen(folder, name) for name in ("alice", "other")}


def state(tmp_path: Path, keys: dict[str, Path], required: bool = True, line: str = "") -> Path:
    """Mission beta with request r1; signers/allowed lists alice's key for `alice`."""
    root = tmp_path / "state"
    beta = mission(root, "beta")
    beta.request("r1", risk="read_only", tool="ls", args={"path": "/"})
    beta.constraints(approval={"require_signature": required, **APPROVAL})
    (root / "signers").mkdir()
    (root / "signers/allowed").write_text(line or allowed_line("alice", keys["alice"]))
    (root / "signers/revoked").write_text("# none yet\n")
    (root / "workspace.toml").write_text(f'schema = 1\nid = "{WORKSPACE}"\n')
    return root


def decide(root: Path, key: Path | None, user: str = "alice", reason: str = "fine") -> None:
    """Approve beta/r1 as `user` at NOW, signed with `key` (None: unsigned)."""
    writer = HumanWriter(root, user, "local", clock=lambda: NOW)
    raw = json.loads((root / "missions/beta/approvals/r1.json").read_bytes())
    until = NOW + timedelta(hours=1)
    signature = None
    if key is not None:
        message = payload(
            "beta",
            "r1",
            request_digest(raw),
            "approve",
            reason,
            user,
            NOW,
            until,
            "local",
            WORKSPACE,
        )
        signature = asyncio.run(load_signer(key.read_bytes()).sign(message, NAMESPACE))
    writer.decide("beta", "r1", raw, "approve", reason, until, NOW, signature)


def codes(root: Path) -> dict[str, str]:
    return {p.code: p.message for p in check(root).all_problems()}


def test_valid_signature_authorizes(tmp_path: Path, keys: dict[str, Path]) -> None:
    root = state(tmp_path, keys)
    (root / "signers/revoked").write_text("")  # an empty list revokes nothing
    decide(root, keys["alice"])
    assert authorize(root, "beta", "r1", LATER).ok
    workspace = Workspace(root)
    workspace.scan()
    signed = workspace.missions["beta"].signature("r1")
    assert signed is not None and signed.kind == "valid" and signed.principal == "alice"
    assert signed.describe().startswith("signed, valid: alice (SHA256:")
    assert not {"signature-invalid", "signature-missing"} & set(codes(root))


def test_unsigned_is_refused_where_required(tmp_path: Path, keys: dict[str, Path]) -> None:
    root = state(tmp_path, keys)
    decide(root, None)
    auth = authorize(root, "beta", "r1", LATER)
    assert not auth.ok
    assert auth.reason == "signature: unsigned — this mission requires signatures"
    assert "signature-missing" in codes(root)


def test_unsigned_is_fine_where_not_required(tmp_path: Path, keys: dict[str, Path]) -> None:
    root = state(tmp_path, keys, required=False)
    decide(root, None)
    assert authorize(root, "beta", "r1", LATER).ok
    assert "signature-missing" not in codes(root)


@pytest.mark.parametrize(
    ("signer", "user", "line", "why"),
    [
        ("other", "alice", "", "its key is not listed in signers/allowed"),
        ("alice", "mallory", "", "signers/allowed does not list its key for 'mallory'"),
        ("alice", "alice", 'valid-before="20260201Z"', "the key was valid only before"),
        ("alice", "alice", 'valid-after="20270101Z"', "the key is valid only after"),
        ("alice", "alice", 'namespaces="file"', "does not allow namespace"),
    ],
)
def test_untrusted_signers_are_refused(
    tmp_path: Path, keys: dict[str, Path], signer: str, user: str, line: str, why: str
) -> None:
    root = state(tmp_path, keys, line=allowed_line("alice", keys["alice"], line))
    decide(root, keys[signer], user=user)
    auth = authorize(root, "beta", "r1", LATER)
    assert not auth.ok and why in auth.reason
    assert why in codes(root)["signature-invalid"]


def test_revoked_key_is_refused(tmp_path: Path, keys: dict[str, Path]) -> None:
    root = state(tmp_path, keys)
    (root / "signers/revoked").write_text(keys["alice"].with_name("alice.pub").read_text())
    decide(root, keys["alice"])
    auth = authorize(root, "beta", "r1", LATER)
    assert not auth.ok and "is revoked (signers/revoked)" in auth.reason


@pytest.mark.parametrize(
    ("before", "after"),
    [('reason = "fine"', 'reason = "fine!"'), ('origin = "local"', 'origin = "ssh 10.0.0.9"')],
)
def test_a_field_edited_after_signing(
    tmp_path: Path, keys: dict[str, Path], before: str, after: str
) -> None:
    root = state(tmp_path, keys)
    decide(root, keys["alice"])
    path = root / "missions/beta/approvals/r1.toml"
    path.write_text(path.read_text().replace(before, after))
    auth = authorize(root, "beta", "r1", LATER)
    assert not auth.ok and "does not match the payload" in auth.reason


def test_invalid_signature_is_a_problem_even_when_not_required(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    root = state(tmp_path, keys, required=False)
    decide(root, keys["other"])
    assert authorize(root, "beta", "r1", LATER).ok  # advisory where not required
    report = check(root)
    invalid = [p for p in report.all_problems() if p.code == "signature-invalid"]
    assert invalid and invalid[0].severity == "error"
    assert invalid[0].path == "missions/beta/approvals/r1.toml" and invalid[0].hint


def test_malformed_signature_is_a_problem_not_a_crash(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    root = state(tmp_path, keys)
    decide(root, keys["alice"])
    path = root / "missions/beta/approvals/r1.toml"
    path.write_text(path.read_text().replace("SSHSIG", "XXXXXX").replace("U1NIU0lH", "garbage!"))
    assert "not base64" in codes(root)["signature-invalid"]
    assert not authorize(root, "beta", "r1", LATER).ok


def test_constraints_that_do_not_load_refuse(tmp_path: Path, keys: dict[str, Path]) -> None:
    root = state(tmp_path, keys)
    decide(root, keys["alice"])
    (root / "missions/beta/constraints.toml").write_text("schema = 1\n[approval\n")
    auth = authorize(root, "beta", "r1", LATER)
    assert not auth.ok and "constraints.toml does not load" in auth.reason


def test_require_signature_needs_allowed_signers(tmp_path: Path, keys: dict[str, Path]) -> None:
    root = state(tmp_path, keys)
    beta = mission(root, "beta")
    beta.constraints(approval={"require_signature": True})
    assert "require_signature needs allowed_signers" in str(codes(root))


def test_missing_signers_file(tmp_path: Path, keys: dict[str, Path]) -> None:
    root = state(tmp_path, keys)
    decide(root, keys["alice"])
    (root / "signers/allowed").unlink()
    found = codes(root)
    assert "signers-missing" in found and "does not exist" in found["signature-invalid"]
    assert not authorize(root, "beta", "r1", LATER).ok


def test_signers_files_are_watched(tmp_path: Path, keys: dict[str, Path]) -> None:
    """A changed signers file re-derives the missions whose constraints name it."""
    root = state(tmp_path, keys)
    decide(root, keys["alice"])
    workspace = Workspace(root)
    workspace.scan()
    beta = workspace.missions["beta"]
    assert beta.signature("r1").kind == "valid"  # type: ignore[union-attr]
    assert not [p for p in beta.problems() if p.code.startswith("signature")]
    (root / "signers/revoked").write_text(keys["alice"].with_name("alice.pub").read_text())
    assert workspace.apply(["signers/revoked"]) == {"beta"}
    assert beta.signature("r1").kind == "invalid"  # type: ignore[union-attr]
    assert [p.code for p in beta.problems() if p.code.startswith("signature")] == [
        "signature-invalid"
    ]


def test_the_hud_never_writes_signers_files(tmp_path: Path, keys: dict[str, Path]) -> None:
    from store.writers.human import OwnershipError

    root = state(tmp_path, keys)
    with pytest.raises(OwnershipError, match="signers files are the admin's"):
        HumanWriter(root, "alice", "local").create_document("signers/allowed", {})


def test_the_agents_commit_time_check_refuses_too(tmp_path: Path, keys: dict[str, Path]) -> None:
    """`start_approved_attempt` (what the MCP server's authorize tool runs) records no
    attempt for an unsigned approval where signatures are required."""
    from store.writers.agent import AgentWriter

    root = state(tmp_path, keys)
    decide(root, None)
    writer = AgentWriter(root, "beta", "agent", clock=lambda: LATER)
    auth, started = writer.start_approved_attempt("r1", 1, now=LATER)
    assert not auth.ok and started is None and "requires signatures" in auth.reason


@pytest.mark.parametrize("kind", ["ed25519", "ecdsa"])
def test_a_decision_signed_by_ssh_keygen_verifies(tmp_path: Path, kind: str) -> None:
    """`ssh-keygen -Y sign -n operator-hud-approval@v1` over the payload, as the
    decision's `signature`: valid in the HUD, accepted by authorize()."""
    key = keygen(tmp_path / "keys", kind, kind)
    root = state(tmp_path, {"alice": key})
    raw = json.loads((root / "missions/beta/approvals/r1.json").read_bytes())
    until = NOW + timedelta(hours=1)
    message = payload(
        "beta", "r1", request_digest(raw), "approve", "", "alice", NOW, until, "", WORKSPACE
    )
    signature = ssh_sign(key, message, tmp_path)
    HumanWriter(root, "alice", "", clock=lambda: NOW).decide(
        "beta", "r1", raw, "approve", "", until, NOW, signature
    )
    assert authorize(root, "beta", "r1", LATER).ok
    workspace = Workspace(root)
    workspace.scan()
    assert workspace.missions["beta"].signature("r1").kind == "valid"  # type: ignore[union-attr]


@pytest.mark.parametrize("signers_first", [True, False])
def test_a_scan_in_parts_finds_the_signers(
    tmp_path: Path, keys: dict[str, Path], signers_first: bool
) -> None:
    """The HUD scans in parts (loose files and signers/, then missions in chunks) and
    absorbs each: whichever comes first, the signature is checked against the signers."""
    root = state(tmp_path, keys)
    decide(root, keys["alice"])
    main = Workspace(root)
    paths = list(main.walk())
    signers = [p for p in paths if p.startswith("signers/")]
    parts = [signers, [p for p in paths if p not in signers]]
    touched: set[str] = set()
    for some in parts if signers_first else parts[::-1]:
        part = Workspace(root)
        part.apply(some)
        touched |= main.absorb(part)
    assert "beta" in touched
    assert main.missions["beta"].signature("r1").kind == "valid"  # type: ignore[union-attr]


@pytest.mark.parametrize("path", ["../etc/passwd", "signers/../x", "/etc/passwd", "keys/a"])
def test_signers_paths_stay_in_signers(tmp_path: Path, keys: dict[str, Path], path: str) -> None:
    root = state(tmp_path, keys)
    mission(root, "beta").constraints(approval={"allowed_signers": path})
    assert "approval.allowed_signers" in str(codes(root))


def test_an_unsigned_approval_already_used_is_a_warning(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    """Signatures required after an unsigned approval ran: a warning, not needs-you."""
    root = state(tmp_path, keys, required=False)
    decide(root, None)
    from store.writers.agent import AgentWriter

    AgentWriter(root, "beta", "agent", clock=lambda: LATER).start_approved_attempt(
        "r1", 1, now=LATER
    )
    mission(root, "beta").constraints(approval={"require_signature": True, **APPROVAL})
    (missing,) = [p for p in check(root).all_problems() if p.code == "signature-missing"]
    assert missing.severity == "warn" and "an attempt used it" in missing.message
