"""loopx goals (huangruiteng/loopx), read-only: registry, goal state files, runtime logs.

See docs/loopx.md for the layout and how each field maps to the HUD and to `loopx status`.
The folder's name is here, where the registry reads it without loading the source.
"""

FOLDER = ".loopx"
