"""YAML text -> plain Python data, with line numbers and what a YAML 1.1 loader would change.

SMALL files are YAML. The reference CLI (Go, yaml.v3) keeps an unquoted timestamp as
the string it is; a YAML 1.1 loader (PyYAML, ruamel's safe constructor) silently
turns it into a `datetime`. So this module composes the YAML into nodes (libyaml
through ruamel.yaml's C parser when available, else ruamel's pure parser) and builds
the values itself: every scalar that is quoted, or a block scalar, is a string;
plain scalars resolve by YAML 1.2 (null, bool, int, float, else string); a plain
scalar that *looks* like a timestamp stays a string and is listed in
`unquoted_timestamps`, so the caller can report it. Nothing here raises on content:
a file that is not UTF-8, not YAML, or more than one document yields a `Problem`.

`lines` maps a path of keys and indexes, e.g. `("entries", 5, "commit")`, to the
1-based line where that value starts, for every value up to three levels deep.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from ruamel.yaml.resolver import BaseResolver
from ruamel.yaml.tag import Tag

from store.format.problems import Problem

Path_ = tuple[str | int, ...]

LINE_DEPTH = 3
MAX_NODES = 2_000_000
"""Values built from one file, aliases counted each time they are used (alias bombs)."""
MAX_DEPTH = 64
"""Nesting deeper than this (or a recursive alias) is refused."""

_INT = re.compile(r"^[-+]?(0|[1-9][0-9]*)$")
_OCT = re.compile(r"^0o[0-7]+$")
_HEX = re.compile(r"^0x[0-9a-fA-F]+$")
_FLOAT = re.compile(r"^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$")
_INF = re.compile(r"^[-+]?\.(inf|Inf|INF)$")
_NAN = re.compile(r"^\.(nan|NaN|NAN)$")
TIMESTAMP_LIKE = re.compile(
    r"^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}"
    r"([Tt ]|[ \t]+)?([0-9]{1,2}:[0-9]{2}:[0-9]{2}(\.[0-9]*)?"
    r"([ \t]*(Z|[-+][0-9]{1,2}(:[0-9]{2})?))?)?$"
)


@dataclass(slots=True)
class YamlDoc:
    """One parsed YAML file: its data (None if it did not parse) and what was noticed."""

    data: Any = None
    lines: dict[Path_, int] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    unquoted_timestamps: list[Path_] = field(default_factory=list)
    plain_strings: set[Path_] = field(default_factory=set)
    """Top-level keys whose value is a plain (unquoted) scalar, e.g. small_version: 1.0.0."""

    def line_of(self, path: Path_) -> int | None:
        """The line of the deepest known value on `path`."""
        for end in range(min(len(path), LINE_DEPTH), -1, -1):
            line = self.lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None


_PLAIN = Tag(suffix="!hud/plain")
_OTHER = Tag(suffix="!hud/other")


class _Resolver(BaseResolver):
    """Tags every untagged plain scalar `_PLAIN` (resolved by `_resolve_plain`, not here).

    ruamel's own resolver runs Python code per scalar and is most of the load time.
    """

    def __init__(self, version: Any = None, loader: Any = None, loadumper: Any = None) -> None:
        super().__init__(loadumper=loadumper or loader)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Tag:
        return _PLAIN if kind is ScalarNode and implicit[0] else _OTHER


def _yaml() -> YAML:
    loader = YAML(typ="safe")  # the C parser (libyaml) when ruamel.yaml.clib is installed
    loader.Resolver = _Resolver
    loader.allow_duplicate_keys = True  # reported by us, as a Problem, with its line
    return loader


_LOADER = _yaml()


def parse_yaml(relpath: str, data: bytes, *, line_offset: int = 0) -> YamlDoc:
    """Parse one YAML document. Lines reported are shifted by `line_offset`."""
    doc = YamlDoc()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1 + line_offset
        doc.problems.append(
            Problem(
                relpath,
                line,
                "small-not-utf8",
                f"not UTF-8: byte {exc.start} ({exc.reason})",
                "save the file as UTF-8",
            )
        )
        return doc
    if text.startswith("\ufeff"):
        text = text[1:]
    try:
        node = _LOADER.compose(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        at: int | None = mark.line + 1 + line_offset if mark is not None else None
        what = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        doc.problems.append(
            Problem(
                relpath,
                at,
                "small-yaml",
                f"not valid YAML: {what or exc}",
                "fix the YAML syntax at that line (indentation, quotes, colons)",
            )
        )
        return doc
    except (YAMLError, ValueError, RecursionError) as exc:
        doc.problems.append(
            Problem(relpath, None, "small-yaml", f"not valid YAML: {exc}", "fix the YAML syntax")
        )
        return doc
    if node is None:
        doc.data = None
        return doc
    builder = _Builder(relpath, doc, line_offset)
    try:
        doc.data = builder.build(node, ())
    except _TooBig:
        doc.data = None
        doc.problems.append(
            Problem(
                relpath,
                None,
                "small-yaml",
                f"more than {MAX_NODES:,} values or {MAX_DEPTH} levels (aliases expanded)",
                "remove anchors/aliases that expand recursively; SMALL files need none",
            )
        )
    return doc


class _TooBig(Exception):
    pass


class _Builder:
    def __init__(self, relpath: str, doc: YamlDoc, line_offset: int) -> None:
        self.relpath = relpath
        self.doc = doc
        self.offset = line_offset + 1
        self.count = 0

    def build(self, node: Node, path: Path_) -> Any:
        self.count += 1
        if self.count > MAX_NODES or len(path) > MAX_DEPTH:
            raise _TooBig
        if len(path) <= LINE_DEPTH:
            self.doc.lines[path] = node.start_mark.line + self.offset
        if isinstance(node, ScalarNode):
            return self.scalar(node, path)
        if isinstance(node, SequenceNode):
            return [self.build(item, (*path, index)) for index, item in enumerate(node.value)]
        if isinstance(node, MappingNode):
            return self.mapping(node, path)
        return None

    def mapping(self, node: MappingNode, path: Path_) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, ScalarNode):
                key = self.scalar(key_node, None)
            else:
                key = f"<{type(key_node).__name__}>"
            if not isinstance(key, str):
                key = str(key)
            if key == "<<" and isinstance(key_node, ScalarNode) and not key_node.style:
                merged = self.build(value_node, (*path, key))
                for source in merged if isinstance(merged, list) else [merged]:
                    if isinstance(source, dict):
                        for k, v in source.items():
                            result.setdefault(k, v)
                continue
            if key in result:
                self.doc.problems.append(
                    Problem(
                        self.relpath,
                        key_node.start_mark.line + self.offset,
                        "small-duplicate-key",
                        f"key {key!r} appears twice in the same mapping",
                        "keep one of them: YAML parsers disagree on which one wins",
                    )
                )
            result[key] = self.build(value_node, (*path, key))
        return result

    def scalar(self, node: ScalarNode, path: Path_ | None) -> Any:
        value: str = node.value
        if node.style:  # quoted, literal or folded: always a string ('' or None is plain)
            return value
        if path is not None and len(path) == 1:
            self.doc.plain_strings.add(path)
        if node.ctag is not _PLAIN:
            return value  # an explicit tag: `!!str 12`, or an application tag
        resolved = _resolve_plain(value)
        if isinstance(resolved, str) and path is not None and TIMESTAMP_LIKE.match(value):
            self.doc.unquoted_timestamps.append(path)
        return resolved


_KEYWORDS: dict[str, Any] = {
    **dict.fromkeys(("", "~", "null", "Null", "NULL")),
    **dict.fromkeys(("true", "True", "TRUE"), True),
    **dict.fromkeys(("false", "False", "FALSE"), False),
}
_NUMERIC_START = frozenset("-+.0123456789")


def _resolve_plain(value: str) -> Any:
    """A plain scalar by the YAML 1.2 core schema (as the Go reference reads it)."""
    if value in _KEYWORDS:
        return _KEYWORDS[value]
    if value[0] not in _NUMERIC_START:
        return value
    if _INT.match(value):
        return int(value)
    if _OCT.match(value):
        return int(value[2:], 8)
    if _HEX.match(value):
        return int(value[2:], 16)
    if _FLOAT.match(value) and any(c.isdigit() for c in value):
        return float(value)
    if _INF.match(value):
        return float("-inf") if value.startswith("-") else float("inf")
    if _NAN.match(value):
        return float("nan")
    return value
