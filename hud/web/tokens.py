"""Personal tokens of `hud web`: a file that maps each token's hash to a name and a role.

One person a line, `NAME ROLE sha256:HEX`, `#` starts a comment:

    bob@desk approver sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08

Only the SHA-256 of a token is kept: a token is 32 random bytes, so a fast hash is as
strong as a slow one (no dictionary reaches it), and the file gives nobody a way in. The
file is checked as `hud serve`'s authorized keys are (`hud.serve.keys.read_strictly`,
sshd's StrictModes): if it fails, nobody signs in. A line that does not parse is skipped
and said; a name must be plain (letters, digits, `._@+-`): it becomes `decided_by`.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from hud.roles import ROLES, Role
from hud.serve.keys import read_strictly

NAME = re.compile(r"[A-Za-z0-9._@+-]{1,64}")
_DIGEST = re.compile(r"sha256:([0-9a-f]{64})")
PREFIX = "hudw_"
"""Every token starts with it (a scanner of leaked secrets can spot one)."""


def default_path() -> Path:
    """Where `hud web` keeps its tokens file by default (the user's config folder)."""
    import platformdirs

    return Path(platformdirs.user_config_dir("operator-hud")) / "web" / "tokens"


def digest(token: str) -> str:
    """What the file keeps of `token`."""
    return "sha256:" + hashlib.sha256(token.encode("utf-8", "surrogateescape")).hexdigest()


@dataclass(frozen=True)
class Holder:
    """Who a token (or a trusted proxy's header) says a person is, and what they may do."""

    name: str
    role: Role


class Tokens:
    """One reading of a tokens file: `problems` says which lines were skipped, `refused`
    why the whole file was."""

    def __init__(self, text: str) -> None:
        self.problems: list[str] = []
        self.refused: str | None = None
        self._holders: list[tuple[str, Holder]] = []
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            words = line.split()
            hashed = _DIGEST.fullmatch(words[2]) if len(words) == 3 else None
            if hashed is None or not NAME.fullmatch(words[0]) or words[1] not in ROLES:
                self.problems.append(f"line {number}: not NAME ROLE sha256:HEX")
                continue
            holder = Holder(words[0], words[1])
            self._holders.append((f"sha256:{hashed.group(1)}", holder))

    @classmethod
    def read(cls, path: Path) -> Tokens:
        try:
            text = read_strictly(path)
        except (OSError, ValueError) as error:
            tokens = cls("")
            tokens.refused = f"not used: {error}"
            tokens.problems.append(tokens.refused)
            return tokens
        return cls(text)

    def holder(self, token: str) -> Holder | None:
        """Whose `token` is; None for a wrong one (every line compared, in constant time)."""
        wanted = digest(token).encode()
        found = None
        for hashed, holder in self._holders:
            if hmac.compare_digest(hashed.encode(), wanted) and found is None:
                found = holder
        return found

    def named(self, name: str) -> Holder | None:
        """The person `name` (a trusted proxy's header), None if not listed."""
        return next((holder for _, holder in self._holders if holder.name == name), None)


def add(path: Path, name: str, role: Role) -> str:
    """A new token for `name` with `role`, its hash appended to `path` (made mode 0600 in a
    0700 folder if absent): the token, to be shown once. ValueError for a name that is
    not plain or already listed, or a file that fails the checks."""
    if not NAME.fullmatch(name):
        raise ValueError(f"{name!r} is not a plain name (letters, digits, ._@+-, at most 64)")
    if role not in ROLES:
        raise ValueError(f"{role!r} is not a role: {', '.join(ROLES)}")
    lead = ""
    if os.path.lexists(path):
        try:
            text = read_strictly(path)
        except (OSError, ValueError) as error:
            raise ValueError(f"not used: {error}") from None
        if Tokens(text).named(name) is not None:
            raise ValueError(f"{name} already has a token: remove its line from {path} first")
        lead = "\n" if text and not text.endswith("\n") else ""
    else:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    token = PREFIX + secrets.token_urlsafe(32)
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "a") as out:
        out.write(f"{lead}{name} {role} {digest(token)}\n")
    return token
