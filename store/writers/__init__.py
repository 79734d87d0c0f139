"""Writers: the only code that writes a state directory.

The agent's writer, the human's writer (the HUD's only writer), minimal TOML edits and
the revisions a human replace keeps. Never imports `store.analysis`.
"""
