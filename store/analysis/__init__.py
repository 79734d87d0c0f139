"""Analysis: a mission's history read back.

Plan review, replay of a mission at any event, and coordination metrics. The top room:
nothing else in the store imports it.
"""
