"""Sources: each kind of durable agent state behind `Source` (base.py), in its own folder.

`native/` (the format's own missions), `small/` (SMALL Protocol workspaces),
`loopexec/` (loopexec runs) and `loopx/` (loopx goals); `registry.py` is the one typed
table of them that the workspace reads. Sources import the format, trust and
derivation rooms only.
"""
