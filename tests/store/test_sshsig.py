"""SSHSIG and allowed signers: round trips, interop with ssh-keygen both ways (ed25519,
ecdsa, rsa), tampering, the allowed-signers rules, and garbage that never crashes."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import re
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from store.trust import sshsig
from store.trust.signers import match_list, parse_allowed, parse_revoked, trusted
from tests.signing_support import (
    NAMESPACE,
    allowed_line,
    keygen,
    ssh_agent,
    ssh_sign,
    ssh_verify,
)

KINDS = ["ed25519", "ecdsa", "rsa"]
MESSAGE = b'{"decision":"approve","request":"r1"}'
NOW = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="module")
def keys(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("keys")
    return {kind: keygen(folder, kind, kind) for kind in [*KINDS, "other"]}


def sign(key: Path, message: bytes = MESSAGE, namespace: str = NAMESPACE) -> str:
    signer = sshsig.load_signer(key.read_bytes())
    return asyncio.run(signer.sign(message, namespace))


@pytest.mark.parametrize("kind", KINDS)
def test_round_trip(keys: dict[str, Path], kind: str) -> None:
    parsed = sshsig.parse(sign(keys[kind]))
    sshsig.verify(parsed, MESSAGE, NAMESPACE)
    assert parsed.namespace == NAMESPACE and parsed.hash_algorithm == "sha512"
    assert parsed.fingerprint.startswith("SHA256:")


@pytest.mark.parametrize("kind", KINDS)
def test_hud_signature_verifies_with_ssh_keygen(
    keys: dict[str, Path], kind: str, tmp_path: Path
) -> None:
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(allowed_line("alice", keys[kind]))
    done = ssh_verify(allowed, "alice", sign(keys[kind]), MESSAGE, tmp_path)
    assert done.returncode == 0, done.stderr
    assert b'Good "operator-hud-approval@v1" signature for alice' in done.stdout
    assert ssh_verify(allowed, "alice", sign(keys[kind]), b"other", tmp_path).returncode != 0


@pytest.mark.parametrize("kind", KINDS)
def test_ssh_keygen_signature_verifies_here(
    keys: dict[str, Path], kind: str, tmp_path: Path
) -> None:
    parsed = sshsig.parse(ssh_sign(keys[kind], MESSAGE, tmp_path))
    sshsig.verify(parsed, MESSAGE, NAMESPACE)
    with pytest.raises(sshsig.SigError, match="does not match"):
        sshsig.verify(parsed, MESSAGE + b" ", NAMESPACE)


def test_wrong_namespace(keys: dict[str, Path], tmp_path: Path) -> None:
    parsed = sshsig.parse(ssh_sign(keys["ed25519"], MESSAGE, tmp_path, namespace="file"))
    with pytest.raises(sshsig.SigError, match="namespace 'file'"):
        sshsig.verify(parsed, MESSAGE, NAMESPACE)


def test_agent_signs_and_the_key_stays_there(keys: dict[str, Path], tmp_path: Path) -> None:
    public = keys["ecdsa"].with_name("ecdsa.pub").read_bytes()
    with ssh_agent(tmp_path, keys["ecdsa"]) as sock:
        signer = sshsig.load_signer(public, agent_path=sock)
        assert isinstance(signer, sshsig.AgentSigner)
        text = asyncio.run(signer.sign(MESSAGE, NAMESPACE))
        other = sshsig.load_signer(keys["other"].with_name("other.pub").read_bytes(), sock)
        with pytest.raises(sshsig.SigError, match="does not hold the key"):
            asyncio.run(other.sign(MESSAGE, NAMESPACE))
    allowed = tmp_path / "allowed_signers"
    allowed.write_text(allowed_line("alice", keys["ecdsa"]))
    assert ssh_verify(allowed, "alice", text, MESSAGE, tmp_path).returncode == 0


def test_agent_gone_is_an_error(keys: dict[str, Path], tmp_path: Path) -> None:
    public = keys["ed25519"].with_name("ed25519.pub").read_bytes()
    signer = sshsig.load_signer(public, agent_path=str(tmp_path / "no.sock"))
    with pytest.raises(sshsig.SigError, match="ssh-agent could not sign"):
        asyncio.run(signer.sign(MESSAGE, NAMESPACE))


def test_encrypted_key_signs_through_the_agent(tmp_path: Path) -> None:
    key = keygen(tmp_path, "locked")
    subprocess.run(["ssh-keygen", "-q", "-p", "-N", "pw", "-f", str(key)], check=True)
    signer = sshsig.load_signer(key.read_bytes())
    assert isinstance(signer, sshsig.AgentSigner)
    with pytest.raises(sshsig.SigError, match="not an OpenSSH"):
        sshsig.load_signer(b"hello")


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "not an SSH signature"),
        (f"{sshsig.BEGIN}\n!!!\n{sshsig.END}", "not base64"),
        (f"{sshsig.BEGIN}\nAAAA\n{sshsig.END}", "truncated|SSHSIG"),
        (f"{sshsig.BEGIN}\nU1NIU0lHAAAAAg==\n{sshsig.END}", "version 2"),
        ("x" * 70_000, "over"),
    ],
)
def test_malformed_armor(text: str, why: str) -> None:
    with pytest.raises(sshsig.SigError, match=why):
        sshsig.parse(text)


@given(
    st.text(max_size=300),
    st.binary(max_size=300),
    st.lists(st.binary(max_size=60), min_size=5, max_size=5),
)
def test_garbage_armor_is_an_error_never_a_crash(
    text: str, tail: bytes, fields: list[bytes]
) -> None:
    shaped = b"".join(len(f).to_bytes(4, "big") + f for f in fields)
    blobs = [sshsig.MAGIC + b"\x00\x00\x00\x01" + rest for rest in (tail, shaped)]
    for body in [text, *(base64.b64encode(blob).decode() for blob in blobs)]:
        with contextlib.suppress(sshsig.SigError):
            sshsig.parse(f"{sshsig.BEGIN}\n{body}\n{sshsig.END}")


@given(st.binary(max_size=400))
def test_garbage_signers_files_are_problems(data: bytes) -> None:
    parsed = parse_allowed("signers/a", data)
    assert all(p.code == "signers-invalid" for p in parsed.problems)
    parse_revoked("signers/r", data)


def test_match_list() -> None:
    assert match_list("alice,bob", "bob")
    assert match_list("*", "anyone")
    assert match_list("*@example.com,!mallory@example.com", "al@example.com")
    assert not match_list("*@example.com,!mallory@example.com", "mallory@example.com")
    assert match_list("a?c", "abc") and not match_list("a?c", "abbc")
    assert not match_list("a.c", "abc")  # a dot is a dot


def test_allowed_signers_rules(keys: dict[str, Path]) -> None:
    text = (
        "# admins\n\n"
        + allowed_line("alice", keys["ed25519"], 'namespaces="operator-hud-approval@v1"')
        + allowed_line(
            '"bob,carol"', keys["ecdsa"], 'valid-after="20260101Z",valid-before="20260201Z"'
        )
        + allowed_line("dave", keys["rsa"], 'namespaces="file"')
        + allowed_line("ca", keys["other"], "cert-authority")
        + "broken line\n"
    )
    parsed = parse_allowed("signers/allowed", text.encode())
    assert [p.line for p in parsed.problems] == [6, 7]
    assert "cert-authority" in parsed.problems[0].message
    public = {kind: sshsig.load_signer(keys[kind].read_bytes()) for kind in KINDS}
    ed = public["ed25519"].key  # type: ignore[union-attr]
    ec = public["ecdsa"].key  # type: ignore[union-attr]
    rsa = public["rsa"].key  # type: ignore[union-attr]
    assert trusted(parsed, ed, "alice", NAMESPACE, NOW).line == 3
    with pytest.raises(ValueError, match="does not list its key for 'bob'"):
        trusted(parsed, ed, "bob", NAMESPACE, NOW)
    in_january = datetime(2026, 1, 15, tzinfo=UTC)
    assert trusted(parsed, ec, "carol", NAMESPACE, in_january).line == 4
    with pytest.raises(ValueError, match="valid only before"):
        trusted(parsed, ec, "carol", NAMESPACE, NOW)
    with pytest.raises(ValueError, match="valid only after"):
        trusted(parsed, ec, "bob", NAMESPACE, datetime(2025, 12, 31, tzinfo=UTC))
    with pytest.raises(ValueError, match="does not allow namespace"):
        trusted(parsed, rsa, "dave", NAMESPACE, NOW)


def test_unlisted_key(keys: dict[str, Path]) -> None:
    parsed = parse_allowed("signers/allowed", allowed_line("*", keys["ed25519"]).encode())
    other = sshsig.load_signer(keys["other"].read_bytes()).key  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="not listed in signers/allowed"):
        trusted(parsed, other, "alice", NAMESPACE, NOW)


def test_revoked_keys_file(keys: dict[str, Path]) -> None:
    public = keys["ecdsa"].with_name("ecdsa.pub").read_bytes()
    revoked = parse_revoked("signers/revoked", b"# gone\n" + public + b"nonsense\n")
    assert len(revoked.keys) == 1 and [p.line for p in revoked.problems] == [3]
    krl = parse_revoked("signers/revoked", b"SSHKRL\n\x00\x00")
    assert "binary KRL is not supported" in krl.problems[0].message


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ('cert-authority="x"', "'cert-authority' takes no value"),
        ("namespaces", "'namespaces' needs a quoted value"),
        ('bogus="1"', "unknown option 'bogus'"),
        ('valid-after="2026"', "time '2026' is not YYYYMMDD"),
        ('valid-before="20261399"', "unconverted data|does not match|month"),
    ],
)
def test_bad_options_are_problems(keys: dict[str, Path], options: str, why: str) -> None:
    line = allowed_line("alice", keys["ed25519"], options)
    (problem,) = parse_allowed("signers/a", line.encode()).problems
    assert problem.line == 1 and re.search(why, problem.message)
