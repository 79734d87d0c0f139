"""Cited artifacts checked against their sha256 and size: the one check for the HUD and
`hud check`.

Hashing reads the file, so it is kept apart from folding: `hash_artifact` does the IO
(a scan, `hud check`, or a read-ahead step off the event loop), and a mission keeps
each result with the file's signature, so a file is hashed again only when it changed.
A check reads at most the cited size + 1 bytes: an agent cannot make it read more.
"""

from __future__ import annotations

import stat
from dataclasses import dataclass
from pathlib import Path

from store.format.confined import hash_file, link_problem, lstat, not_regular
from store.format.problems import Problem
from store.format.records import Artifact

Signature = tuple[str, int, int, int, int]
"""(cited sha256, cited bytes, inode, size, mtime_ns): what a check result holds for."""


@dataclass(frozen=True, slots=True)
class ArtifactCheck:
    """The result of hashing one cited artifact: `problem` is None when it matches."""

    signature: Signature
    problem: Problem | None

    @property
    def verdict(self) -> str:
        """`ok`, `mismatch`, or `unreadable` (a symlink, not a file, no permission)."""
        if self.problem is None:
            return "ok"
        return "mismatch" if self.problem.code == "artifact-mismatch" else "unreadable"


def signature(root: Path, relpath: str, cited: Artifact) -> Signature | None:
    """The signature of the artifact as it is now; None when it is not there."""
    info = lstat(root, relpath)
    if info is None:
        return None
    return (cited.sha256, cited.bytes, info.st_ino, info.st_size, info.st_mtime_ns)


def file_problem(root: Path, relpath: str) -> Problem | None:
    """What is wrong with an artifact's file itself (cited or not): a symlink, or not a
    regular file; only metadata is read."""
    info = lstat(root, relpath)
    if info is None:
        return None
    if stat.S_ISLNK(info.st_mode):
        return link_problem(root, relpath)
    return None if stat.S_ISREG(info.st_mode) else not_regular(relpath, info.st_mode)


def hash_artifact(
    root: Path, relpath: str, cited: Artifact, cited_at: tuple[str, int]
) -> ArtifactCheck:
    """Hash the artifact now (IO) and say whether it matches what evidence cited;
    `cited_at` (path, line) is the evidence line that cites it."""
    before = signature(root, relpath, cited)
    hashed = hash_file(root, relpath, cited.bytes)
    sign = before or (cited.sha256, cited.bytes, 0, 0, 0)
    if isinstance(hashed, Problem):
        return ArtifactCheck(sign, hashed)
    digest, size = hashed
    if digest == cited.sha256 and size == cited.bytes:
        return ArtifactCheck(sign, None)
    what = "size" if size != cited.bytes else "sha256"
    return ArtifactCheck(
        sign,
        Problem(
            *cited_at,
            "artifact-mismatch",
            f"artifact {relpath} does not match the {what} cited",
            "the artifact changed after the evidence was written; artifacts are immutable",
        ),
    )
