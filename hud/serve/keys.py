"""The server's host key, and the authorized keys with their roles.

An authorized-keys file in OpenSSH syntax where each key carries its role as an option:
`role="reviewer" ssh-ed25519 AAAA... alice@laptop` (read-only) or `role="approver"`.
A key without a valid role is refused, never taken for either. `from="..."` is honoured;
other options are ignored.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, cast

import asyncssh

Role = Literal["reviewer", "approver"]
ROLES: tuple[Role, ...] = ("reviewer", "approver")
_SAFE_NAME = re.compile(r"[A-Za-z0-9._@+-]{1,64}")


def default_dir() -> Path:
    """Where `hud serve` keeps its host key and authorized keys by default."""
    import platformdirs

    return Path(platformdirs.user_config_dir("operator-hud")) / "serve"


def host_key(path: Path) -> tuple[asyncssh.SSHKey, bool]:
    """The ed25519 host key at `path`, made (mode 0600) if absent; and whether it was made.
    ValueError if others may read it (as sshd, it will not use such a key)."""
    if path.exists():
        if path.stat().st_mode & 0o077:
            raise ValueError(f"others may read it: chmod 600 {path}")
        return asyncssh.read_private_key(path), False
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    key = asyncssh.generate_private_key("ssh-ed25519", comment="hud serve host key")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(key.export_private_key())
    return key, True


@dataclass(frozen=True)
class Grant:
    """What an authorized key lets its holder do, and who the key says they are."""

    role: Role
    fingerprint: str
    """`SHA256:...` of the key."""
    comment: str
    """The key's comment in the authorized-keys file, as written."""

    @property
    def name(self) -> str:
        """The comment when it is a plain name (`alice@laptop`), else the fingerprint."""
        return self.comment if _SAFE_NAME.fullmatch(self.comment) else self.fingerprint


class AuthorizedKeys:
    """One reading of an authorized-keys file; `problems` says which lines were skipped."""

    def __init__(self, text: str) -> None:
        self.problems: list[str] = []
        self._entries: list[tuple[str, asyncssh.SSHAuthorizedKeys]] = []
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            try:
                self._entries.append((line, asyncssh.import_authorized_keys(line)))
            except (ValueError, asyncssh.KeyImportError) as error:
                self.problems.append(f"line {number}: {error}")

    @classmethod
    def read(cls, path: Path) -> AuthorizedKeys:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            keys = cls("")
            keys.problems.append(f"{path}: {error}")
            return keys
        return cls(text)

    def grant(self, key: asyncssh.SSHKey, client_addr: str) -> Grant | str:
        """The grant of the first entry for `key` (its `from=` matching `client_addr`), or
        why there is none."""
        for line, entry in self._entries:
            options = entry.validate(key, client_addr, client_addr)
            if options is None:
                continue
            fingerprint = key.get_fingerprint("sha256")
            roles = options.get("role")
            if not isinstance(roles, list) or len(roles) != 1 or roles[0] not in ROLES:
                return f'key {fingerprint} has no role (role="reviewer" or role="approver")'
            blob = key.export_public_key().split()[1].decode()
            comment = line.partition(blob)[2].strip()
            return Grant(cast(Role, roles[0]), fingerprint, comment)
        return f"key {key.get_fingerprint('sha256')} is not authorized"
