"""How a deal ended: the outcome labels, indexed by the code a result row records.

The codes are engine.kernel's OUTCOME_LOST, OUTCOME_WON, OUTCOME_CAPPED, OUTCOME_UNKNOWN
and OUTCOME_UNWINNABLE, the same for every game. Pure data, so that the command line and the
analysis can name outcomes without loading any compiled rules.
"""

LABELS = ("lost", "won", "capped", "unknown", "unwinnable")
# `lost`: play ended without a win (the rules ended it, or a policy resigned); the deal
# may still be winnable. `unwinnable`: a search proved that no line of play wins it.

# The built-in games' labels, by the names engine.games reads: all of them LABELS.
CALC = LABELS
MONTANA = LABELS
JOKERS = LABELS
