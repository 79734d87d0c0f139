"""The allowed-signers parser and SSHSIG reader against `ssh-keygen -Y verify` as the
oracle: a line this reads trusts exactly when ssh-keygen accepts it (a repeated
`namespaces`, `valid-after` or `valid-before` clause is rejected by both), and a blob
this accepts ssh-keygen accepts too (this is stricter in one place: a non-empty reserved
field, which ssh-keygen ignores, is refused here)."""

from __future__ import annotations

import base64
import struct
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.trust import sshsig
from store.trust.signers import parse_allowed, trusted
from tests.signing_support import NAMESPACE, keygen, ssh_sign

MESSAGE = b'{"decision":"approve"}'
CLAUSES = [
    f'namespaces="{NAMESPACE}"',
    'namespaces="other@v1"',
    'namespaces="*"',
    'valid-after="20200101"',
    'valid-after="20300101Z"',
    'valid-before="20300101"',
    'valid-before="20200101Z"',
]
EXAMPLES = settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module")
def signed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A key and ssh-keygen's signature of MESSAGE with it."""
    folder = tmp_path_factory.mktemp("oracle")
    key = keygen(folder, "alice")
    return key, ssh_sign(key, MESSAGE, folder)


def _keygen_accepts(allowed: str, signature: str, folder: Path) -> bool:
    (folder / "allowed").write_text(allowed)
    (folder / "message.sig").write_text(signature)
    done = subprocess.run(
        [
            "ssh-keygen",
            "-Y",
            "verify",
            "-f",
            str(folder / "allowed"),
            "-I",
            "alice",
            "-n",
            NAMESPACE,
            "-s",
            str(folder / "message.sig"),
        ],
        input=MESSAGE,
        capture_output=True,
        timeout=20,
    )
    return done.returncode == 0


def _we_accept(allowed: str, signature: str) -> bool:
    try:
        parsed = sshsig.parse(signature)
        sshsig.verify(parsed, MESSAGE, NAMESPACE)
        signers = parse_allowed("signers/allowed", allowed.encode())
        if signers.problems:
            return False
        trusted(signers, parsed.key, "alice", NAMESPACE, datetime.now(UTC))
    except ValueError:
        return False
    return True


@EXAMPLES
@given(st.lists(st.sampled_from(CLAUSES), max_size=4))
def test_allowed_signers_options_agree_with_ssh_keygen(
    signed: tuple[Path, str], tmp_path: Path, clauses: list[str]
) -> None:
    key, signature = signed
    public = key.with_name("alice.pub").read_text().strip()
    line = " ".join(part for part in ("alice", ",".join(clauses), public) if part) + "\n"
    assert _we_accept(line, signature) == _keygen_accepts(line, signature, tmp_path), line


def test_a_repeated_clause_is_a_problem(signed: tuple[Path, str]) -> None:
    key, _ = signed
    public = key.with_name("alice.pub").read_text().strip()
    line = f'alice valid-before="20300101",valid-before="20990101" {public}\n'
    found = parse_allowed("signers/allowed", line.encode())
    assert not found.entries and "'valid-before' is repeated" in found.problems[0].message


def _with_fields(signature: str, reserved: bytes, namespace: bytes | None) -> str:
    """The blob of `signature` with its reserved field (and namespace) replaced."""
    lines = signature.strip().splitlines()
    blob = base64.b64decode("".join(lines[1:-1]))
    at, fields = 10, []
    for _ in range(5):
        size = struct.unpack(">I", blob[at : at + 4])[0]
        fields.append(blob[at + 4 : at + 4 + size])
        at += 4 + size
    fields[2] = reserved
    if namespace is not None:
        fields[1] = namespace
    new = blob[:10] + b"".join(struct.pack(">I", len(f)) + f for f in fields)
    text = base64.b64encode(new).decode()
    return "\n".join(
        [sshsig.BEGIN, *(text[i : i + 70] for i in range(0, len(text), 70)), sshsig.END]
    )


@EXAMPLES
@given(
    st.binary(max_size=12),
    st.sampled_from([None, NAMESPACE.encode(), b"other@v1"]),
)
def test_a_blob_accepted_here_is_accepted_by_ssh_keygen(
    signed: tuple[Path, str], tmp_path: Path, reserved: bytes, namespace: bytes | None
) -> None:
    key, signature = signed
    allowed = "alice " + key.with_name("alice.pub").read_text()
    changed = _with_fields(signature, reserved, namespace)
    ours = _we_accept(allowed, changed)
    if ours:
        assert _keygen_accepts(allowed, changed, tmp_path)
    if reserved:
        assert not ours  # stricter than ssh-keygen, which ignores the reserved field
    elif namespace in (None, NAMESPACE.encode()):
        assert ours


def test_a_non_empty_reserved_field_is_refused(signed: tuple[Path, str]) -> None:
    _, signature = signed
    with pytest.raises(sshsig.SigError, match="reserved field is not empty"):
        sshsig.parse(_with_fields(signature, b"x", None))
