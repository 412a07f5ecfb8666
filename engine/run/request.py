"""What a run is asked to play, its default file name, and the checks made on it before
any file is touched."""

import os
from dataclasses import dataclass
from pathlib import Path

from sim.engine import compile_cache
from sim.engine.compressed import is_compressed_name
from sim.engine.game import DEFAULT_DEAL_TIMEOUT

MAX_DEAL = 2**63 - 1  # deal indices are stored as int64
# The description keys that make two runs one: the rows of one may continue the other's.
SAME_RUN_KEYS = ("game", "rules", "policy", "params", "seed", "start", "n")


class RunError(ValueError):
    """A run that cannot start: bad output path, nothing to resume, mismatched resume."""


class BadRequest(RunError):
    """A run refused for what was typed alone, whatever the files: options that exclude
    each other, or a value no run takes. The command line is what must change."""


def played_by_other_code(stored, mine):
    """Why the deals of a stored run description cannot be finished by this sim, when
    it names other code of the rules and policies than `mine` (a description of this
    run); None when the code is the same, or not stored (files from before it was)."""
    theirs = stored.get("code", mine["code"])
    if theirs == mine["code"]:
        return None
    return (
        "its deals were played by other code of the rules and policies "
        f"(code {theirs}, this sim's {mine['code']})"
    )


@dataclass
class RunRequest:
    game: object
    policy: object
    policy_spec: str
    params: dict
    rules: dict
    seed: int
    start: int
    n: int
    workers: int
    out: Path
    overwrite: bool = False
    resume: bool = False
    log_moves: Path | None = None
    scheduler: str | None = None  # a Dask scheduler address, or "local"
    deal_timeout: float = DEFAULT_DEAL_TIMEOUT
    source: object = None  # deals sim did not shuffle (engine.deal_sources), or None

    def description(self):
        """The run as its journal and result file describe it: with a source of deals,
        its spec under `deals` (the seed alone says which deals they are)."""
        deals = {} if self.source is None else {"deals": self.source.spec}
        return deals | {
            "game": self.game.name,
            "rules": self.rules,
            "policy": self.policy.name,
            "policy_spec": stored_spec(self.policy_spec),
            "params": self.params,
            "seed": self.seed,
            "start": self.start,
            "n": self.n,
            "log_moves": str(Path(self.log_moves).absolute()) if self.log_moves else None,
            "code": compile_cache.code_of(self.game, self.policy),
        }

    def executor(self):
        """Where the deals are played, as the result file records it."""
        if self.scheduler is not None:
            return f"dask {self.scheduler}"
        return f"local, {self.workers} worker(s)"


def stored_spec(spec):
    """The policy spec a result file records: a plug-in file's path made absolute, so
    that the run resumes from any folder, and only with that very file."""
    source, colon, attribute = spec.rpartition(":")
    if colon and (source.endswith(".py") or "/" in source or os.sep in source):
        return f"{Path(source).resolve()}:{attribute}"
    return spec


def default_filename(game, policy, params, rules, seed, start, n):
    parts = [game.name, policy.name]
    parts += [
        f"{k}{_short_number(v)}" for k, v in params.items() if _differs_from_default(policy, k, v)
    ]
    parts += [f"{k}{v}" for k, v in rules.items()]
    parts.append(f"seed{seed}")
    if start:
        parts.append(f"start{start}")
    parts.append(f"n{n}")
    return "-".join(parts).replace("_", "") + ".parquet"


def _short_number(value):
    """The value as it reads shortest and still tells settings apart: six digits where
    they say it exactly, else every digit it needs (0.1234567 is not 0.1234568)."""
    text = f"{value:g}"
    return text if float(text) == value else repr(float(value))


def _differs_from_default(policy, name, value):
    return next(p for p in policy.params if p.name == name).default != value


# Names that promise another format: a result file is always Parquet.
OTHER_FORMATS = {".csv": "csv"} | dict.fromkeys(
    (".tsv", ".json", ".jsonl", ".txt", ".xlsx", ".xls", ".feather", ".arrow", ".html", ".md")
)


def check_request(request):
    """Refuse what check_typed refuses, and a scheduler nothing useful answers at."""
    check_typed(request)
    if request.scheduler is not None:
        _check_scheduler(request.scheduler)


def check_typed(request):
    """Refuse (BadRequest) --resume with --overwrite, deals past 2**63 - 1, an output
    name of another format and a malformed scheduler address: wrong whatever the files."""
    check_resume_or_overwrite(request.resume, request.overwrite)
    _check_parquet_name(Path(request.out))
    if request.start + request.n - 1 > MAX_DEAL:
        raise BadRequest(f"deals {request.start} .. {request.start + request.n - 1} pass 2**63 - 1")
    if request.scheduler is not None:
        _check_scheduler_address(request.scheduler)


def check_resume_or_overwrite(resume, overwrite):
    # Together they would ask to complete the rows a file holds and to throw them away.
    if resume and overwrite:
        raise BadRequest(
            "--resume and --overwrite exclude each other: --resume completes the rows a "
            "file holds, --overwrite replaces them"
        )


def _check_parquet_name(out):
    if is_compressed_name(out):
        raise BadRequest(
            f"--out {out}: result files are Parquet, compressed inside; write {out.with_suffix('')}"
        )
    suffix = out.suffix.lower()
    if suffix not in OTHER_FORMATS:
        return
    parquet = out.with_suffix(".parquet")
    if OTHER_FORMATS[suffix]:
        hint = f"convert it with `sim export {parquet} --to csv --out {out}`"
    else:
        hint = "`sim export` converts it to CSV"
    raise BadRequest(f"--out {out}: result files are Parquet; write {parquet} ({hint})")


def _check_scheduler_address(address):
    # Imported here: a local run never loads the cluster code.
    from sim.engine.run.cluster import ClusterError, check_address

    try:
        check_address(address)
    except ClusterError as error:
        raise BadRequest(str(error)) from None


def _check_scheduler(address):
    from sim.engine.run.cluster import ClusterError, check_reachable

    try:
        check_reachable(address)
    except ClusterError as error:
        raise RunError(str(error)) from None
