"""What a worker plays: a job (game, policy, rules, seed) and chunks of its deals.

A run's workers and `sim show` (engine.run.one_deal) both play through here, so a deal
is played the same way wherever it is played.

A job travels as a small picklable spec, by name, so a forked worker, a Dask worker and
the parent all resolve it to the same compiled kernel. Playing a chunk never raises for
a policy's misbehaviour: the result says how many deals were finished and, if play
stopped early, which deal and why, so the caller keeps every deal before the fault.

A policy that is not built in is guarded: it is handed the state as always, but the
rules part of the state and the legal list are compared after each choice, so a policy
that writes into them (to fake a win, say) is caught instead of believed.
"""

import inspect
import json
import os
import threading
import time
from dataclasses import dataclass

import numpy as np
from numba import njit, types

from sim.engine import kernel, rng

LOG_END = np.iinfo(np.int16).min  # fills the unused tail of a deal's action log
# A chunk's action logs take count * log_width int16s, and log_width is the move cap: a
# run with a huge --max-moves gets smaller chunks instead of gigabytes of unused room.
LOG_CHUNK_BYTES = 32 << 20
LEGAL_ROOM = 1024  # more than any game's legal list
INT64_MIN, INT64_MAX = int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max)
IN_WORKER = False  # set in worker processes, which never see the user's Ctrl-C
_WORKER = None  # in a pool worker: (its process id, what a forked copy of it must do)
_DEAL_IN_PLAY = [-1]  # this process's own note of its deal (shared status may be ahead)


class PolicyFault(RuntimeError):
    """A policy misbehaved on one deal: it raised, exited, looped, or broke the contract."""

    def __init__(self, policy, seed, deal, reason):
        super().__init__(f"policy {policy} {reason} (seed {seed}, deal {deal})")
        self.policy, self.seed, self.deal, self.reason = policy, seed, deal, reason


FAULT_REASONS = {
    kernel.FAULT_BAD_CHOICE: "returned an index outside the legal list",
    kernel.FAULT_STATE_WRITTEN: "wrote into the game state it was given (it may only read it)",
    kernel.FAULT_LEGAL_WRITTEN: "wrote into the legal list it was given (it may only read it)",
    kernel.FAULT_NOT_AN_INDEX: "returned something other than an integer index",
}


def loop_reason(deal_timeout):
    """Why a deal still in play after deal_timeout seconds stopped the run."""
    return (
        f"took over {deal_timeout:g} s on one deal (a loop, or a slow policy: "
        "--deal-timeout allows it more)"
    )


@dataclass
class ChunkResult:
    """Rows (and logs) of the deals start .. start + done - 1, finished in order.

    `fault`, when set, is why deal start + done could not be played; `stalled`, that it
    is still in play in a thread of the process that played the chunk (engine.run.watch)."""

    start: int
    rows: np.ndarray
    logs: np.ndarray
    seconds: float = 0.0
    fault: str | None = None
    stalled: bool = False

    @property
    def done(self):
        return self.rows.shape[0]

    @property
    def fault_deal(self):
        return self.start + self.done


@dataclass
class Job:
    game: object
    policy: object
    module: object
    choose: object
    compiled: bool
    seed: int
    rules: np.ndarray
    params: np.ndarray
    log_width: int
    source: object = None  # deals not shuffled by sim (engine.deal_sources), or None
    rule_settings: dict | None = None  # the rules by name, as layouts are checked under


def most_logged_deals(log_width):
    """The most deals a chunk may hold so that their action logs fit LOG_CHUNK_BYTES
    (None: no log, no limit)."""
    if not log_width:
        return None
    return max(1, LOG_CHUNK_BYTES // (2 * log_width))


def trimmed_logs(logs):
    """The logs without the columns no deal reached: what is sent on is the moves
    played, not the room for the move cap."""
    if logs.shape[0] == 0 or logs.shape[1] == 0:
        return logs[:, :0]
    reached = np.flatnonzero(logs[:, -1] != LOG_END)  # a deal that used all its room
    if len(reached):
        return logs
    ends = np.argmax(logs == LOG_END, axis=1)  # each log is its moves, then LOG_END
    return logs[:, : int(ends.max())]


def logged_actions(log):
    """The actions of one deal's log, as Python ints."""
    return log[log != LOG_END].tolist()


def release_in_order(waiting, position):
    """Yield the results held in `waiting` (by first deal) that continue `position`.

    Returns the next position, or None once a result with a fault was yielded: play
    stops there."""
    while position in waiting:
        result = waiting.pop(position)
        yield result
        if result.fault is not None:
            return None
        position += result.done
    return position


def job_spec(request):
    """What a worker needs to play chunks of a run: small, picklable, by name."""
    return {
        "game": request.game.name,
        "policy": request.policy_spec,
        "params": request.params,
        "rules": request.rules,
        "seed": request.seed,
        "log": request.log_moves is not None,
        "deals": request.source.spec if request.source is not None else None,
    }


_JOBS = {}  # resolved jobs of this process, by spec


def resolve_job(spec):
    """The Job of a spec, made once per process."""
    key = json.dumps(spec, sort_keys=True)
    if key not in _JOBS:
        from sim.engine.games import get_game
        from sim.policies.registry import resolve

        game = get_game(spec["game"])
        policy = resolve(game.name, spec["policy"])
        source = None
        if spec.get("deals"):
            from sim.engine.deal_sources import from_spec

            source = from_spec(game, spec["deals"], spec["rules"])
        _JOBS[key] = make_job(
            game, policy, spec["seed"], spec["rules"], spec["params"], spec["log"], source
        )
    return _JOBS[key]


def make_job(game, policy, seed, rules, params, log, source=None):
    """The Job of game and policy: compiled or interpreted as the policy is, and guarded
    when the policy is not built in. `log`: whether its deals' actions are logged;
    `source`: where its deals come from when sim does not shuffle them (deal_sources)."""
    from sim.policies.registry import builtin_policies

    choose = policy.choose
    if not any(p is policy for p in builtin_policies(game.name)):
        choose = guarded(choose, game.module.POLICY_SCRATCH, policy.compiled)
    return Job(
        game=game,
        policy=policy,
        module=game.module,
        choose=choose,
        compiled=policy.compiled,
        seed=seed,
        rules=game.rules_vector(rules),
        params=policy.param_vector(params),
        log_width=game.max_log(rules) if log else 0,
        source=source,
        rule_settings=dict(rules),
    )


def load_kernel(spec):
    """Compile or load the job's kernel (and guard) without playing a deal."""
    play_chunk(spec, (0, 0))


def play_chunk(spec, chunk, status=None, rows=None):
    """The ChunkResult of deals chunk[0] .. chunk[0] + chunk[1] - 1 of the job spec.

    `status` (engine.kernel's block) may live in memory shared with a watching parent,
    and so may `rows` (play_job)."""
    start, count = chunk
    return play_job(resolve_job(spec), start, count, status, rows)


def play_job(job, start, count, status=None, rows=None, logs=None):
    """The ChunkResult of deals start .. start + count - 1 of job.

    `rows` and `logs`, if given, are where the kernel writes the rows (int32 [at least
    count, columns]) and the action logs (int16 [at least count, job.log_width]); the
    result's are then views of their first rows."""
    if rows is None:
        rows = np.zeros((count, len(job.game.columns)), np.int32)
    else:
        rows = rows[:count]
        rows[:] = 0
    if logs is None:
        logs = np.full((count, job.log_width), LOG_END, np.int16)
    else:
        logs = logs[:count]
        logs[:] = LOG_END
    if status is None:
        status = np.zeros(kernel.STATUS_SIZE, np.int64)
    clock = time.perf_counter()
    if job.source is not None:
        fault = play_sourced(job, start, rows, logs, status)
    elif job.compiled:
        job.module.play_deals_nb(
            job.choose, job.seed, start, job.rules, job.params, rows, logs, status
        )
        fault = FAULT_REASONS.get(int(status[kernel.FAULT]))
    else:
        fault = play_deals_python(job, start, rows, logs, status)
    done = int(status[kernel.DONE])
    if job.policy.settle is not None:
        settle_undecided(job, start, rows[:done], logs[:done], status)
    seconds = time.perf_counter() - clock
    return ChunkResult(start, rows[:done], trimmed_logs(logs[:done]), seconds, fault)


def settle_undecided(job, start, rows, logs, status):
    """The policy's last stage (Policy.settle) on each deal its kernel left `unknown`,
    before the chunk is handed on (settled). The deal being settled is shown in
    `status`, so a watching parent sees progress."""
    outcome = job.game.column_slots("outcome")[0]
    undecided = np.flatnonzero(rows[:, outcome] == kernel.OUTCOME_UNKNOWN)
    for i in undecided:
        status[kernel.IN_PLAY] = start + i
        settled(job, start_state(job, start + i), rows[i], logs[i])


def start_state(job, deal):
    """The state of deal of job as dealt: from its source, or from (seed, deal)."""
    if job.source is not None:
        return job.source.state(deal, job.rule_settings)
    state = np.zeros(job.module.STATE_SIZE, np.int16)
    job.module.start_nb(job.seed, deal, job.rules, state)
    return state


def settled(job, start, row, log):
    """Settle a deal left `unknown` from its start state `start`, in place: a deal the
    policy's settle wins is played again along its line (row and log rewritten by the
    rules, every move checked legal); one it proves lost becomes `unwinnable`."""
    verdict, line = _imported(job.policy.settle)(start.copy(), job.params)
    if verdict == kernel.OUTCOME_WON:
        _play_line(job, start, line, row, log)
    elif verdict == kernel.OUTCOME_UNWINNABLE:
        row[job.game.column_slots("outcome")[0]] = verdict


def _imported(name):
    import importlib

    module_name, _, attribute = name.partition(":")
    return getattr(importlib.import_module(module_name), attribute)


def _play_line(job, start, line, row, log):
    """The deal from state `start` played along `line` by the rules into row and log; it
    must win."""
    module = job.module
    state = start.copy()
    legal = np.empty(LEGAL_ROOM, np.int16)
    log[:] = LOG_END
    for move, action in enumerate(line):
        n = module.legal_actions_nb(state, legal)
        if action not in legal[:n]:
            raise RuntimeError(f"policy {job.policy.name}'s winning line breaks the rules")
        if move < len(log):
            log[move] = action
        module.apply_action_nb(state, action)
    row[:] = 0
    module.write_result_nb(state, row)
    if row[job.game.column_slots("outcome")[0]] != kernel.OUTCOME_WON:
        raise RuntimeError(f"policy {job.policy.name}'s winning line does not win")


def play_deals_python(job, start, rows, logs, status):
    """The interpreted twin of module.play_deals_nb; returns a fault reason or None."""
    module = job.module
    state = np.zeros(module.STATE_SIZE, np.int16)
    status[kernel.DONE] = 0
    for i in range(rows.shape[0]):
        deal = start + i
        status[kernel.IN_PLAY] = _DEAL_IN_PLAY[0] = deal
        args = (module, job.seed, deal, job.rules, job.choose, job.params, state, logs[i])
        fault = python_policy_fault(play_deal_python, *args)
        if fault is not None:
            return fault
        module.write_result_nb(state, rows[i])
        status[kernel.DONE] = i + 1
    return None


_PLAY_OUTS = {}  # rules module name -> (its play_out_nb for any policy, default args)


def compiled_play_out(module):
    """The game's play_out_nb compiled for kernel.PLAY_OUT_ARGS, whatever the policy
    (cached on disk, so loaded in milliseconds after the first time), and the defaults
    of the arguments it takes beyond those. Called with a policy from Python, the
    function would compile anew for each policy and each process."""
    if module.__name__ not in _PLAY_OUTS:
        dispatcher = module.play_out_nb
        params = list(inspect.signature(dispatcher.py_func).parameters.values())
        defaults = tuple(param.default for param in params[len(kernel.PLAY_OUT_ARGS) :])
        signature = kernel.PLAY_OUT_ARGS + tuple(types.Omitted(d) for d in defaults)
        dispatcher.compile(signature)
        _PLAY_OUTS[module.__name__] = dispatcher.overloads[signature].entry_point, defaults
    return _PLAY_OUTS[module.__name__]


def play_sourced(job, start, rows, logs, status):
    """Deals of the job's source (engine.deal_sources), each from its start state;
    returns a fault reason or None, as play_deals_python does."""
    if job.compiled:
        compiled_play_out(job.module)  # loaded (or compiled, announced) before any deal
    status[kernel.DONE] = 0
    for i in range(rows.shape[0]):
        deal = start + i
        status[kernel.IN_PLAY] = deal
        state = start_state(job, deal)
        fault = play_from_state(job, deal, state, logs[i])
        if fault is not None:
            return fault
        job.module.write_result_nb(state, rows[i])
        status[kernel.DONE] = i + 1
    return None


def play_from_state(job, deal, state, log):
    """Play deal of job on from `state` (a laid-out position): by the compiled rules for
    a compiled policy, else interpreted.

    Returns a fault reason or None, as play_deals_python does."""
    if job.compiled:
        play_out, defaults = compiled_play_out(job.module)
        stream = rng.new_stream(job.seed, deal, rng.STREAM_POLICY)
        args = (job.seed, deal, job.rules, state, job.choose, job.params, stream, log)
        return FAULT_REASONS.get(int(play_out(*args, *defaults)))
    args = (job.module, job.seed, deal, job.rules, job.choose, job.params, state, log)
    return python_policy_fault(play_out_python, *args)


def python_policy_fault(play, *args):
    """Call play(*args), which plays a deal with an interpreted policy and returns its
    fault code; the reason the policy made it fail, or None."""
    try:
        code = play(*args)
    except SystemExit as error:
        return f"called sys.exit({error.code!r})"
    except KeyboardInterrupt:
        # Ctrl-C reaches the main thread of an interactive process; workers ignore it,
        # and a thread (a Dask task's) never gets it: there the policy raised it.
        if not IN_WORKER and threading.current_thread() is threading.main_thread():
            raise
        return "raised KeyboardInterrupt"
    except BaseException as error:
        return f"raised {_one_line(error)}"
    return None if code == kernel.FAULT_NONE else FAULT_REASONS[code]


def play_chunk_python(module, choose, seed, start, rules, params, rows, logs):
    """The interpreted twin of module.play_chunk_nb: raises at a policy fault."""
    state = np.zeros(module.STATE_SIZE, np.int16)
    for i in range(rows.shape[0]):
        code = play_deal_python(module, seed, start + i, rules, choose, params, state, logs[i])
        if code != kernel.FAULT_NONE:
            raise ValueError(f"the policy {FAULT_REASONS[code]} (deal {start + i})")
        module.write_result_nb(state, rows[i])


def play_deal_python(module, seed, deal, rules, choose, params, state, log):
    """The interpreted twin of module.play_nb: the compiled rules, a Python policy."""
    module.start_nb(seed, deal, rules, state)
    return play_out_python(module, seed, deal, rules, choose, params, state, log)


def play_out_python(module, seed, deal, rules, choose, params, state, log):
    """module.play_out_nb run by the interpreter, so that it can call a Python policy."""
    stream = rng.new_stream(seed, deal, rng.STREAM_POLICY)
    play_out = getattr(module.play_out_nb, "py_func", module.play_out_nb)
    return play_out(seed, deal, rules, state, choose, params, stream, log)


def _one_line(error):
    text = " ".join(str(error).split())
    text = f"{type(error).__name__}: {text}" if text else type(error).__name__
    return text if len(text) <= 200 else text[:197] + "..."


# --- guarding policies that are not built in ---------------------------------------


def enter_worker(pid, on_forked_copy):
    """Mark this process as the pool worker `pid`: a guarded policy that forks it has
    the copy call on_forked_copy(deal) (which does not return) as soon as it chooses,
    with the deal the copy was made in (-1: not known)."""
    global IN_WORKER, _WORKER
    IN_WORKER, _WORKER = True, (pid, on_forked_copy)


def _leave_if_a_forked_copy():
    if _WORKER is not None and os.getpid() != _WORKER[0]:
        _WORKER[1](_DEAL_IN_PLAY[0])


def guarded(choose, protected, compiled):
    """choose, checked: CHOICE_STATE_WRITTEN if it changed state[:protected] or legal."""
    return _guard_compiled(choose, protected) if compiled else _guard_python(choose, protected)


def _guard_python(choose, protected):
    def guarded_choose(state, legal, n_legal, params, stream):
        state_before = state[:protected].copy()
        legal_before = legal[:n_legal].copy()
        choice = choose(state, legal, n_legal, params, stream)
        _leave_if_a_forked_copy()  # before anything the copy would do in the worker's name
        if not np.array_equal(state[:protected], state_before):
            return kernel.CHOICE_STATE_WRITTEN
        if not np.array_equal(legal[:n_legal], legal_before):
            return kernel.CHOICE_LEGAL_WRITTEN
        if isinstance(choice, bool) or not isinstance(choice, int | np.integer):
            return kernel.CHOICE_NOT_AN_INDEX
        if not INT64_MIN <= int(choice) <= INT64_MAX:
            return n_legal  # outside the legal list too, and the compiled rules take int64
        return int(choice)

    return guarded_choose


def _guard_compiled(choose, protected):
    # A closure over the plug-in's own dispatcher: compiled once per run, not cached.
    @njit(kernel.POLICY_SIG)
    def guarded_choose_nb(state, legal, n_legal, params, stream):
        state_before = state[:protected].copy()
        legal_before = legal[:n_legal].copy()
        choice = choose(state, legal, n_legal, params, stream)
        for i in range(protected):
            if state[i] != state_before[i]:
                return kernel.CHOICE_STATE_WRITTEN
        for i in range(n_legal):
            if legal[i] != legal_before[i]:
                return kernel.CHOICE_LEGAL_WRITTEN
        return choice

    return guarded_choose_nb
