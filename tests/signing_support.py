"""Keys, allowed-signers files and ssh-agents for the signed-decision tests.

Keys are made by the real `ssh-keygen` (present wherever the tests run: the machine and
CI have OpenSSH), so what the HUD reads is what OpenSSH writes.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

NAMESPACE = "operator-hud-approval@v1"
KEY_TYPES = {"ed25519": ["-t", "ed25519"], "ecdsa": ["-t", "ecdsa", "-b", "256"]}


def keygen(folder: Path, name: str, kind: str = "ed25519") -> Path:
    """A new key pair without a passphrase: `folder/name` and `folder/name.pub`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    args = KEY_TYPES.get(kind, ["-t", "rsa", "-b", "2048"])
    subprocess.run(["ssh-keygen", "-q", *args, "-N", "", "-C", name, "-f", str(path)], check=True)
    return path


def allowed_line(principals: str, key: Path, options: str = "") -> str:
    """One allowed-signers line for the public half of `key`."""
    public = key.with_name(key.name + ".pub").read_text().strip()
    return " ".join(part for part in (principals, options, public) if part) + "\n"


def ssh_verify(
    allowed: Path, principal: str, signature: str, message: bytes, tmp: Path
) -> subprocess.CompletedProcess[bytes]:
    """`ssh-keygen -Y verify` of an armored signature over `message`."""
    sig = tmp / "check.sig"
    sig.write_text(signature)
    command = ["ssh-keygen", "-Y", "verify", "-f", str(allowed), "-I", principal]
    return subprocess.run(
        [*command, "-n", NAMESPACE, "-s", str(sig)],
        input=message,
        capture_output=True,
    )


def ssh_sign(key: Path, message: bytes, tmp: Path, namespace: str = NAMESPACE) -> str:
    """`ssh-keygen -Y sign` of `message`: the armored signature."""
    data = tmp / "message"
    data.write_bytes(message)
    signed = tmp / "message.sig"
    signed.unlink(missing_ok=True)
    subprocess.run(
        ["ssh-keygen", "-q", "-Y", "sign", "-f", str(key), "-n", namespace, str(data)],
        check=True,
        capture_output=True,
    )
    return signed.read_text()


@contextmanager
def ssh_agent(folder: Path, *keys: Path) -> Iterator[str]:
    """A real ssh-agent holding `keys`; yields its socket path, kills it after."""
    started = subprocess.run(
        ["ssh-agent", "-s", "-a", str(folder / "agent.sock")],
        capture_output=True,
        text=True,
        check=True,
    )
    sock = re.search(r"SSH_AUTH_SOCK=([^;]+);", started.stdout)
    pid = re.search(r"SSH_AGENT_PID=(\d+);", started.stdout)
    assert sock and pid, started.stdout
    try:
        for key in keys:
            env = {**os.environ, "SSH_AUTH_SOCK": sock.group(1)}
            subprocess.run(["ssh-add", "-q", str(key)], env=env, check=True, capture_output=True)
        yield sock.group(1)
    finally:
        os.kill(int(pid.group(1)), signal.SIGTERM)
