"""The folded state of a mission's log as bytes, and back: a versioned, closed codec.

What the fold keeps (`MissionState.saved`: dicts, sets, deques, tuples, the ledger, the
small NamedTuples of `store.derivation.view` and `store.derivation.ledger`, and the log
records they hold) becomes a tree of msgpack values (msgspec): every container is a list
whose first item says what it is (a time in UTC is msgpack's timestamp); a log record
is its JSON (validated again by its model when decoded, as a log line is); a record
held in several places is written once and referred to. Only the classes in CLASSES can
come back (no pickle: nothing in the bytes names code); anything else raises
`StateError`, on encoding as on decoding.
"""

from __future__ import annotations

from collections import deque
from datetime import datetime, timedelta
from sys import intern
from typing import Any

import msgspec
from pydantic import BaseModel, ValidationError

from store.derivation.ledger import AttemptSeen, Completed, KnownRef, Ledger, Mark
from store.derivation.view import EvidenceSeen, Reference, StepLatest, UsagePoint
from store.format.records import (
    Artifact,
    AttemptEvent,
    ErrorEvent,
    Evidence,
    HaltEvent,
    HeartbeatEvent,
    StepEvent,
    UsageEvent,
    WaiterEvent,
    share_field_sets,
)

STATE_VERSION = 3
"""Bumped whenever what the codec writes (or CLASSES) changes: older bytes are refused."""
RECORDS: tuple[type[BaseModel], ...] = (
    StepEvent,
    AttemptEvent,
    UsageEvent,
    HeartbeatEvent,
    ErrorEvent,
    HaltEvent,
    WaiterEvent,
    Evidence,
    Artifact,
)
TUPLES: tuple[type[tuple[Any, ...]], ...] = (
    StepLatest,
    UsagePoint,
    Reference,
    Mark,
    AttemptSeen,
    Completed,
    KnownRef,
    EvidenceSeen,
)
CLASSES = (*RECORDS, *TUPLES, Ledger)

# The tags: the first item of every list the codec writes.
LIST, TUPLE, DICT, SET, FROZENSET, DEQUE, TIME, NAMED, RECORD, SEEN, LEDGER = range(11)

ZERO = timedelta(0)
_RECORD_NO = {model: number for number, model in enumerate(RECORDS)}
_TUPLE_NO = {kind: number for number, kind in enumerate(TUPLES)}
_PLAIN = (bool, int, float, str, bytes)
_AS_IS = frozenset((*_PLAIN, type(None)))
"""What msgpack writes as it is: kept without a call to `_encode` (most items are)."""
_CONTAINERS: dict[type, int] = {list: LIST, tuple: TUPLE, set: SET, frozenset: FROZENSET}
_NESTED = frozenset((list, dict))
SHARED_FROZENSETS = 4096
"""At most this many distinct frozensets are shared by the states decoded."""
_FROZENSETS: dict[frozenset[Any], frozenset[Any]] = {}
"""What a decoded item needs `_decode` for (anything else is as msgpack gave it)."""
_ENCODER = msgspec.msgpack.Encoder()
_DECODER = msgspec.msgpack.Decoder()


class StateError(ValueError):
    """Bytes that are not a state this codec wrote, or a value it cannot write."""


def encode_state(saved: dict[str, Any]) -> bytes:
    """`saved` (aggregate name -> value) as bytes; StateError when it holds what the codec
    cannot write (an integer past 64 bits, which a log line may hold)."""
    seen: dict[int, int] = {}
    try:
        tree = {name: _encode(value, seen) for name, value in saved.items()}
        return _ENCODER.encode([STATE_VERSION, tree])
    except (OverflowError, msgspec.EncodeError, TypeError, ValueError) as exc:
        raise StateError(f"cannot keep this fold: {exc}") from None


def decode_state(data: bytes) -> dict[str, Any]:
    """What `encode_state` was given, rebuilt (raises StateError on anything else)."""
    try:
        version, tree = _DECODER.decode(data)
    except (msgspec.DecodeError, TypeError, ValueError) as exc:
        raise StateError(f"not a folded state: {exc}") from None
    if version != STATE_VERSION or type(tree) is not dict:
        raise StateError(f"folded state of version {version!r}, not {STATE_VERSION}")
    records: list[Any] = []
    times: dict[datetime, datetime] = {}
    try:
        return {name: _decode(value, records, times) for name, value in tree.items()}
    except (ValidationError, IndexError, KeyError, TypeError, ValueError) as exc:
        raise StateError(f"not a folded state: {exc}") from None


def _encode(value: Any, seen: dict[int, int]) -> Any:
    kind = type(value)
    if kind in _AS_IS:
        return value
    if kind is dict:
        items: list[Any] = [DICT]
        for key, item in value.items():
            items.append(key if type(key) in _AS_IS else _encode(key, seen))
            items.append(item if type(item) in _AS_IS else _encode(item, seen))
        return items
    if kind in _TUPLE_NO:
        return [NAMED, _TUPLE_NO[kind], *_each(value, seen)]
    if kind in _RECORD_NO:
        known = seen.get(id(value))
        if known is not None:
            return [SEEN, known]
        seen[id(value)] = len(seen)
        dumped = value.model_dump_json(by_alias=True, exclude_unset=True)
        return [RECORD, _RECORD_NO[kind], dumped]
    if kind is datetime:  # UTC as msgpack's own timestamp (back as a UTC datetime)
        return value if value.utcoffset() == ZERO else [TIME, value.isoformat()]
    if kind is deque:
        return [DEQUE, value.maxlen, *_each(value, seen)]
    if kind is Ledger:
        return [LEDGER, _encode(vars(value), seen)]
    tag = _CONTAINERS.get(kind)
    if tag is None:
        raise StateError(f"cannot keep a {kind.__name__} in a folded state")
    if tag in (SET, FROZENSET):
        value = sorted(value, key=repr)  # the same state: the same bytes
    return [tag, *_each(value, seen)]


def _each(values: Any, seen: dict[int, int]) -> list[Any]:
    """Each item encoded, in order (a plain value as it is: most are)."""
    if _AS_IS.issuperset(map(type, values)):  # all plain: no Python call an item
        return list(values)
    return [item if type(item) in _AS_IS else _encode(item, seen) for item in values]


def _decode(value: Any, records: list[Any], times: dict[datetime, datetime]) -> Any:
    """`value` rebuilt; `times` holds one of each time met (a fold shares an event's time
    between its aggregates: so does what comes back)."""
    if type(value) is not list:
        if type(value) is dict:
            raise StateError("a bare map in a folded state")
        return _shared(value, times)
    tag = value[0]
    if tag == NAMED:  # the commonest first: a reopen decodes tens of thousands
        kind: Any = TUPLES[value[1]]  # (a NamedTuple: `_make` builds it in C)
        items = _items(value[2:], records, times)
        if len(items) != len(kind._fields):
            raise StateError(f"a {kind.__name__} of {len(items)} items")
        return kind._make(items)
    if tag == DICT:
        pairs = iter(value)
        next(pairs)
        return {
            _decode(key, records, times) if type(key) in _NESTED else _shared(key, times): (
                _decode(item, records, times) if type(item) in _NESTED else _shared(item, times)
            )
            for key, item in zip(pairs, pairs, strict=True)
        }
    rest = value[1:]
    if tag == RECORD:
        number, dumped = rest
        record = RECORDS[number].model_validate_json(dumped)
        share_field_sets(record)  # as the fold's kept records do
        records.append(record)
        return record
    if tag == SEEN:
        return records[rest[0]]
    if tag == TIME:
        return datetime.fromisoformat(rest[0])
    if tag == DEQUE:
        return deque(_items(rest[1:], records, times), maxlen=rest[0])
    if tag == LEDGER:
        ledger = Ledger()
        fields = _decode(rest[0], records, times)
        if set(fields) != set(vars(ledger)):
            raise StateError("a ledger of other fields")
        vars(ledger).update(fields)
        return ledger
    items = _items(rest, records, times)
    if tag == LIST:
        return items
    if tag == TUPLE:
        return tuple(items)
    if tag == SET:
        return set(items)
    if tag == FROZENSET:  # a step's holders: one set for all that have the same
        found = frozenset(items)
        shared = _FROZENSETS.get(found)
        if shared is None and len(_FROZENSETS) < SHARED_FROZENSETS:
            shared = _FROZENSETS[found] = found
        return shared if shared is not None else found
    raise StateError(f"unknown tag {tag!r}")


def _items(values: list[Any], records: list[Any], times: dict[datetime, datetime]) -> list[Any]:
    """Each value decoded, in order (a plain value as it is, shared as `_shared` does, with
    no call for it: most are)."""
    return [
        _decode(item, records, times)
        if (kind := type(item)) in _NESTED
        else intern(item)
        if kind is str
        else times.setdefault(item, item)
        if kind is datetime
        else item
        for item in values
    ]


def _shared(value: Any, times: dict[datetime, datetime]) -> Any:
    """A plain value, strings interned and equal times one object (as a fresh fold holds
    them: a decoded state otherwise costs a quarter more memory than the fold)."""
    kind = type(value)
    if kind is str:
        return intern(value)
    if kind is datetime:
        return times.setdefault(value, value)
    return value
