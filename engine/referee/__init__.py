"""Independent referees of move logs, one per game, written from the rule book alone.

They share no code with the compiled engine (a game's Game record names its referee):
each reads a move-log line (the JSON
object of RULES.md), keeps its own piles in plain Python, and returns a Verdict: the
first illegal move with its number and the reason in words, or a wrong claimed
outcome or score. `sim replay` and the tests use them to check the engine and any
other program's logs.
"""

import json
from dataclasses import dataclass


@dataclass(frozen=True)
class Verdict:
    ok: bool
    move: int | None = None  # 1-based number of the first illegal move
    reason: str = ""

    def __str__(self):
        if self.ok:
            return "ok"
        return f"move {self.move}: {self.reason}" if self.move else self.reason


VALID = Verdict(True)

# What a log whose moves end in a loss may claim: lost; unknown (a solver gave up before
# deciding); unwinnable (a solver proved no line wins, which moves alone cannot show).
LOSS_CLAIMS = ("lost", "unknown", "unwinnable")


class IllegalMove(Exception):
    """Raised inside a referee: the move `number` breaks a rule, for `reason`."""

    def __init__(self, number, move, reason):
        super().__init__(f"{move}: {reason}")
        self.number = number
        self.move = move
        self.reason = reason

    def verdict(self):
        return Verdict(False, self.number, f"{self.move}: {self.reason}")


class BadLine(Exception):
    """A line whose layout or keys are wrong before any move is played."""


def check_line(line):
    """The verdict on one move-log line (a dict)."""
    from sim.engine.games import registered_games

    games = registered_games()
    if "game" not in line:
        return Verdict(False, None, 'no "game": not a move-log line')
    name = line["game"]
    if not isinstance(name, str) or name not in games:
        return Verdict(False, None, f"unknown game {json.dumps(name)}")
    problem = _deal_problem(line) or _rules_problem(games[name], line) or _score_problem(line)
    if problem:
        return Verdict(False, None, problem)
    try:
        referee = games[name].referee_module
    except ImportError as error:  # a plugged-in game whose referee cannot be loaded
        return Verdict(False, None, f"cannot load the referee of game {name!r}: {error}")
    from sim.engine.referee.shapes import shape_problem

    problem = shape_problem(line, getattr(referee, "LAYOUT_SHAPE", {}))
    if problem:
        return Verdict(False, None, problem)
    try:
        return referee.check(line)
    except IllegalMove as illegal:
        return illegal.verdict()
    except BadLine as bad:
        return Verdict(False, None, str(bad))
    except KeyError as missing:
        key = missing.args[0] if missing.args else None
        name = json.dumps(key) if isinstance(key, str | int) else "a key"
        return Verdict(False, None, f"malformed line: no {name}")
    except (TypeError, ValueError, IndexError, AttributeError, OverflowError):
        # A plugged-in game's referee that declares no LAYOUT_SHAPE, met with a value of
        # another kind: its Python words would name no key, so none are shown.
        return Verdict(
            False, None, "malformed line: a value is not of the kind the rule book gives"
        )


INT64_MAX = 2**63 - 1  # seeds and deal indices are int64 in the kernels and the files
INT64_MIN = -(2**63)
# A seed below 0 marks deals sim did not shuffle: PySolFC's numbers, layouts typed in
# (engine.deal_sources); a deal is an index, 0 and above.
LOWEST = {"seed": (INT64_MIN, "-2**63"), "deal": (0, "0")}


def _deal_problem(line):
    """Why the seed or deal the line gives names no deal a run can play, or None: the
    same values `sim calc --seed/--start` and `sim show --layout` accept."""
    for name in ("seed", "deal"):
        value = line.get(name)
        if name in line and not _is_deal_number(value, LOWEST[name][0]):
            return _not_valid(name, value, f"an integer in {LOWEST[name][1]}..2**63-1")
    return None


def _is_deal_number(value, lowest=0):
    # True is not the number 1 here, as it is to Python (and JSON's 4.0 is no integer).
    return isinstance(value, int) and not isinstance(value, bool) and lowest <= value <= INT64_MAX


def _rules_problem(game, line):
    """Why a rule value the line gives is not one its game allows, or None. The allowed
    values are the game's own declaration (its RuleOptions), so the referees, written
    from the rule book, never see a deal of impossible rules."""
    for option in game.rules:
        if option.name in line and not option.allows(line[option.name]):
            allowed = f"an integer in {option.low}..{option.high}"
            return _not_valid(option.name, line[option.name], allowed)
    return None


def _not_valid(name, value, allowed):
    shown = json.dumps(value)
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f"the line has {name}={shown}, not a valid value ({allowed})"


LINE_LIMIT = 2**24  # bytes: a move-log line is at most some tens of kilobytes


def check_log_file(path):
    """Yield (line number, line dict or None, Verdict) for each non-blank line of a log
    (decompressed if its name ends in .gz or .zst)."""
    from sim.engine.compressed import READ_ERRORS, bounded_lines, open_binary_lines

    with open_binary_lines(path) as file:
        number = 0
        try:
            for number, data in enumerate(bounded_lines(file, LINE_LIMIT), 1):
                if data is None:
                    limit = f"{LINE_LIMIT // 2**20} MiB"
                    yield number, None, Verdict(False, None, f"longer than {limit}: not a deal")
                    continue
                yield from _check_data(number, data)
        except READ_ERRORS as error:  # a damaged or mislabelled compressed file
            yield number + 1, None, Verdict(False, None, f"cannot read on: {_describe(error)}")


SNIFF_BYTES = 8192  # the start of a file that tells a move log from anything else
PARQUET_MAGIC = b"PAR1"


def not_a_move_log(path):
    """Why the file at path is no move log at all (binary data, a result file, text of
    another kind), in one line; None when it may be one, damaged or not. A log is JSON
    Lines text: no NUL byte, and its first line that is not blank UTF-8 and an object
    (a damaged line further on is the reader's to report, by its number)."""
    from sim.engine.compressed import READ_ERRORS, open_binary_lines

    try:
        with open_binary_lines(path) as file:
            head = file.read(SNIFF_BYTES)
    except READ_ERRORS:
        return None  # a damaged compressed log: read line by line, it says where
    if head.startswith(PARQUET_MAGIC):
        return f"{path} is a Parquet file (a result file?), not a move log: give the JSON Lines log"
    first = next((line.strip() for line in head.splitlines() if line.strip()), b"{")
    if b"\0" in head or not _starts_as_utf8(first):
        return f"{path} holds binary data, not a move log (JSON Lines text)"
    if not first.startswith(b"{"):
        return f"{path} is not a move log: its first line is not a JSON object"
    return None


def _starts_as_utf8(data):
    """Whether bytes are UTF-8, but for a character cut short at their end."""
    import codecs

    try:
        codecs.getincrementaldecoder("utf-8")().decode(data, final=False)
    except UnicodeDecodeError:
        return False
    return True


class LongNumber(ValueError):
    """An integer in a log line longer than any a deal holds."""


INT_DIGITS = 40  # a seed or deal has at most 19 digits, a count far fewer


def _short_int(text):
    # Python refuses to read or print integers of over 4,300 digits, and a longer one
    # would cost seconds: none belongs to a deal, so the line is no deal.
    if len(text.lstrip("-")) > INT_DIGITS:
        raise LongNumber(f"a number of {len(text.lstrip('-')):,} digits: not a deal")
    return int(text)


def _describe(error):
    return str(error) or type(error).__name__


def _check_data(number, data):
    """The verdict on one raw line of a log (nothing for a blank line)."""
    import json

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        yield number, None, Verdict(False, None, "not UTF-8 text")
        return
    if not text.strip():
        return
    try:
        line = json.loads(text, parse_int=_short_int)
    except json.JSONDecodeError as error:
        yield number, None, Verdict(False, None, f"not valid JSON ({error.msg})")
        return
    except LongNumber as error:
        yield number, None, Verdict(False, None, str(error))
        return
    except RecursionError:
        yield number, None, Verdict(False, None, "not valid JSON (nested too deeply)")
        return
    if not isinstance(line, dict):
        yield number, None, Verdict(False, None, "not a JSON object")
        return
    yield number, line, check_line(line)


def _score_problem(line):
    """A claimed score that is not a whole number ("28" would read as the 28 it is not)."""
    score = line.get("score", 0)
    if isinstance(score, int) and not isinstance(score, bool):
        return None
    return f'"score" must be a whole number, not {json.dumps(score)}'
