"""What a Claude Code tool call will do, as an approver reads it, from the request alone.

`call_preview(tool, args)` renders `Edit` and `MultiEdit` as a diff per edit (old_string
→ new_string, `difflib`) under the file's path, `Write` as the new content with its path
and size, `Bash` as the command with its description, and `WebFetch` with the URL's host
set apart (the host the call reaches, as IDNA too when it is not ASCII). Any other tool,
or args not shaped as Claude Code sends them, gives None: the raw args say it all.

Every agent string goes through `safe` (markup never parsed, controls and bidi visible);
lines are split at `\\n` only, so other line breaks show as what they are. No file IO.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from rich.text import Text

from widgets.safe_text import safe
from widgets.status import theme_style

MAX_LINES = 400
"""Lines of a diff or of written content shown; the raw args hold the rest."""
MAX_DIFFED = 4000
"""Lines of old and new text at most that are diffed (a diff costs more than linear)."""

Variables = Mapping[str, str] | None


class _Shape(Exception):
    """The args are not what the tool's Claude Code input looks like."""


def call_preview(tool: str | None, args: Any, variables: Variables = None) -> Text | None:
    """What the call will do, or None when there is nothing to show but the raw args."""
    build = _BUILDERS.get(tool or "")
    if build is None or not isinstance(args, dict):
        return None
    try:
        return build(args, variables)
    except _Shape:
        return None


def _string(args: Mapping[str, Any], key: str, *, required: bool = True) -> str:
    value = args.get(key)
    if isinstance(value, str):
        return value
    if value is None and not required:
        return ""
    raise _Shape(key)


def _head(verb: str, path: str) -> Text:
    head = Text(f"{verb} ", style="bold")
    head.append_text(safe(path))
    return head


def _capped(lines: list[Text], what: str) -> list[Text]:
    if len(lines) <= MAX_LINES:
        return lines
    more = Text(f"  … {len(lines) - MAX_LINES} more {what} lines: see the raw args", "dim")
    return [*lines[:MAX_LINES], more]


def _diff(old: str, new: str, variables: Variables) -> list[Text]:
    """old → new as a unified diff, each line made safe and marked - / +."""
    before, after = old.split("\n"), new.split("\n")
    if len(before) + len(after) > MAX_DIFFED:
        said = f"  {len(before):,} lines replaced by {len(after):,}: too long to diff here, "
        return [Text(said + "see the raw args", style="bold")]
    styles = {
        "-": theme_style("$error", variables),
        "+": theme_style("$success", variables),
        "@": theme_style("dim", variables),
    }
    found = difflib.unified_diff(before, after, lineterm="", n=3)
    lines = []
    for line in list(found)[2:]:  # past the ---/+++ header
        text = safe(line)
        style = styles.get(line[:1])
        if style is not None:
            text.stylize(style)
        lines.append(text)
    return lines or [Text("  (old_string and new_string are the same)", style="dim")]


def _edit(args: Mapping[str, Any], variables: Variables) -> Text:
    head = _head("edit", _string(args, "file_path"))
    if args.get("replace_all") is True:
        head.append(" · every occurrence", style="bold")
    old, new = _string(args, "old_string"), _string(args, "new_string")
    return Text("\n").join([head, *_capped(_diff(old, new, variables), "diff")])


def _multi_edit(args: Mapping[str, Any], variables: Variables) -> Text:
    edits = args.get("edits")
    if not isinstance(edits, list) or not all(isinstance(e, dict) for e in edits):
        raise _Shape("edits")
    head = _head("edit", _string(args, "file_path"))
    head.append(f" · {len(edits)} edit{'s' if len(edits) != 1 else ''}, in order", style="bold")
    lines = [head]
    for number, edit in enumerate(edits, start=1):
        title = Text(f"edit {number} of {len(edits)}", style="bold underline")
        if edit.get("replace_all") is True:
            title.append(" · every occurrence", style="bold")
        old, new = _string(edit, "old_string"), _string(edit, "new_string")
        lines += [title, *_diff(old, new, variables)]
    return Text("\n").join(_capped(lines, "diff"))


def _write(args: Mapping[str, Any], variables: Variables) -> Text:
    content = _string(args, "content")
    rows = content.split("\n")
    size = len(content.encode("utf-8", "surrogatepass"))
    head = _head("write", _string(args, "file_path"))
    head.append(f" · {size:,} bytes, {len(rows)} line{'s' if len(rows) != 1 else ''}", "bold")
    head.append(" (the whole file: it replaces what is there)", style="dim")
    added = theme_style("$success", variables)
    lines = [Text("+ ", style=added) + safe(row) for row in rows]
    return Text("\n").join([head, *_capped(lines, "content")])


def _bash(args: Mapping[str, Any], variables: Variables) -> Text:
    command = _string(args, "command")
    description = _string(args, "description", required=False)
    lines = []
    if description:
        lines.append(Text("description: ", style="dim") + safe(description))
    prompt = Text("$ ", style="bold")
    body = Text("\n  ").join(safe(row) for row in command.split("\n"))
    body.stylize("bold")
    lines.append(prompt + body)
    flags = [
        f"timeout {args['timeout']} ms" if isinstance(args.get("timeout"), int) else "",
        "in the background" if args.get("run_in_background") is True else "",
    ]
    if any(flags):
        lines.append(Text(" · ".join(f for f in flags if f), style="dim"))
    return Text("\n").join(lines)


def _web_fetch(args: Mapping[str, Any], variables: Variables) -> Text:
    url = _string(args, "url")
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    line = Text("host: ", style="dim")
    if host:
        line.append_text(safe(host))
        line.stylize(theme_style("$warning bold reverse", variables), len("host: "))
        ascii_form = _idna(host)
        if ascii_form != host:
            line.append(" = ")
            line.append_text(safe(ascii_form))
    else:
        line.append("none: the URL does not parse", style="bold")
    lines = [line, Text("fetch ", style="bold") + safe(url)]
    prompt = _string(args, "prompt", required=False)
    if prompt:
        lines.append(Text("prompt: ", style="dim") + safe(prompt))
    return Text("\n").join(lines)


def _idna(host: str) -> str:
    """The host as DNS sees it (`xn--...` for a non-ASCII name), or itself."""
    if host.isascii():
        return host
    try:
        return host.encode("idna").decode("ascii")
    except UnicodeError:
        return host


_BUILDERS: dict[str, Callable[[Mapping[str, Any], Variables], Text]] = {
    "Edit": _edit,
    "MultiEdit": _multi_edit,
    "Write": _write,
    "Bash": _bash,
    "WebFetch": _web_fetch,
}
