"""Issue 21, the root of trust: a policy that cannot be removed, loosened or backdated."""

from __future__ import annotations

import asyncio
import hashlib
import json
import tomllib
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from store.format.records import Constraints, WorkspacePolicy, request_digest
from store.index.check import check
from store.index.workspace import Workspace
from store.trust.policy import POLICY_NAMESPACE, effective_policy, policy_payload
from store.trust.signatures import NAMESPACE, payload
from store.trust.sshsig import load_signer
from store.writers.agent import authorize
from store.writers.human import HumanWriter, Invalid, OwnershipError
from tests.factory import mission
from tests.signing_support import allowed_line, keygen, ssh_sign

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


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


# ---- time binds ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keys")
    return {name: keygen(folder, name) for name in ("alice", "bob")}


def _signed_state(
    tmp_path: Path, keys: dict[str, Path], line: str = "", valid_for: int = 3600
) -> Path:
    """Mission beta (signatures required), request r1 asked at 2019-12-30."""
    root = tmp_path / "state"
    beta = mission(root, "beta")
    asked = datetime(2019, 12, 30, tzinfo=UTC).isoformat()
    beta.request("r1", risk="read_only", tool="ls", args={"path": "/"}, requested_at=asked)
    approval = {"require_signature": True, "allowed_signers": "signers/allowed"}
    beta.constraints(approval={**approval, "valid_for_seconds": valid_for})
    (root / "signers").mkdir()
    (root / "signers/allowed").write_text(line or allowed_line("alice", keys["alice"]))
    return root


def _sign_decision(
    root: Path, key: Path, decided_at: datetime, valid_until: datetime, user: str = "alice"
) -> None:
    """Approve beta/r1 as `user`, signed by `key`, with the times a signer chose."""
    writer = HumanWriter(root, user, "local", clock=lambda: decided_at)
    raw = json.loads((root / "missions/beta/approvals/r1.json").read_bytes())
    fields = writer.decision_fields(
        "r1", request_digest(raw), "approve", "ok", valid_until, decided_at
    )
    signature = asyncio.run(
        load_signer(key.read_bytes()).sign(
            payload("beta", **fields, workspace=writer.workspace_id()), NAMESPACE
        )
    )
    writer.decide("beta", "r1", raw, "approve", "ok", valid_until, decided_at, signature)


def test_a_key_past_its_window_authorizes_nothing_whatever_date_it_writes(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    line = allowed_line("alice", keys["alice"], 'valid-before="20200101Z"')
    root = _signed_state(tmp_path, keys, line, valid_for=10 * 365 * 86400)
    backdated = datetime(2019, 12, 31, tzinfo=UTC)
    _sign_decision(root, keys["alice"], backdated, backdated + timedelta(days=3000))
    auth = authorize(root, "beta", "r1", NOW)
    assert not auth.ok
    assert "valid only before" in auth.reason and "checked now" in auth.reason
    workspace = Workspace(root)
    workspace.scan()
    state = workspace.missions["beta"].signature("r1")
    assert state is not None and state.kind == "invalid" and "checked now" in state.why
    # the key was valid at decided_at: in 2019 (as ssh-keygen would then) it held
    assert authorize(root, "beta", "r1", backdated + timedelta(hours=1)).ok


def test_a_decision_dated_in_the_future_does_not_bind(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    root = _signed_state(tmp_path, keys)
    future = datetime(2030, 1, 1, tzinfo=UTC)
    _sign_decision(root, keys["alice"], future, future + timedelta(hours=1))
    auth = authorize(root, "beta", "r1", NOW)
    assert not auth.ok and "is in the future" in auth.reason
    found = [p.message for p in check(root).all_problems() if p.code == "decision-times"]
    assert len(found) == 1 and "is in the future" in found[0]
    # within a minute of clock skew it binds
    assert authorize(root, "beta", "r1", future - timedelta(seconds=59)).ok


def test_valid_until_is_bounded_by_the_policy(tmp_path: Path, keys: dict[str, Path]) -> None:
    root = _signed_state(tmp_path, keys)
    decided = NOW - timedelta(minutes=5)
    _sign_decision(root, keys["alice"], decided, decided + timedelta(days=30))
    auth = authorize(root, "beta", "r1", NOW)
    assert (
        not auth.ok and "valid_until" in auth.reason and "valid_for_seconds (3600)" in auth.reason
    )
    found = [p for p in check(root).all_problems() if p.code == "decision-times"]
    assert [p.path for p in found] == ["missions/beta/approvals/r1.toml"]


def test_a_decision_before_its_request_does_not_bind(tmp_path: Path, keys: dict[str, Path]) -> None:
    root = _signed_state(tmp_path, keys)
    decided = datetime(2019, 12, 29, tzinfo=UTC)
    _sign_decision(root, keys["alice"], decided, decided + timedelta(minutes=30))
    auth = authorize(root, "beta", "r1", decided + timedelta(minutes=1))
    assert not auth.ok and "before the request" in auth.reason


# ---- workspace identity -----------------------------------------------------------------


def test_a_decision_copied_into_another_state_directory_does_not_authorize(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    root = _signed_state(tmp_path, keys)
    decided = NOW - timedelta(minutes=5)
    _sign_decision(root, keys["alice"], decided, decided + timedelta(minutes=30))
    assert authorize(root, "beta", "r1", NOW).ok
    other = _signed_state(tmp_path / "other", keys)  # same mission id, same signers
    HumanWriter(other, "bob", "local").workspace_id()  # its own id
    approvals = "missions/beta/approvals"
    for name in ("r1.json", "r1.toml"):
        (other / approvals / name).write_bytes((root / approvals / name).read_bytes())
    auth = authorize(other, "beta", "r1", NOW)
    assert not auth.ok and "signed in another state directory" in auth.reason


def test_the_workspace_id_is_created_once_and_never_rewritten(tmp_path: Path) -> None:
    writer = HumanWriter(tmp_path, "alice", "local")
    first = writer.workspace_id()
    text = (tmp_path / "workspace.toml").read_text()
    assert f'id = "{first}"' in text and 'created_by = "alice"' in text
    assert HumanWriter(tmp_path, "bob", "local").workspace_id() == first
    assert (tmp_path / "workspace.toml").read_text() == text


def test_a_version_1_signature_counts_only_where_signatures_are_not_required(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    root = _signed_state(tmp_path, keys)
    decided = NOW - timedelta(minutes=5)
    writer = HumanWriter(root, "alice", "local", clock=lambda: decided)
    writer.workspace_id()
    raw = json.loads((root / "missions/beta/approvals/r1.json").read_bytes())
    until = decided + timedelta(minutes=30)
    fields = writer.decision_fields("r1", request_digest(raw), "approve", "ok", until, decided)
    v1 = asyncio.run(
        load_signer(keys["alice"].read_bytes()).sign(payload("beta", **fields), NAMESPACE)
    )
    writer.decide("beta", "r1", raw, "approve", "ok", until, decided, v1)
    auth = authorize(root, "beta", "r1", NOW)
    assert not auth.ok and "version 1 payload" in auth.reason
    constraints = root / "missions/beta/constraints.toml"
    constraints.write_text(
        constraints.read_text().replace("require_signature = true", "require_signature = false")
    )
    workspace = Workspace(root)
    workspace.scan()
    state = workspace.missions["beta"].signature("r1")
    assert state is not None and state.kind == "valid"


# ---- the workspace floor ------------------------------------------------------------------

FLOOR = """schema = 1
[approval]
require_signature = true
allowed_signers = "signers/allowed"
never_auto = ["external_write", "irreversible"]
max_valid_for_seconds = 600
"""


def test_the_effective_policy_keeps_the_constraints_within_the_floor() -> None:
    floor = WorkspacePolicy.model_validate(tomllib.loads(FLOOR)).approval
    loose = Constraints.model_validate(
        {
            "schema": 1,
            "approval": {
                "require_signature": False,
                "auto": ["read_only", "external_write"],
                "valid_for_seconds": 86400,
                "allowed_signers": "signers/mine",
                "revoked_keys": "signers/revoked",
            },
            "tools": {"allow": ["ls"]},
        }
    )
    rules = effective_policy("beta", floor, loose)
    assert rules.require_signature and rules.auto == ("read_only",)
    assert rules.valid_for_seconds == 600 and rules.allowed_signers == "signers/allowed"
    assert rules.revoked_keys == ("signers/revoked",) and rules.tools_allow == ("ls",)
    assert [p.code for p in rules.problems] == ["below-floor"] * 4
    assert "max_valid_for_seconds = 600" in rules.problems[2].message
    tight = Constraints.model_validate({"schema": 1, "approval": {"valid_for_seconds": 60}})
    assert effective_policy("beta", floor, tight).valid_for_seconds == 60  # tightening holds
    assert not effective_policy("beta", floor, tight).problems


def _floored(tmp_path: Path, keys: dict[str, Path]) -> Path:
    """Mission beta whose constraints turn signatures off under a floor requiring them;
    r1 approved unsigned."""
    root = tmp_path / "state"
    beta = mission(root, "beta")
    beta.request("r1", risk="read_only", tool="ls", args={"path": "/"})
    beta.constraints(approval={"require_signature": False, "auto": ["external_write"]})
    beta.decision(
        "r1", decided_by="mallory", decided_at=NOW, valid_until=NOW + timedelta(minutes=5)
    )
    (root / "signers").mkdir()
    (root / "signers/allowed").write_text(allowed_line("alice", keys["alice"]))
    (root / "policy.toml").write_text(FLOOR)
    return root


def test_the_floor_holds_where_the_constraints_go_below_it(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    root = _floored(tmp_path, keys)
    auth = authorize(root, "beta", "r1", NOW + timedelta(minutes=1))
    assert not auth.ok and "requires signatures" in auth.reason
    report = check(root)
    below = [p.message for p in report.all_problems() if p.code == "below-floor"]
    assert len(below) == 2 and "require_signature = true" in below[0]
    rules = report.to_json()["missions"]["beta"]["effective_policy"]  # type: ignore[index]
    assert rules["require_signature"] is True and rules["auto"] == []
    assert rules["valid_for_seconds"] == 600 and rules["floor"] is True
    (root / "policy.toml").unlink()  # (only the admin can: docs/approvals.md, Permissions)
    assert authorize(root, "beta", "r1", NOW + timedelta(minutes=1)).ok


def test_a_policy_toml_that_does_not_load_authorizes_nothing(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    root = _floored(tmp_path, keys)
    (root / "policy.toml").write_text("schema = 1\n[approval]\nnever_auto = 3\n")
    auth = authorize(root, "beta", "r1", NOW + timedelta(minutes=1))
    assert not auth.ok and auth.reason.startswith("policy.toml does not load")
    assert any(p.path == "policy.toml" for p in check(root).workspace_problems)


def test_the_hud_refuses_to_save_constraints_below_the_floor(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    root = _floored(tmp_path, keys)
    relpath = "missions/beta/constraints.toml"
    loaded = (root / relpath).read_bytes()
    writer = HumanWriter(root, "alice", "local")
    with pytest.raises(Invalid, match="never_auto = \\['external_write', 'irreversible'\\]"):
        writer.replace(relpath, "schema = 1\n[approval]\nauto = ['external_write']\n", sha(loaded))
    with pytest.raises(Invalid, match=r"the floor \(policy.toml\) has max_valid_for_seconds = 600"):
        writer.replace(relpath, "schema = 1\n[approval]\nvalid_for_seconds = 3600\n", sha(loaded))
    saved = writer.replace(
        relpath, "schema = 1\n[approval]\nvalid_for_seconds = 300\n", sha(loaded)
    )
    assert saved.changed
    with pytest.raises(OwnershipError):
        writer.create_document("policy.toml", {"approval": {}})


def test_the_agent_side_gate_asks_for_what_the_floor_never_lets_pass(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    from agentside.mission import constraints
    from agentside.policy import gate
    from store.writers.agent import AgentWriter

    root = _floored(tmp_path, keys)
    writer = AgentWriter(root, "beta", "agent")
    assert gate("Bash", constraints(writer)).verdict == "ask"
    (root / "policy.toml").unlink()
    assert gate("Bash", constraints(writer)).verdict == "pass"


# ---- signed policy -------------------------------------------------------------------------

SIGNED_FLOOR = """schema = 1
[approval]
require_signed_policy = true
policy_signers = "signers/policy"
"""
STRICT = (
    "schema = 1\nrevision = 1\n[approval]\nrequire_signature = true\n"
    'allowed_signers = "signers/allowed"\n'
)
LOOSE = (
    "schema = 1\nrevision = 2\n[approval]\nrequire_signature = false\nauto = ['external_write']\n"
)


def _sign_policy(root: Path, key: Path, data: bytes, tmp: Path) -> str:
    """`ssh-keygen -Y sign -n operator-hud-policy@v1` over the payload of `data` (the
    printf recipe of docs/approvals.md gives the same bytes)."""
    workspace = HumanWriter(root, "admin", "local").workspace_id()
    message = policy_payload(workspace, "beta", sha(data))
    recipe = (
        f'{{"constraints_sha256":"{sha(data)}","mission":"beta","version":1,'
        f'"workspace":"{workspace}"}}'
    )
    assert message == recipe.encode()
    return ssh_sign(key, message, tmp, namespace=POLICY_NAMESPACE)


def _signed_policy_state(tmp_path: Path, keys: dict[str, Path]) -> Path:
    """Floor requiring signed policy (bob signs policy); beta: r1 (strict) signed by
    bob and kept in history, r2 (loose) current and unsigned; r1 approved unsigned."""
    root = tmp_path / "state"
    beta = mission(root, "beta")
    beta.request("r1", risk="read_only", tool="ls", args={"path": "/"})
    beta.decision(
        "r1", decided_by="mallory", decided_at=NOW, valid_until=NOW + timedelta(minutes=5)
    )
    (root / "signers").mkdir()
    (root / "signers/allowed").write_text(allowed_line("alice", keys["alice"]))
    (root / "signers/policy").write_text(allowed_line("bob", keys["bob"]))
    (root / "policy.toml").write_text(SIGNED_FLOOR)
    (root / "missions/beta/history").mkdir()
    (root / "missions/beta/history/constraints.r1.toml").write_text(STRICT)
    (root / "missions/beta/constraints.toml").write_text(LOOSE)
    signature = _sign_policy(root, keys["bob"], STRICT.encode(), tmp_path)
    (root / "missions/beta/constraints.toml.sig").write_text(signature)
    return root


def test_an_unsigned_loosening_is_not_applied(tmp_path: Path, keys: dict[str, Path]) -> None:
    root = _signed_policy_state(tmp_path, keys)
    later = NOW + timedelta(minutes=1)
    auth = authorize(root, "beta", "r1", later)
    assert not auth.ok and "requires signatures" in auth.reason
    report = check(root)
    found = [p for p in report.all_problems() if p.code == "policy-unsigned"]
    assert len(found) == 1 and found[0].severity == "error"
    assert "require_signature turned off" in found[0].message
    assert "auto adds external_write" in found[0].message
    assert "signed revision r1 holds" in found[0].message
    assert report.missions["beta"].status.value == "needs_you"
    workspace = Workspace(root)
    workspace.scan()
    rules = workspace.missions["beta"].effective_policy
    assert rules.require_signature and rules.auto == () and rules.signed_by is None


def test_a_loosening_signed_by_a_policy_signer_counts(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    root = _signed_policy_state(tmp_path, keys)
    sig = root / "missions/beta/constraints.toml.sig"
    sig.rename(root / "missions/beta/history/constraints.r1.toml.sig")  # kept, as documented
    sig.write_text(
        _sign_policy(root, keys["alice"], LOOSE.encode(), tmp_path)
    )  # not a policy signer
    assert not authorize(root, "beta", "r1", NOW + timedelta(minutes=1)).ok
    sig.write_text(_sign_policy(root, keys["bob"], LOOSE.encode(), tmp_path))
    assert authorize(root, "beta", "r1", NOW + timedelta(minutes=1)).ok
    assert not [p for p in check(root).all_problems() if p.code == "policy-unsigned"]
    workspace = Workspace(root)
    workspace.scan()
    assert workspace.missions["beta"].effective_policy.signed_by == "bob"


def test_deleting_the_signed_history_leaves_the_floor(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    from agentside.mission import constraints
    from agentside.policy import gate
    from store.writers.agent import AgentWriter

    root = _signed_policy_state(tmp_path, keys)
    (root / "missions/beta/history/constraints.r1.toml").unlink()
    (root / "missions/beta/constraints.toml.sig").unlink()
    found = [p for p in check(root).all_problems() if p.code == "policy-unsigned"]
    assert len(found) == 1 and "the floor (no signed revision) holds" in found[0].message
    assert gate("Bash", constraints(AgentWriter(root, "beta", "agent"))).verdict == "ask"
    floor = root / "policy.toml"
    floor.write_text(
        SIGNED_FLOOR + 'require_signature = true\nallowed_signers = "signers/allowed"\n'
    )
    auth = authorize(root, "beta", "r1", NOW + timedelta(minutes=1))
    assert not auth.ok and "requires signatures" in auth.reason


# ---- a signature no file vouches for (issue 22, point 2) -----------------------------------


def test_a_signature_where_no_allowed_signers_file_is_named_is_unvouched_not_invalid(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    root = tmp_path / "state"
    beta = mission(root, "beta")
    beta.request("r1", risk="read_only", tool="ls", args={"path": "/"})
    decided = NOW - timedelta(minutes=5)
    _sign_decision(root, keys["alice"], decided, decided + timedelta(minutes=30))
    workspace = Workspace(root)
    workspace.scan()
    state = workspace.missions["beta"].signature("r1")
    assert state is not None and state.kind == "unvouched" and state.authorizes
    assert state.describe().startswith("signed by a key no file vouches for (SHA256:")
    found = [p for p in check(root).all_problems() if p.path.endswith("r1.toml")]
    assert [(p.code, p.severity) for p in found] == [("signature-unvouched", "warn")]
    assert "edited after signing" not in found[0].hint and "allowed_signers" in found[0].hint
    assert authorize(root, "beta", "r1", NOW).ok


def test_an_older_signed_revision_put_back_is_a_rollback(
    tmp_path: Path, keys: dict[str, Path]
) -> None:
    """r1 (loose) was signed once; r2 (strict) is signed and kept: r1 put back as
    constraints.toml, with its old signature, does not count."""
    root = _signed_policy_state(tmp_path, keys)
    old = LOOSE.replace("revision = 2", "revision = 1")
    strict = STRICT.replace("revision = 1", "revision = 2")
    beta = root / "missions/beta"
    (beta / "history/constraints.r1.toml").unlink()
    (beta / "history/constraints.r2.toml").write_text(strict)
    (beta / "history/constraints.r2.toml.sig").write_text(
        _sign_policy(root, keys["bob"], strict.encode(), tmp_path)
    )
    (beta / "constraints.toml").write_text(old)
    (beta / "constraints.toml.sig").write_text(
        _sign_policy(root, keys["bob"], old.encode(), tmp_path)
    )
    auth = authorize(root, "beta", "r1", NOW + timedelta(minutes=1))
    assert not auth.ok and "requires signatures" in auth.reason
    found = [p.message for p in check(root).all_problems() if p.code == "policy-unsigned"]
    assert len(found) == 1 and "signed revision r2 holds" in found[0]
    assert found[0].startswith("loosening by a rollback to signed r1")


def test_tools_loosening_is_seen_and_not_applied() -> None:
    from store.trust.policy import EffectivePolicy, _meet, loosened

    signed = EffectivePolicy(tools_allow=("ls", "cat"), tools_deny=("rm",))
    wider = EffectivePolicy(tools_allow=("ls", "curl"), tools_deny=())
    assert loosened(wider, signed) == ["[tools] allow widened", "[tools] deny narrowed"]
    kept = _meet(wider, signed)
    assert kept.tools_allow == ("ls",) and kept.tools_deny == ("rm",)
    assert kept.tool_refusal("curl") == "constraints [tools] allow does not list 'curl'"
    anything = EffectivePolicy()  # allow: any
    assert loosened(anything, signed)[0] == "[tools] allow widened"
    assert _meet(anything, signed).tools_allow == ("ls", "cat")
    assert _meet(EffectivePolicy(tools_allow=("curl",)), signed).tool_refusal("ls") is not None
