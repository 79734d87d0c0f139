"""The baseline `hud check` is held to: a plain stdlib loop that reads every log of a
state directory, `json.loads` each line, sha256s it and checks the hash chain (each
line's `prev` is the previous line's digest; no schema, no seq, no caps)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

GENESIS = "0" * 64


def main(root: Path) -> tuple[int, int]:
    """(lines read, broken links); every `.jsonl` under `root`/missions."""
    lines = broken = 0
    for log in sorted((root / "missions").glob("*/*.jsonl")):
        prev = GENESIS
        with log.open("rb") as handle:
            for line in handle:
                body = line.rstrip(b"\n")
                broken += json.loads(body)["prev"] != prev
                prev = hashlib.sha256(body).hexdigest()
                lines += 1
    return lines, broken


if __name__ == "__main__":
    print(*main(Path(sys.argv[1])))
