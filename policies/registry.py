"""The policy registry: built-in policies, and policies plugged in from outside.

A policy is a function `choose(state, legal, n_legal, params, stream) -> index`: given
the game state array, the first n_legal entries of `legal` (the legal actions), the
policy's parameters as a float64 array in declared order and its own random stream, it
returns the index in `legal` of the action to play. Compiled with the game's
POLICY_SIG (numba), it runs inside the compiled kernel; a plain Python function works
too, through the same interface, only slower.

Wrap it with `policy(game=..., params=[...])` to declare its game, name and parameters;
the first paragraph of its docstring is its description.
"""

import importlib
import inspect
import math
import os
import sys
from dataclasses import dataclass
from importlib import metadata

import numpy as np

ENTRY_POINT_GROUP = "sim.policies"


class PolicyError(ValueError):
    """A policy that cannot be found, or parameters it does not accept."""


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    default: float
    help: str = ""
    low: float | None = None
    high: float | None = None

    def parse(self, text):
        kind = "an integer" if self.type is int else "a finite number"
        try:
            value = _parse_float(text) if self.type is float else _parse_int(text)
        except ValueError:
            raise PolicyError(f"parameter {self.name} must be {kind}, not {text!r}") from None
        if (self.low is not None and value < self.low) or (
            self.high is not None and value > self.high
        ):
            raise PolicyError(f"parameter {self.name} must be in {self.low}..{self.high}")
        return value

    def describe(self):
        return f"{self.name}={self.default:g} ({self.type.__name__}) {self.help}".rstrip()


def _parse_float(text):
    """A finite float: nan and inf would reach a policy and the run's JSON description."""
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(text)
    return number


def _parse_int(text):
    number = _parse_float(str(text).replace("_", ""))
    if not number.is_integer():
        raise ValueError(text)
    return int(number)


@dataclass(frozen=True)
class Policy:
    game: str
    name: str
    choose: object
    params: tuple = ()
    description: str = ""

    @property
    def compiled(self):
        return hasattr(self.choose, "py_func")

    @property
    def summary(self):
        return self.description.split("\n\n")[0].replace("\n", " ").strip()

    def settings(self, pairs=()):
        """Parameter values from `k=v` strings, defaults elsewhere; refuse the unknown."""
        values = {p.name: p.type(p.default) for p in self.params}
        known = {p.name: p for p in self.params}
        for pair in pairs:
            key, sep, text = pair.partition("=")
            key = key.strip()
            if not sep:
                raise PolicyError(f"--param takes key=value, not {pair!r}")
            if key not in known:
                valid = ", ".join(known) or "none"
                raise PolicyError(f"policy {self.name} has no parameter {key!r} (valid: {valid})")
            values[key] = known[key].parse(text.strip())
        return values

    def param_vector(self, values):
        return np.array([float(values[p.name]) for p in self.params], np.float64)


def policy(game, name=None, params=()):
    """Declare a function as a policy of `game`: `@policy("calc", params=[Param(...)])`."""

    def wrap(choose):
        python_func = getattr(choose, "py_func", choose)
        return Policy(
            game=game,
            name=name or python_func.__name__.removesuffix("_nb").replace("_", "-"),
            choose=choose,
            params=tuple(params),
            description=inspect.cleandoc(python_func.__doc__ or ""),
        )

    return wrap


# Each game's policy modules, imported only when that game's policies are wanted.
_BUILTIN_MODULES = {
    "calc": ("policies.calc", "policies.calc_strong"),
    "montana": ("policies.montana", "policies.montana_solver"),
    "jokers": ("policies.jokers",),
}


def builtin_policies(game=None):
    """Built-in policies, in declaration order, of one game or of all."""
    found = []
    games = [game] if game else list(_BUILTIN_MODULES)
    for module_name in (m for g in games for m in _BUILTIN_MODULES.get(g, ())):
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as error:
            if error.name == module_name:
                continue
            raise
        found += [p for p in vars(module).values() if isinstance(p, Policy)]
    return [p for p in found if game is None or p.game == game]


def plugin_policies(game=None):
    """Policies that installed packages declare in the `sim.policies` entry points."""
    found = []
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        loaded = entry.load()
        if isinstance(loaded, Policy) and (game is None or loaded.game == game):
            found.append(loaded)
    return found


def resolve(game, spec):
    """The policy named by spec: a built-in or plug-in name, or `module:attribute`."""
    if ":" in spec:
        found = _load_object(spec)
    else:
        candidates = builtin_policies(game) + plugin_policies(game)
        found = next((p for p in candidates if p.name == spec), None)
        if found is None:
            known = ", ".join(p.name for p in candidates)
            raise PolicyError(f"unknown policy {spec!r} for {game} (known: {known})")
    if found.game != game:
        raise PolicyError(f"policy {spec!r} plays {found.game}, not {game}")
    return found


def _load_object(spec):
    module_name, _, attribute = spec.partition(":")
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise PolicyError(f"cannot import policy module {module_name!r}: {error}") from None
    found = getattr(module, attribute, None)
    if found is None:
        raise PolicyError(f"module {module_name!r} has no policy {attribute!r}")
    if not isinstance(found, Policy):
        raise PolicyError(f"{spec} is not a policy (wrap it with policies.policy)")
    return found
