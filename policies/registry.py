"""The policy registry: built-in policies, and policies plugged in from outside.

A policy is a function `choose(state, legal, n_legal, params, stream) -> index`: given
the game state array, the first n_legal entries of `legal` (the legal actions), the
policy's parameters as a float64 array in declared order and its own random stream, it
returns the index in `legal` of the action to play. Compiled with numba, it runs inside
the game's compiled kernel; a plain Python function works too, through the same
interface, only slower.

There are two ways to declare one, both giving a Policy:

- `Policy(game, name, kernel="package.module:function", params=..., description=...)`,
  the way of the built-ins: the declaration is light (this module imports neither
  numba nor numpy), so listings, help and completion read it at once, and the kernel
  (a lazily compiled `@njit(cache=True)` function) is imported and compiled for the
  game's POLICY_SIG only when something plays it, and only that one;
- `@policy(game, params=[...])` on the function itself, for a plug-in in one file; the
  first paragraph of its docstring is its description.
"""

import hashlib
import importlib
import importlib.util
import inspect
import math
import numbers
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

ENTRY_POINT_GROUP = "sim.policies"
# A policy's name and its parameters' names become parts of result file names, `--param`
# keys and the `params` column, so they are plain tokens, as the built-in names are.
PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,63}")
PLAIN_NAME_RULE = "1 to 64 letters, digits, - and _, not starting with -"
# Parameters reach a policy's kernel as one float64 vector: only numbers travel there.
PARAM_TYPES = (int, float)


class PolicyError(ValueError):
    """A policy that cannot be found, or parameters it does not accept."""


@dataclass(frozen=True)
class Param:
    """A declared policy parameter: its name, type (int or float), default, help, and
    bounds (low..high, both included). `--param NAME=VALUE` is parsed and checked against
    it; the kernel reads the value, as a float64, at the slot param_slots gives."""

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
        if not self._within(value):
            raise PolicyError(f"parameter {self.name} must be {self._range()}")
        if self.type is int and abs(value) > EXACT_INT:
            raise PolicyError(
                f"parameter {self.name} must be within -2**53..2**53 (a policy gets it as "
                "a 64-bit float)"
            )
        return value

    def _within(self, value):
        return (self.low is None or value >= self.low) and (self.high is None or value <= self.high)

    def _range(self):
        low, high = _bound(self.low), _bound(self.high)
        if high is None:
            return f"at least {low}"
        return f"at most {high}" if low is None else f"in {low}..{high}"

    def describe(self):
        # An integer as a user may type it back: 1_000_000, not 1e+06.
        default = f"{int(self.default):_}" if self.type is int else f"{self.default:g}"
        return f"{self.name}={default} ({self.type.__name__}) {self.help}".rstrip()

    def problem(self):
        """What is wrong with this declaration, in words, or None."""
        if not isinstance(self.name, str) or not PLAIN_NAME.fullmatch(self.name):
            return f"parameter name {self.name!r} is not a plain name ({PLAIN_NAME_RULE})"
        if self.type not in PARAM_TYPES:
            kind = getattr(self.type, "__name__", repr(self.type))
            return (
                f"parameter {self.name} is of type {kind}: parameters reach the kernel as "
                "numbers, so declare it int or float"
            )
        for what, number in (("default", self.default), ("low", self.low), ("high", self.high)):
            if (number is not None or what == "default") and not _is_number(number):
                return f"parameter {self.name} has {what} {_shown(number)}, not a finite number"
        if self.type is int and not float(self.default).is_integer():
            return f"parameter {self.name} is an int, and its default {self.default!r} is not"
        if None not in (self.low, self.high) and self.low > self.high:
            return f"parameter {self.name} has low {self.low!r} above high {self.high!r}"
        if not self._within(self.default):
            return f"parameter {self.name} has default {self.default!r}, not {self._range()}"
        return None


def param_slots(params, *names):
    """The index of each named parameter in the declared list `params`, in the order
    named: where a compiled policy finds it in its parameter vector. Policy modules keep
    these as module constants (numba freezes them), so the code reads params[SAMPLES],
    never a bare index. PolicyError if a name is not declared."""
    declared = [p.name for p in params]
    for name in names:
        if name not in declared:
            raise PolicyError(f"no parameter {name!r} is declared (declared: {declared})")
    return tuple(declared.index(name) for name in names)


def _is_number(value):
    # True is not the number 1 here, as it is to Python; an int beyond float64 is no
    # number either, since parameters reach the kernel as float64.
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def _shown(value, limit=40):
    """repr(value), cut short: a declared value can be an int of hundreds of digits
    (and Python refuses to write one of thousands)."""
    try:
        text = repr(value)
    except ValueError:
        return f"an int of {value.bit_length()} bits"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _bound(number):
    if number is None or not float(number).is_integer():
        return number
    return int(number)


def _parse_float(text):
    """A finite float: nan and inf would reach a policy and the run's JSON description."""
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(text)
    return number + 0.0  # -0 is 0: one setting, not two runs that compare apart


# An integer parameter reaches the kernel as a float64, exact up to 2**53: a larger
# one would be played as another number than the one recorded.
EXACT_INT = 2**53


def _parse_int(text):
    """An integer as typed (1000, 1_000, 1e3), exactly."""
    plain = str(text).replace("_", "").strip()
    try:
        number = int(plain)
    except ValueError:
        as_float = _parse_float(plain)
        if not as_float.is_integer():
            raise ValueError(text) from None
        return int(as_float)
    return number


@dataclass(frozen=True)
class Policy:
    """A policy of one game: its name, the kernel that chooses (the function itself, or
    "module:function" imported and compiled when the policy first plays), its declared
    parameters (Param) and its description. `exact_under` names the rule settings under
    which its wins are exactly the winnable deals; `settle`, a last stage for the deals
    its kernel leaves unknown."""

    game: str
    name: str
    # The choose function itself, or "module:function" naming it: imported (and, if
    # compiled, compiled for the game's POLICY_SIG) when the policy first plays.
    kernel: object
    params: tuple = ()
    description: str = ""
    compile_seconds: float | None = None  # a first compile's rough length, if known
    # The rule settings under which the policy decides every deal exactly from the deal
    # as dealt, so that the deals it wins are the winnable ones: () under any rules,
    # (("redeals", 0),) only without redeals (a redeal's shuffle is unknown before it
    # comes); None if it never does.
    exact_under: tuple | None = None
    # "module:function" of a last stage run on each deal the kernel left `unknown`:
    # settle(start state of the deal, params) -> (outcome code, winning line). Imported
    # only when such a deal comes; a winning line is played again by the rules.
    settle: str | None = None

    def __post_init__(self):
        object.__setattr__(self, "description", inspect.cleandoc(self.description))
        if _is_sequence(self.params):  # a list works too, kept as a tuple (hashable)
            object.__setattr__(self, "params", tuple(self.params))
        problem = self.problem()
        if problem:
            raise PolicyError(f"policy {self.name!r} of {self.game}: {problem}")

    def problem(self):
        """What is wrong with this declaration, in words, or None: checked as it is
        made, so a bad plug-in is refused before it names a file or plays a deal."""
        if not isinstance(self.name, str) or not PLAIN_NAME.fullmatch(self.name):
            return f"its name is not a plain name ({PLAIN_NAME_RULE})"
        if not isinstance(self.kernel, str) and not callable(self.kernel):
            return (
                f"its kernel {_shown(self.kernel)} is not a function, nor "
                '"module:function" naming one'
            )
        if self.settle is not None and not (isinstance(self.settle, str) and ":" in self.settle):
            return f'its settle {_shown(self.settle)} is not "module:function" naming one'
        if not isinstance(self.params, tuple):
            kind = type(self.params).__name__
            return f"params is a sequence of Param (params=[Param(...)]), not a {kind}"
        names = [getattr(param, "name", None) for param in self.params]
        for param in self.params:
            problem = param.problem() if isinstance(param, Param) else f"{param!r} is not a Param"
            if problem:
                return problem
            if names.count(param.name) > 1:
                return f"parameter {param.name} is declared twice"
        return None

    def is_exact(self, rules):
        """Whether this policy's wins are the winnable deals under rules (a dict of
        rule settings, values as text or numbers)."""
        if self.exact_under is None:
            return False
        return all(str(rules.get(name)) == str(value) for name, value in self.exact_under)

    @property
    def choose(self):
        if not isinstance(self.kernel, str):
            return self.kernel
        if self.kernel not in _LOADED_KERNELS:
            _LOADED_KERNELS[self.kernel] = _load_kernel(self)
        return _LOADED_KERNELS[self.kernel]

    @property
    def lazy(self):
        """Declared by name and not yet loaded: nothing of it is imported."""
        return isinstance(self.kernel, str) and self.kernel not in _LOADED_KERNELS

    @property
    def compiled(self):
        return hasattr(self.choose, "py_func")

    @property
    def summary(self):
        return self.description.split("\n\n")[0].replace("\n", " ").strip()

    def settings(self, pairs=()):
        """Parameter values from `k=v` strings, defaults elsewhere; refuse the unknown."""
        values = {p.name: p.type(p.default) + 0 for p in self.params}  # + 0: -0.0 is 0.0
        for pair in pairs:
            key, sep, text = (part.strip() for part in pair.partition("="))
            if not sep:
                raise PolicyError(f"--param takes key=value, not {pair!r}")
            values[key] = self.param(key).parse(text)
        return values

    def param(self, name):
        """The declared parameter `name`; refuse the unknown."""
        for declared in self.params:
            if declared.name == name:
                return declared
        valid = ", ".join(p.name for p in self.params) or "none"
        raise PolicyError(f"policy {self.name} has no parameter {name!r} (valid: {valid})")

    def param_vector(self, values):
        import numpy as np  # here: declaring and listing policies needs no numpy

        return np.array([float(values[p.name]) for p in self.params], np.float64)


def _is_sequence(value):
    # A str or a mapping iterates, but not into Params.
    return isinstance(value, Iterable) and not isinstance(value, str | bytes | Mapping)


_LOADED_KERNELS = {}  # "module:function" -> its choose function, compiled, per process


def _load_kernel(policy):
    """The function policy.kernel names, compiled for the game's policy signature if it
    is a lazily compiled numba function (a cached compile loads from disk)."""
    from sim.engine.games import get_game

    module_name, _, attribute = policy.kernel.partition(":")
    where = f"policy {policy.name} of {policy.game}: its kernel {policy.kernel!r}"
    try:
        found = getattr(importlib.import_module(module_name), attribute, None)
    except (Exception, SystemExit) as error:
        raise PolicyError(f"{where} cannot be imported: {_describe(error)}") from None
    if not callable(found):
        raise PolicyError(f"{where} is not a function")
    if hasattr(found, "compile") and hasattr(found, "py_func"):
        try:
            found.compile(get_game(policy.game).module.POLICY_SIG)
        except Exception as error:
            raise PolicyError(
                f"{where} does not compile as choose(state, legal, n_legal, params, "
                f"stream) -> int: {_compile_error(error)}"
            ) from None
    return found


def _compile_error(error):
    """numba's many-line, colour-coded error in one line: its first statement of what is
    wrong (the line after "Failed in nopython mode pipeline"), and where."""
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line).strip() for line in str(error).splitlines()]
    lines = [line for line in lines if line and not line.startswith("Failed in ")]
    where = next((line for line in lines if line.startswith("File ")), "")
    return f"{type(error).__name__}: {lines[0] if lines else ''}" + (f" ({where})" if where else "")


def policy(game, name=None, params=()):
    """Declare a function as a policy of `game`: `@policy("calc", params=[Param(...)])`."""

    def wrap(choose):
        python_func = getattr(choose, "py_func", choose)
        return Policy(
            game=game,
            name=name or _derived_name(game, python_func),
            kernel=choose,
            params=params,
            description=inspect.cleandoc(python_func.__doc__ or ""),
        )

    return wrap


def _derived_name(game, function):
    """The policy name a function's own name gives: `tallest_pile_nb` is tallest-pile.
    Leading underscores (a private function) are no part of it: the user never wrote
    them as the policy's name."""
    own = getattr(function, "__name__", "")
    derived = own.removesuffix("_nb").lstrip("_").replace("_", "-")
    if not derived and own:
        raise PolicyError(
            f"policy function {own!r} of {game}: its name gives no policy name; give the "
            f"policy a name: @policy({game!r}, name=...)"
        )
    return derived


def builtin_policies(game=None):
    """Each game's own policies (its Game's policy_modules), in declaration order, of
    one game or of all; a game's modules are imported only when its policies are wanted."""
    from sim.engine.games import registered_games

    games = registered_games()
    names = [game] if game else list(games)
    found = []
    for name in (g for g in names if g in games):
        for module_name in games[name].policy_modules:
            module = _policy_module(name, module_name)
            found += [p for p in vars(module).values() if isinstance(p, Policy)]
    return [p for p in found if game is None or p.game == game]


def _policy_module(game, module_name):
    """A game's policy module; one that cannot be imported is named, not passed over."""
    try:
        return importlib.import_module(module_name)
    except (Exception, SystemExit) as error:
        raise PolicyError(
            f"cannot import {module_name!r}, a policy module of {game}: {_describe(error)}"
        ) from None


def plugin_policies(game=None):
    """Policies that installed packages declare in the `sim.policies` entry points."""
    found = {}  # (game, policy name) -> (policy, where it is declared)
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        where = f"plug-in {entry.name!r} ({entry.value})"
        try:
            loaded = entry.load()
        except (Exception, SystemExit) as error:
            raise PolicyError(f"cannot load policy {where}: {_describe(error)}") from None
        if isinstance(loaded, Policy) and (game is None or loaded.game == game):
            _refuse_a_builtin_name(loaded, where)
            _refuse_a_twin(loaded, where, found.get((loaded.game, loaded.name)))
            found.setdefault((loaded.game, loaded.name), (loaded, where))
    return [plugged_in for plugged_in, _ in found.values()]


def _refuse_a_twin(plugged_in, where, earlier):
    """Two plug-ins of one game under one name: the name would play only the first, and
    their rows would pool under it. One policy declared by two entry points is itself."""
    if earlier is None or earlier[0] is plugged_in:
        return
    raise PolicyError(
        f"policy {where} is named {plugged_in.name!r}, as policy {earlier[1]} of "
        f"{plugged_in.game} is: give one of them another name"
    )


def _refuse_a_builtin_name(plugged_in, where):
    """A plug-in named like a built-in policy of its game would be taken for it: its
    rows would pool with the built-in's, under the same name."""
    for builtin in builtin_policies(plugged_in.game):
        if builtin.name == plugged_in.name and builtin is not plugged_in:
            raise PolicyError(
                f"policy {where} is named {plugged_in.name!r}, as a built-in "
                f"{plugged_in.game} policy is: give it another name"
            )


def resolve(game, spec):
    """The policy named by spec: a built-in or plug-in name, `module:attribute`, or
    `path/to/file.py:attribute`."""
    if ":" in spec:
        found = _load_object(spec)
    else:
        candidates = builtin_policies(game)
        found = next((p for p in candidates if p.name == spec), None)
        if found is None:
            candidates += plugin_policies(game)
            found = next((p for p in candidates if p.name == spec), None)
        if found is None:
            known = ", ".join(p.name for p in candidates)
            raise PolicyError(f"unknown policy {spec!r} for {game} (known: {known})")
    if found.game != game:
        raise PolicyError(f"policy {spec!r} plays {found.game}, not {game}")
    if ":" in spec:
        _refuse_a_builtin_name(found, spec)
    return found


def _load_object(spec):
    source, _, attribute = spec.rpartition(":")
    if not source or not attribute:
        raise PolicyError(
            f"policy {spec!r} is not NAME, MODULE:ATTRIBUTE or PATH/FILE.py:ATTRIBUTE"
        )
    if source.endswith(".py") or "/" in source or os.sep in source:
        module = _load_file(source)
        where = f"file {source}"
    else:
        module = _import_module(source)
        where = f"module {source!r}"
    found = getattr(module, attribute, None)
    if found is None:
        raise PolicyError(f"{where} has no policy {attribute!r}" + _by_name(module, spec))
    if not isinstance(found, Policy):
        raise PolicyError(f"{spec} is not a policy (wrap it with sim.policies.registry.policy)")
    return found


def _by_name(module, spec):
    """A hint naming the attribute of the module's policy whose name spec gave."""
    source, _, name = spec.rpartition(":")
    for attribute, value in vars(module).items():
        if isinstance(value, Policy) and value.name == name:
            return f" (the policy named so is its attribute {attribute}: give {source}:{attribute})"
    return ""


def _import_module(name):
    """Import a plug-in module: installed modules first, then the current folder's.

    The current folder goes at the end of the search path, never at the front, so a
    stray tqdm.py or numpy.py there cannot stand in for the real package."""
    if not all(part.isidentifier() for part in name.split(".")):
        raise PolicyError(
            f"{name!r} is not a module name; give MODULE:ATTRIBUTE or PATH/FILE.py:ATTRIBUTE"
        )
    _search_last(os.getcwd())
    try:
        return _imported_plugin(name)
    except ImportError as error:
        raise PolicyError(f"cannot import policy module {name!r}: {error}") from None
    except (Exception, SystemExit) as error:  # the module's own code failed
        raise PolicyError(f"cannot import policy module {name!r}: {_describe(error)}") from None


def _load_file(source):
    """Load a plug-in given as a file path, under a name no installed module has."""
    path = Path(source)
    if path.suffix != ".py":
        raise PolicyError(f"policy file {source} is not a Python file (.py)")
    if not path.is_file():
        raise PolicyError(f"no policy file {source}")
    resolved = path.resolve()
    name = _file_module_name(resolved)
    if name in sys.modules:
        return sys.modules[name]
    _search_last(str(resolved.parent))  # for the helper modules it imports from beside it
    spec = importlib.util.spec_from_file_location(name, resolved)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as error:
        del sys.modules[name]
        raise PolicyError(f"cannot load policy file {source}: {_describe(error)}") from None
    return module


def _imported_plugin(name):
    try:
        return importlib.import_module(name)
    except ImportError as error:
        if not _loaded_by_path_before(name, error):
            raise
    return importlib.import_module(name)


def _file_module_name(resolved):
    """The module name a plug-in file is loaded under: its own, for its path."""
    digest = hashlib.sha1(str(resolved).encode()).hexdigest()[:8]
    stem = re.sub(r"\W", "_", resolved.stem)
    return f"_sim_policy_{stem}_{digest}"


def _loaded_by_path_before(name, error):
    """Whether importing module `name` failed for want of the name its file had when it
    was loaded by path: numba's cache beside the file then holds kernels compiled under
    that name. If so, the file is loaded under it too (the cache then loads)."""
    if not (error.name or "").startswith("_sim_policy_"):
        return False
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return False
    resolved = Path(spec.origin).resolve()
    if _file_module_name(resolved) != error.name:
        return False
    _load_file(str(resolved))
    return True


def _search_last(folder):
    if folder not in sys.path:
        sys.path.append(folder)


def _describe(error):
    text = re.sub(r"\s+", " ", str(error)).strip()
    if isinstance(error, PolicyError):  # a declaration refused: its message says it all
        return text
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
