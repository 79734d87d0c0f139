"""Allowed-signers and revoked-keys files, as `ssh-keygen -Y verify` reads them.

An allowed-signers line (ssh-keygen(1), "ALLOWED SIGNERS") is
`principals [options] keytype base64-key [comment]`: `principals` is a comma-separated
pattern list (`*` and `?` wildcards, `!` negates), options are `namespaces="..."` (a
pattern list), `valid-after="..."` and `valid-before="..."` (`YYYYMMDD[HHMM[SS]]`, with
`Z` for UTC, else the local time zone, as OpenSSH reads it); `cert-authority` (keys
signed by a CA) is not supported and such a line is a problem; so is a line that repeats
`namespaces`, `valid-after` or `valid-before` (ssh-keygen rejects it). `#` starts a comment
line; blank lines are skipped. A revoked-keys file is a list of public keys, one a
line; a binary KRL is not supported (a problem). A line that does not parse is a
Problem naming it, and trusts nobody.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from store.format.problems import Problem

if TYPE_CHECKING:
    import asyncssh

MAX_SIGNERS_BYTES = 1024 * 1024
_TOKEN = re.compile(r'(?:"[^"]*"|[^\s"])+')
_OPTION = re.compile(r'([a-z-]+)(?:="([^"]*)")?(?:,|$)')
_TIME = re.compile(r"^(\d{8})(\d{4}(\d{2})?)?(Z?)$")
KRL_MAGIC = b"SSHKRL\n"


@dataclass(frozen=True, slots=True)
class Allowed:
    """One allowed-signers line."""

    principals: str
    key: asyncssh.SSHKey
    namespaces: str | None
    valid_after: datetime | None
    valid_before: datetime | None
    line: int


@dataclass(frozen=True, slots=True)
class AllowedSigners:
    relpath: str
    entries: tuple[Allowed, ...]
    problems: tuple[Problem, ...]


@dataclass(frozen=True, slots=True)
class Revoked:
    relpath: str
    keys: frozenset[bytes]
    """The revoked keys' SSH wire encodings."""
    problems: tuple[Problem, ...]


def match_list(patterns: str, value: str) -> bool:
    """OpenSSH's `match_pattern_list`: a `!pattern` that matches refuses; else any
    plain pattern that matches accepts."""
    found = False
    for pattern in patterns.split(","):
        negated = pattern.startswith("!")
        body = pattern[1:] if negated else pattern
        regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in body)
        if re.fullmatch(regex, value, re.DOTALL):
            if negated:
                return False
            found = True
    return found


def _problem(relpath: str, line: int, message: str) -> Problem:
    return Problem(
        relpath,
        line,
        "signers-invalid",
        message,
        "see ssh-keygen(1), ALLOWED SIGNERS; docs/approvals.md, Signed decisions",
    )


def _time(text: str) -> datetime:
    """`YYYYMMDD[HHMM[SS]][Z]`: UTC with Z, else local time (as OpenSSH)."""
    match = _TIME.match(text)
    if match is None:
        raise ValueError(f"time {text!r} is not YYYYMMDD[HHMM[SS]][Z]")
    digits = match.group(1) + (match.group(2) or "0000")
    digits += "" if match.group(3) else "00"
    moment = datetime.strptime(digits, "%Y%m%d%H%M%S")
    return moment.replace(tzinfo=UTC) if match.group(4) else moment.astimezone()


def _key(tokens: list[str]) -> asyncssh.SSHKey:
    import asyncssh  # when a signer is listed: not at every start

    try:
        return asyncssh.import_public_key(" ".join(tokens[:2]))
    except (asyncssh.KeyImportError, ValueError) as exc:
        raise ValueError(f"the key does not load: {exc}") from None


def _entry(tokens: list[str], number: int) -> Allowed:
    if len(tokens) < 3:
        raise ValueError("expected: principals [options] keytype base64-key")
    principals = tokens[0].replace('"', "")
    rest = tokens[1:]
    options: dict[str, str] = {}
    try:
        key = _key(rest)
    except ValueError:
        if len(rest) < 3:
            raise
        options = _options(rest[0])
        key = _key(rest[1:])
    if "cert-authority" in options:
        raise ValueError("cert-authority lines are not supported: list each signer's key")
    after, before = options.get("valid-after"), options.get("valid-before")
    return Allowed(
        principals,
        key,
        options.get("namespaces"),
        _time(after) if after is not None else None,
        _time(before) if before is not None else None,
        number,
    )


def _options(text: str) -> dict[str, str]:
    options: dict[str, str] = {}
    at = 0
    while at < len(text):
        match = _OPTION.match(text, at)
        if match is None or match.end() == at:
            raise ValueError(f"options {text!r} do not parse")
        name, value = match.group(1), match.group(2)
        if name not in ("cert-authority", "namespaces", "valid-after", "valid-before"):
            raise ValueError(f"unknown option {name!r}")
        if value is None and name != "cert-authority":
            raise ValueError(f"option {name!r} needs a quoted value")
        if value is not None and name == "cert-authority":
            raise ValueError("option 'cert-authority' takes no value")
        if name in options and name != "cert-authority":
            raise ValueError(f"option {name!r} is repeated (ssh-keygen rejects the line)")
        options[name] = value or ""
        at = match.end()
    return options


def _lines(data: bytes) -> list[tuple[int, str]]:
    text = data.decode("utf-8", errors="replace")
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith("#"):
            found.append((number, stripped))
    return found


@lru_cache(maxsize=32)
def parse_allowed(relpath: str, data: bytes) -> AllowedSigners:
    """The lines of an allowed-signers file; a line that does not parse is a Problem."""
    entries, problems = [], []
    for number, line in _lines(data):
        try:
            entries.append(_entry(_TOKEN.findall(line), number))
        except ValueError as exc:
            problems.append(_problem(relpath, number, f"allowed signer not read: {exc}"))
    return AllowedSigners(relpath, tuple(entries), tuple(problems))


@lru_cache(maxsize=32)
def parse_revoked(relpath: str, data: bytes) -> Revoked:
    """The keys of a revoked-keys file (public keys, one a line)."""
    if data.startswith(KRL_MAGIC):
        message = "a binary KRL is not supported: list the revoked public keys, one a line"
        return Revoked(relpath, frozenset(), (_problem(relpath, 1, message),))
    keys, problems = set(), []
    for number, line in _lines(data):
        try:
            keys.add(_key(line.split()).public_data)
        except ValueError as exc:
            problems.append(_problem(relpath, number, f"revoked key not read: {exc}"))
    return Revoked(relpath, frozenset(keys), tuple(problems))


def vouching(
    allowed: AllowedSigners, key: asyncssh.SSHKey, namespace: str, at: datetime
) -> Allowed | None:
    """A line that lists `key` for `namespace`, valid at `at`, whatever its principals
    (as `ssh-keygen -Y find-principals`); None when no line does."""
    for entry in allowed.entries:
        if entry.key.public_data != key.public_data:
            continue
        if entry.namespaces is not None and not match_list(entry.namespaces, namespace):
            continue
        if entry.valid_after is not None and at < entry.valid_after:
            continue
        if entry.valid_before is not None and at >= entry.valid_before:
            continue
        return entry
    return None


def trusted(
    allowed: AllowedSigners, key: asyncssh.SSHKey, principal: str, namespace: str, at: datetime
) -> Allowed:
    """The line that lets `key` sign as `principal` in `namespace` at `at`, as `ssh-keygen
    -Y verify -I principal` finds it; ValueError says why none does."""
    listed = [entry for entry in allowed.entries if entry.key.public_data == key.public_data]
    if not listed:
        raise ValueError(f"its key is not listed in {allowed.relpath}")
    named = [entry for entry in listed if match_list(entry.principals, principal)]
    if not named:
        raise ValueError(f"{allowed.relpath} does not list its key for {principal!r}")
    why = ""
    for entry in named:
        where = f"{allowed.relpath}:{entry.line}"
        if entry.namespaces is not None and not match_list(entry.namespaces, namespace):
            why = f"{where} does not allow namespace {namespace!r}"
        elif entry.valid_after is not None and at < entry.valid_after:
            why = f"{where}: the key is valid only after {entry.valid_after.isoformat()}"
        elif entry.valid_before is not None and at >= entry.valid_before:
            why = f"{where}: the key was valid only before {entry.valid_before.isoformat()}"
        else:
            return entry
    raise ValueError(why)
