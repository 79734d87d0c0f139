"""store package.

The store validates agent-written files with pydantic, whose plugins are entry points:
any installed package may register one and see every value validated. None runs here
(pydantic's documented switch, set before pydantic is imported); this also spares
every start the scan of all installed packages' metadata for them (about 0.1 s).
"""

import os

os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
