"""What `hud DIR --open MISSION/REQUEST` (and a notification's link to `hud web`,
`{web_url}/?open=MISSION/REQUEST`) names: a request, as two ids of the format. Read by
the command line and by `hud web` alike (which must import no screen): the HUD opens it
with `hud.landing`."""

from __future__ import annotations

from store.format.layout import MISSION_ID_RE, REQUEST_ID_RE

Target = tuple[str, str]
"""A request: (mission id, request id)."""


def parse(text: str) -> Target:
    """`MISSION/REQUEST` as ids of the format (docs/format.md, "Ids"); ValueError if not."""
    mission, slash, request = text.partition("/")
    if not slash or not MISSION_ID_RE.match(mission) or not REQUEST_ID_RE.match(request):
        raise ValueError(f"{text[:300]!r} is not MISSION/REQUEST (two ids)")
    return mission, request
