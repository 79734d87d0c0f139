"""Refusals logged at a bounded rate: a flood of connections must not flood the log.

The first few refusals of each kind in a window are logged as they happen; the rest are
counted and summed up in one line when the window ends.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field

WINDOW = 60.0
"""Seconds a summary covers."""
SAID = 5
"""Refusals of one kind logged one by one in a window."""


@dataclass
class Tally:
    log: logging.Logger
    said: int = SAID
    _counts: Counter[str] = field(default_factory=Counter)
    _addresses: dict[str, set[str]] = field(default_factory=dict)

    def refused(self, kind: str, address: str, detail: str = "") -> None:
        """One refusal of `kind` (a few words) from `address`, `detail` said if logged."""
        self._counts[kind] += 1
        if self._counts[kind] <= self.said:
            self.log.warning("refused %s: %s%s", address, kind, f": {detail}" if detail else "")
        elif len(seen := self._addresses.setdefault(kind, set())) < 8:
            seen.add(address)

    def summary(self) -> None:
        """Log what was counted and not said since the last summary; start a new window."""
        for kind, count in sorted(self._counts.items()):
            unsaid = count - self.said
            if unsaid > 0:
                addresses = ", ".join(sorted(self._addresses.get(kind, ())))
                said = f"refused {unsaid} more in the last {WINDOW:g} s: {kind}"
                self.log.warning("%s (from %s)", said, addresses)
        self._counts.clear()
        self._addresses.clear()
