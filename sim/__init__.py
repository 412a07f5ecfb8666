"""sim: a batch simulator for patience games.

The source folders cli/, engine/ and policies/ install as sim.cli, sim.engine and
sim.policies, so that `sim` is the only top-level name the project takes.
"""
