"""The server's host key, and the authorized keys with their roles.

An authorized-keys file in OpenSSH syntax where each key carries its role as an option:
`role="reviewer" ssh-ed25519 AAAA... alice@laptop` (read-only), `role="approver"`
(decides requests, nothing else) or `role="operator"` (everything).
A key without a valid role is refused, never taken for either. `from="..."` and
`expiry-time="YYYYMMDD[HHMM[SS]][Z]"` are honoured as OpenSSH does; other options are
ignored.

The file is checked as sshd's StrictModes would (`read_strictly`): a regular file owned
by this user or root, that neither it nor a folder above it lets others write, at most
MAX_BYTES; opened without following a symlink or blocking (a FIFO is refused, never
waited on).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import cast

import asyncssh

from hud.roles import ROLES, Role

_SAFE_NAME = re.compile(r"[A-Za-z0-9._@+-]{1,64}")
_EXPIRY = re.compile(r"(\d{8})(\d{4}(\d{2})?)?(Z?)")
MAX_BYTES = 1024 * 1024
"""An authorized-keys file larger than this is refused."""


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


def expiry(value: str) -> datetime:
    """An `expiry-time` as OpenSSH reads it: YYYYMMDD[HHMM[SS]], in local time, or in UTC
    with a trailing Z; ValueError if it is not one."""
    found = _EXPIRY.fullmatch(value)
    if found is None:
        raise ValueError(f"invalid expiry-time {value!r}: YYYYMMDD[HHMM[SS]][Z]")
    digits = value.removesuffix("Z").ljust(14, "0")
    moment = datetime.strptime(digits, "%Y%m%d%H%M%S")
    return moment.replace(tzinfo=UTC) if value.endswith("Z") else moment.astimezone()


def read_strictly(path: Path) -> str:
    """The text of an authorized-keys file, checked as sshd's StrictModes: OSError (or
    ValueError) naming what is wrong; it never follows a symlink nor blocks."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)
    except OSError as error:
        if error.errno == errno.ELOOP:  # the last part is a symlink
            raise OSError(f"{path} is a symlink; name the file itself") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(f"{path} is not a regular file")
        _owned_and_closed(path, info)
        folder = Path(os.path.realpath(path.parent))
        for above in (folder, *folder.parents):
            _owned_and_closed(above, os.stat(above))
        if info.st_size > MAX_BYTES:
            raise OSError(f"{path} is larger than {MAX_BYTES // 1024} KiB")
        data = os.read(fd, MAX_BYTES + 1)
    finally:
        os.close(fd)
    if len(data) > MAX_BYTES:
        raise OSError(f"{path} is larger than {MAX_BYTES // 1024} KiB")
    return data.decode("utf-8")


def _owned_and_closed(path: Path, info: os.stat_result) -> None:
    """OSError unless `path` belongs to this user or root and others cannot write it (a
    root-owned folder with the sticky bit, such as /tmp, is closed enough: nobody else
    can rename or remove what is ours in it)."""
    if info.st_uid not in (os.getuid(), 0):
        raise OSError(f"{path} belongs to another user (uid {info.st_uid}): bad ownership")
    sticky = stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_ISVTX and info.st_uid == 0
    if info.st_mode & 0o022 and not sticky:
        mode = stat.S_IMODE(info.st_mode)
        raise OSError(f"{path} is writable by others (mode {mode:o}): chmod go-w {path}")


class AuthorizedKeys:
    """One reading of an authorized-keys file; `problems` says which lines were skipped,
    `refused` why the whole file was (StrictModes)."""

    def __init__(self, text: str) -> None:
        self.problems: list[str] = []
        self.refused: str | None = None
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
            text = read_strictly(path)
        except (OSError, ValueError) as error:
            keys = cls("")
            keys.refused = f"not used: {error}"
            keys.problems.append(keys.refused)
            return keys
        return cls(text)

    def grant(
        self, key: asyncssh.SSHKey, client_addr: str, now: datetime | None = None
    ) -> Grant | str:
        """The grant of the first entry for `key` (its `from=` matching `client_addr`, its
        `expiry-time` not past at `now`), or why there is none."""
        for line, entry in self._entries:
            options = entry.validate(key, client_addr, client_addr)
            if options is None:
                continue
            fingerprint = key.get_fingerprint("sha256")
            try:  # the earliest, as OpenSSH takes it
                written = cast(list[str], options.get("expiry-time", []))
                ends = min(map(expiry, written), default=None)
            except ValueError as error:
                return f"key {fingerprint}: {error}"
            if ends is not None and ends < (now or datetime.now(UTC)):
                return f"key {fingerprint} expired at {ends.isoformat()}"
            roles = options.get("role")
            if not isinstance(roles, list) or len(roles) != 1 or roles[0] not in ROLES:
                return f'key {fingerprint} has no role (role="reviewer", "approver" or "operator")'
            blob = key.export_public_key().split()[1].decode()
            comment = line.partition(blob)[2].strip()
            return Grant(cast(Role, roles[0]), fingerprint, comment)
        return f"key {key.get_fingerprint('sha256')} is not authorized"
