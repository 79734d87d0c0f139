"""Parts of `hud web`'s server: what it does with a HUD's stderr."""

from __future__ import annotations

import asyncio

import pytest


async def test_a_huds_stderr_is_logged_within_bounds(caplog: pytest.LogCaptureFixture) -> None:
    from hud.web.server import MAX_STDERR, _log_stderr

    stream = asyncio.StreamReader()
    stream.feed_data(b"Traceback\n\x1b]0;evil\x07line\n" + b"x" * (MAX_STDERR * 4) + b"\n")
    stream.feed_eof()
    with caplog.at_level("WARNING", logger="hud.web"):
        await _log_stderr(stream)
    logged = [record.getMessage() for record in caplog.records]
    assert logged[0] == "HUD: Traceback"
    assert sum(len(line) for line in logged) < MAX_STDERR + 100 * len(logged)
    assert stream.at_eof()
