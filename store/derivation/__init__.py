"""Derivation: one mission's state, folded from its files, and everything derived from it.

The mission state and its ledger, request and mission status, the invariants, plan
binding and diffs, stale instructions, artifact checks, leases and the overview summary.
One derivation for the live view and `hud check`. Imports `store.format` and
`store.trust`.
"""
