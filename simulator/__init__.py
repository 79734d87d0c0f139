"""The demo simulator: plays agents into a state directory through `store.writers.agent` only.

Run it as `python -m simulator DIR [--missions N] [--rate R] [--seed S] [--ticks N]`.
It is an agent: the HUD never imports it.
"""
