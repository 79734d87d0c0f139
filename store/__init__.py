"""store package.

The store validates agent-written files with pydantic, whose plugins are entry points:
any installed package may register one and see every value validated. None runs here
(pydantic's documented switch, set before pydantic is imported); this also spares
every start the scan of all installed packages' metadata for them (about 0.1 s).

The switch leaves pydantic's plugin loader importing `importlib.metadata` (and the
email package under it: ~60 M instructions, a fifth of `hud check`'s start-up beyond
pydantic itself) when it builds its first validator, only to return no plugin: the
loader is stood in for by one that returns none without it, as the switch would.
"""

import os
import sys
from types import ModuleType

os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"


def _no_plugins() -> tuple[()]:
    """What pydantic's `get_plugins` returns with every plugin disabled."""
    return ()


if "pydantic.plugin._loader" not in sys.modules:
    _loader = ModuleType("pydantic.plugin._loader", "No pydantic plugins (store/__init__.py).")
    _loader.get_plugins = _no_plugins  # type: ignore[attr-defined]
    sys.modules["pydantic.plugin._loader"] = _loader
