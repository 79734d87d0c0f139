"""The index: a whole state directory in memory, kept up to date.

The workspace over every source, the watcher's batches, the background scrub, `hud
check`'s checks, the approval checks over the queue and the SMALL prefetch. Imports the
sources (through `store.sources.registry`) and below.
"""
