"""Budget limits as a human types them: parsed, checked and shown back."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)\s*([smhd]?)$")
_UNIT_SECONDS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def _number(text: str) -> float | int:
    cleaned = text.replace(",", "").replace("_", "").strip()
    try:
        value: float | int = int(cleaned)
    except ValueError:
        try:
            value = float(cleaned)
        except ValueError:
            raise ValueError("not a number") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("not a finite number")
    if value < 0:
        raise ValueError("must be 0 or more")
    return value


def _count(text: str) -> int:
    value = _number(text)
    if not isinstance(value, int):
        raise ValueError("must be a whole number")
    return value


def _seconds(text: str) -> float | int:
    match = _DURATION.match(text.replace(",", "").replace("_", "").strip().lower())
    if match is None:
        raise ValueError("seconds, or a number with s, m, h or d (90m, 2h)")
    amount = _number(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    return int(amount) if float(amount).is_integer() else amount


def _deadline(text: str) -> datetime:
    raw = text.strip()
    if raw.endswith(("Z", "z")):
        raw = raw[:-1] + "+00:00"
    try:
        value = datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError("an RFC 3339 time with a zone, e.g. 2025-03-01T18:00:00Z") from None
    if value.tzinfo is None:
        raise ValueError("give a time zone, e.g. Z or +02:00")
    return value


@dataclass(frozen=True, slots=True)
class LimitSpec:
    key: str
    label: str
    hint: str
    parse: Callable[[str], Any]


LIMITS: tuple[LimitSpec, ...] = (
    LimitSpec("usd", "USD", "dollars, e.g. 25 or 12.50", _number),
    LimitSpec("tokens", "Tokens", "a whole number, e.g. 200000", _count),
    LimitSpec("steps", "Steps", "a whole number of steps", _count),
    LimitSpec("wall_seconds", "Wall time", "seconds, or 90m, 2h, 1d", _seconds),
    LimitSpec("deadline", "Deadline", "RFC 3339 with zone: 2025-03-01T18:00:00Z", _deadline),
)
LIMIT_BY_KEY = {spec.key: spec for spec in LIMITS}


def parse_limit(key: str, text: str) -> Any:
    """The value of budget limit `key` typed as `text`; None when empty; ValueError if bad."""
    if not text.strip():
        return None
    return LIMIT_BY_KEY[key].parse(text)


def show_limit(value: Any) -> str:
    """A limit as the operator would type it back."""
    if value is None:
        return ""
    if isinstance(value, datetime):
        return value.isoformat().replace("+00:00", "Z")
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 1e15 else str(value)
    return str(value)
