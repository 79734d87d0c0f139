"""The cache: what was verified of each log, kept in the user's cache folder to open again
in time proportional to what changed.

Never in the state directory (`sealed.cache_folder` refuses one inside it), never trusted
blindly: every file is sealed (`sealed.py`: a magic naming the format version, then an
HMAC-SHA256 under a random per-user key kept 0600 in the cache folder, then a msgspec
payload decoded against a strict schema); a file that is short, foreign, of another
version, tampered with or that does not decode is ignored (and rewritten next time).
Writes are atomic (temp file, fsync, rename); the folder is bounded (LRU over a byte
budget). docs/format.md, "The verified-prefix cache", says what it trusts and when.

How to use it (the API, stable):

* `open_cache(root)` (`store.cache.sealed`): the cache folder for a state directory, or
  None when there is none (disabled by `HUD_CACHE_DIR=off`, unwritable, inside the root).
* `store.cache.entry`: `LogEntry`, a log's verified prefix (identity, offset, lines, chain
  head, digest of the prefix, line starts) with the folded state at its end (`state`)
  and `checkpoints` (`StateCheckpoint`: the folded state every K lines, for replay);
  `snapshot(reader, saved, checkpoints)` takes one from a `LogReader` that read the
  prefix itself and found it `clean` (`Snapshot.entry(fstat)` makes the entry),
  `reusable(entry, opened)` applies the reuse rules to the log as it is now (same inode,
  no shorter, ctime and size as verified or only grown, the chain head still hashing
  from the bytes at the recorded offset), `resume(reader, entry)` starts a fresh reader
  at the end of the prefix (the prefix trusted until the scrub hashes it again).
* `store.cache.state`: `encode_state(saved)` / `decode_state(data)`, the versioned codec
  of a mission's folded aggregates (`MissionState.saved(EVENT_AGGREGATES)` or
  `EVIDENCE_AGGREGATES`, and anything else made of the fold's records and tuples).
* `store.cache.prefix.PrefixIndex`: the entries of one state directory (one sealed
  pack): `get(relpath)` (until the first flush), `put(entry)`, `remember(snapshot)` and
  `flush()` (IO: off the event loop; it lets the entries go). `Workspace.cached(root)`
  makes a workspace over it; `Workspace.flush_cache()` writes what it verified.
* `store.cache.logs`: one log's entry with its checkpoints, in a file of its own (for
  replay): `load_log(cache, root, relpath, opened)`, `save_log(cache, root, entry)`,
  `nearest(entry, line)` (the checkpoint at or before a line).

Imports `store.derivation` and `store.format`.
"""

from store.cache.sealed import Cache, open_cache

__all__ = ["Cache", "open_cache"]
