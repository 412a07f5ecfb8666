"""How a deal ended: each game's outcome labels, indexed by the code its rows record.

Pure data, so that the command line and the analysis can name outcomes without loading
any compiled rules.
"""

CALC = ("lost", "won", "unknown")
MONTANA = ("lost", "won", "capped", "unknown")
JOKERS = ("lost", "won", "capped", "unknown")
