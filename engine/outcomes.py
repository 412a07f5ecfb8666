"""How a deal ended: the outcome labels, indexed by the code a result row records.

The codes are engine.kernel's OUTCOME_LOST, OUTCOME_WON, OUTCOME_CAPPED and
OUTCOME_UNKNOWN, the same for every game. Pure data, so that the command line and the
analysis can name outcomes without loading any compiled rules.
"""

LABELS = ("lost", "won", "capped", "unknown")

# The built-in games' labels, by the names engine.games reads: all of them LABELS.
CALC = LABELS
MONTANA = LABELS
JOKERS = LABELS
