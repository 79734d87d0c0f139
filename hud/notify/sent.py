"""What each target was sent, kept across restarts in the user's state folder.

One small JSON file per state directory (`sent-<hash of its path>.json`) in
`platformdirs.user_state_dir("operator-hud")/notify` (`$HUD_NOTIFY_STATE` names another
folder), never in the state directory: `{"schema": 1, "targets": {target id: {event
key: when sent}}}`. Written atomically (`store.format.durable.replace`, mode 0600), at
most MAX_KEYS keys a target (the oldest go first).
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import msgspec

from store.format.durable import replace

STATE_ENV = "HUD_NOTIFY_STATE"
MAX_KEYS = 10_000
"""Keys kept a target: an event older than the last MAX_KEYS sent could be sent again."""
MAX_BYTES = 16 * 1024 * 1024


def state_folder() -> Path:
    given = os.environ.get(STATE_ENV)
    if given:
        return Path(given)
    import platformdirs

    return Path(platformdirs.user_state_dir("operator-hud")) / "notify"


class SentRecord:
    """The keys of the events each target was sent, by target id."""

    def __init__(self, folder: Path, root: Path) -> None:
        self.folder = folder
        self.name = f"sent-{hashlib.sha256(str(root).encode()).hexdigest()[:16]}.json"
        self.targets: dict[str, dict[str, float]] = {}
        self.problem: str | None = None
        """Why the record could not be read (it starts empty), or None."""
        self._load()

    @property
    def path(self) -> Path:
        return self.folder / self.name

    def _load(self) -> None:
        try:
            with self.path.open("rb") as file:
                data = file.read(MAX_BYTES + 1)
            loaded = json.loads(data) if len(data) <= MAX_BYTES else None
            targets = loaded.get("targets") if isinstance(loaded, dict) else None
            if not isinstance(targets, dict):
                raise ValueError("not a record of sent notifications")
            self.targets = {
                str(target): {str(k): float(at) for k, at in keys.items()}
                for target, keys in targets.items()
                if isinstance(keys, dict)
            }
        except FileNotFoundError:
            return
        except (OSError, ValueError, TypeError, AttributeError) as error:
            self.problem = f"{self.path}: {error}; starting afresh (events may be sent again)"

    def has(self, target: str, key: str) -> bool:
        return key in self.targets.get(target, {})

    def mark(self, target: str, keys: list[str], at: float) -> None:
        """Remember that `target` was sent `keys`, and save (OSError if it cannot)."""
        sent = self.targets.setdefault(target, {})
        for key in keys:
            sent.pop(key, None)  # the newest last: trimming drops the oldest
            sent[key] = at
        for old in list(sent)[: max(0, len(sent) - MAX_KEYS)]:
            del sent[old]
        self._save()

    def forget(self, target: str, keys: list[str]) -> None:
        """Forget that `target` was sent `keys` (they may be sent again), and save."""
        sent = self.targets.get(target, {})
        for key in keys:
            sent.pop(key, None)
        self._save()

    def _save(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        data = msgspec.json.encode({"schema": 1, "targets": self.targets})
        folder = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            replace(folder, self.name, data, 0o600)
        finally:
            os.close(folder)
