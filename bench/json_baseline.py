"""The baseline `hud check` is held to: a plain stdlib loop that reads every log of a
state directory, `json.loads` each line and sha256s it (no schema, no chain)."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path


def main(root: Path) -> int:
    """Lines read; every `.jsonl` under `root`/missions."""
    lines = 0
    for log in sorted((root / "missions").glob("*/*.jsonl")):
        with log.open("rb") as handle:
            for line in handle:
                json.loads(line)
                hashlib.sha256(line).hexdigest()
                lines += 1
    return lines


if __name__ == "__main__":
    print(main(Path(sys.argv[1])))
