"""The notice of a first compile: what compiles, that it happens once, and for about how
long on this machine (engine.compile_times scales the declared seconds)."""

import contextlib
import time


class CompileNotice:
    """say(function) for compile_cache.announce_compiles: one line to `notice` (None:
    nothing said) as the first compile starts; it keeps what it declared and when.

    `seconds(declared)` turns declared seconds into this machine's (None: by its
    records of earlier compiles)."""

    def __init__(self, game, policy, notice, seconds=None):
        self.game, self.policy, self.notice = game, policy, notice
        self.seconds = seconds
        self.declared, self.started = None, None

    def __call__(self, function):
        self.started = time.monotonic()
        what, hints = self._what(function)
        self.declared = None if None in hints else float(sum(hints))
        if self.notice is None:
            return
        length = "up to a minute or two"
        if self.declared is not None:
            length = f"about {_rounded(self._machine_seconds(self.declared))} s"
        self.notice(
            f"compiling {what} for this machine: {length}, once (later runs load it from the cache)"
        )

    def _what(self, function):
        """What compiles, in words, and the declared seconds of each part."""
        game, policy = self.game, self.policy
        if _interpreted(policy):  # nothing of it compiles: what does is the rules' code
            return f"the {game.title} rules", [game.compile_seconds]
        if function.__module__ == game.module_name:
            what = f"the {game.title} rules and policy {policy.name}"
            return what, [policy.compile_seconds, game.compile_seconds]
        return f"policy {policy.name}", [policy.compile_seconds]

    def _machine_seconds(self, declared):
        if self.seconds is not None:
            return self.seconds(declared)
        from sim.engine import compile_times

        return compile_times.machine_seconds(declared)


def compile_notice(game, policy, notice, seconds=None):
    """A CompileNotice saying to `notice` what compiles; notice=None: None."""
    return None if notice is None else CompileNotice(game, policy, notice, seconds)


@contextlib.contextmanager
def announced_compile(game, policy, notice, timed=False):
    """A context in which a first compile of the game's rules or the policy is announced
    to `notice` (a function of one line) before the wait. `timed`: the block is that
    compile and nothing else, so its length is kept to calibrate later notices."""
    from sim.engine import compile_cache, compile_times

    heard = CompileNotice(game, policy, notice)
    with compile_cache.announce_compiles(heard if notice or timed else None):
        yield
    if timed and heard.started is not None and heard.declared is not None:
        compile_times.record(heard.declared, time.monotonic() - heard.started)


def _interpreted(policy):
    """A policy given as a plain Python function. A policy declared by name is not
    loaded here: loading it may be the very compile being announced."""
    return not policy.lazy and not policy.compiled


def _rounded(seconds):
    """Whole seconds under ten, else a multiple of five: as a person would say it."""
    if seconds < 9.5:
        return max(1, round(seconds))
    return int(round(seconds / 5.0)) * 5
