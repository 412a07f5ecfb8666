"""Sweeps: policies over a grid of parameter values, every setting on the same deals.

`--param depth_weight=0,0.5,1 --param king_pile=0,1` with `--policy planner` is six
settings; several `--policy` values sweep each policy over the parameters it declares.
Each setting is one ordinary run, written to its own file in one folder, so the folder
is one dataset, and an interrupted sweep resumes file by file. A file that already holds
its setting's run, complete, is kept as it is: the same sweep run again plays only what
is missing.
"""

import itertools
from dataclasses import dataclass
from pathlib import Path

from sim.engine.run.files import shortened
from sim.engine.run.request import (
    BadRequest,
    RunError,
    check_resume_or_overwrite,
    default_filename,
)


@dataclass(frozen=True)
class Setting:
    policy: object  # a registry Policy
    params: dict  # every parameter of the policy, by name


def grid_values(pairs):
    """{name: [value texts]} from `--param k=v1,v2` strings, in the order given."""
    grid = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep:
            raise BadRequest(f"--param takes key=value, not {pair!r}")
        name = name.strip()
        if name in grid:
            raise BadRequest(f"--param {name} is given twice; list its values as {name}=A,B")
        grid[name] = [value.strip() for value in text.split(",")]
        if any(not value for value in grid[name]):
            raise BadRequest(f"--param {pair}: an empty value in the list")
    return grid


def settings(policies, pairs):
    """Every (policy, parameters) setting: the policies in the order given, each over the
    grid of the parameters it declares (the first --param varies slowest)."""
    grid = grid_values(pairs)
    unknown = [name for name in grid if not any(_declares(p, name) for p in policies)]
    if unknown:
        names = ", ".join(p.name for p in policies)
        raise BadRequest(f"no policy among {names} has a parameter {unknown[0]!r}")
    found = []
    for policy in policies:
        mine = {name: values for name, values in grid.items() if _declares(policy, name)}
        for combination in itertools.product(*mine.values()):
            pairs_now = [f"{name}={value}" for name, value in zip(mine, combination, strict=True)]
            setting = Setting(policy, policy.settings(pairs_now))
            if setting not in found:
                found.append(setting)
    return found


def _declares(policy, name):
    return any(param.name == name for param in policy.params)


def check_distinct(policies):
    """Refuse a policy given twice (`-p greedy -p greedy`): one setting, not a sweep."""
    seen = set()
    for policy in policies:
        if (policy.name, str(policy.kernel)) in seen:
            raise BadRequest(f"-p {policy.name} is given twice")
        seen.add((policy.name, str(policy.kernel)))


def is_sweep(policies, pairs):
    return len(policies) > 1 or any("," in pair for pair in pairs)


def default_folder(game, policies, pairs, rules, seed, start, n):
    """results/GAME/sweep-...: named for the policies, the grid, the rules and the deals,
    so that two different sweeps never share a folder."""
    names = "-".join(policy.name for policy in policies)
    grid = [f"{k}{','.join(v)}" for k, v in grid_values(pairs).items()]
    parts = ["sweep", names, *grid, *(f"{k}{v}" for k, v in rules.items()), f"seed{seed}"]
    parts += [f"start{start}"] if start else []
    return Path("results") / game.name / ("-".join([*parts, f"n{n}"]).replace("_", ""))


def setting_file(folder, game, setting, rules, seed, start, n):
    name = default_filename(game, setting.policy, setting.params, rules, seed, start, n)
    return Path(folder) / name


def check_folder(folder):
    """Refuse a sweep's --out that names a result file (BadRequest), or is one."""
    folder = Path(folder)
    if folder.suffix.lower() == ".parquet":
        raise BadRequest(_not_a_folder(folder))
    try:
        a_file = folder.exists() and not folder.is_dir()
    except OSError as error:  # a name too long, a folder that cannot be searched
        raise RunError(f"--out {shortened(folder)}: {error.strerror}") from None
    if a_file:
        raise RunError(_not_a_folder(folder))


def _not_a_folder(folder):
    return f"--out {folder}: a sweep writes a folder of result files, not one file"


def started(path):
    """True when a sweep's file, or the journal a killed run of it left, exists."""
    path = Path(path)
    return path.exists() or path.with_name(f".{path.name}.journal").exists()


def check_files(files, resume, overwrite, complete=()):
    """Before any play: a fresh sweep replaces no file unless asked, and a resumed one
    has something to resume. complete: the files that already hold their setting's run,
    complete (kept, never replaced)."""
    check_resume_or_overwrite(resume, overwrite)
    if resume and not any(started(path) for path in files):
        raise RunError(f"nothing to resume: no file of this sweep in {Path(files[0]).parent}")
    existing = [path for path in files if Path(path).exists() and path not in complete]
    if existing and not (resume or overwrite):
        raise RunError(
            f"{existing[0]} exists; use --overwrite to replace the sweep's files,"
            " or --resume to go on with them"
        )
