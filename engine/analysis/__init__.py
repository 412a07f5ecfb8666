"""Analysis of result files: pooled summaries, paired comparisons, reports, conversions.

Everything here is pure functions over Arrow tables and numpy arrays; the command line
(cli/analysis.py) only parses options, calls these and prints or writes what they return.
"""

from sim.engine.analysis.inputs import AnalysisError

__all__ = ["AnalysisError"]
