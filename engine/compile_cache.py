"""Compiled kernels cached on disk that never outlive the sources they were built from.

numba checks a cached function against its own source file only, so a kernel of
policies/calc_strong.py would keep running the code of engine/calc.py it was compiled
with after that file changed (an upgrade, a checkout, an edit). Installed before any
kernel is declared (engine.rng and engine.kernel call install() first), this makes every
cached function's source stamp cover the rules and policy sources too: any change there
recompiles what is loaded next, in place, instead of running old code.

install() also spares every process the scipy import numba makes as it loads its first
kernel (defer_blas_check below), since no kernel of ours calls BLAS.
"""

import contextlib
import functools
import hashlib
import importlib.util
import inspect
import sys
from pathlib import Path


@functools.cache
def sources_stamp(roots=None):
    """(newest modification time, total size) of the rules and policy sources."""
    roots = roots or _source_roots()
    newest, total = 0.0, 0
    for root in roots:
        for path in sorted(Path(root).glob("*.py")):
            status = path.stat()
            newest, total = max(newest, status.st_mtime), total + status.st_size
    return newest, total


@functools.cache
def sources_digest(roots=None):
    """A short hash of the rules and policy sources' contents: which code played a
    run's deals (a result file records it, and --resume holds to it)."""
    digest = hashlib.sha256()
    for root in roots or _source_roots():
        for path in sorted(Path(root).glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def _source_roots():
    # The engine's own folder and the policies package: beside each other in a checkout,
    # sim/engine and sim/policies once installed.
    policies = importlib.util.find_spec("sim.policies").submodule_search_locations
    return (str(Path(__file__).resolve().parent), *policies)


def install():
    """Make numba's file-backed cache locators stamp with the sources too (once), and
    defer numba's BLAS check (defer_blas_check)."""
    defer_blas_check()
    from numba.core import caching

    impl = getattr(caching, "CacheImpl", None) or getattr(caching, "_CacheImpl", None)
    mixin = getattr(caching, "_SourceFileBackedLocatorMixin", None)
    if impl is None or mixin is None or getattr(impl, "sim_stamped", False):
        return  # a numba without these internals keeps its own, per-file check
    impl._locator_classes = [
        _stamped(base) if issubclass(base, mixin) else base for base in impl._locator_classes
    ]
    impl.sim_stamped = True


def _stamped(base):
    def get_source_stamp(self):
        return (base.get_source_stamp(self), sources_stamp())

    return type(f"Stamped{base.__name__}", (base,), {"get_source_stamp": get_source_stamp})


@contextlib.contextmanager
def announce_compiles(say):
    """Within the block, call say(function) once, as the first real compile of a
    disk-cached function starts, with the Python function being compiled: not for a
    kernel loaded from the cache, so a warm start says nothing. say=None: no notice."""
    if say is None:
        yield
        return
    from numba.core import caching, event

    class FirstCompile(event.Listener):
        said = False

        def on_start(self, started):
            dispatcher = started.data["dispatcher"]
            # A function without a disk cache (a plug-in's guard) compiles on every run,
            # in a moment: there is no "once" to announce.
            on_disk = not isinstance(getattr(dispatcher, "_cache", None), caching.NullCache)
            if on_disk and not self.said:
                self.said = True
                say(dispatcher.py_func)

        def on_end(self, _):
            pass

    with event.install_listener("numba:compile", FirstCompile()):
        yield


def defer_blas_check():
    """Import numba.np.arraymath with its BLAS check put off until a kernel needs it.

    numba imports numba.np.arraymath as it compiles or loads the first kernel of a
    process, and that module decides at once, by importing scipy.linalg, whether
    compiled inner products (np.correlate, np.convolve) may call BLAS: about a quarter
    of a second of every run when scipy is installed, for kernels that never ask. Here
    the module is imported with that check replaced by one that runs the same import
    the first time a kernel is typed that asks, so every kernel compiles exactly as
    before. A numba without these internals is left as it is."""
    if "numba.np.arraymath" in sys.modules:
        return  # already imported: the check has run
    from numba.np import linalg

    ensure_blas = getattr(linalg, "ensure_blas", None)
    if ensure_blas is None:
        return
    linalg.ensure_blas = _no_check
    try:
        from numba.np import arraymath
    finally:
        linalg.ensure_blas = ensure_blas
    if getattr(arraymath, "ensure_blas", None) is _no_check:
        arraymath.ensure_blas = ensure_blas
    check = getattr(arraymath, "_check_blas", None)
    if check is not None and getattr(arraymath, "_HAVE_BLAS", None) is True:
        arraymath._HAVE_BLAS = _DeferredCheck(check)


def _no_check():
    pass


class _DeferredCheck:
    """True or false as check() says, asked once, the first time it is tested."""

    def __init__(self, check):
        self._check, self._answer = check, None

    def __bool__(self):
        if self._answer is None:
            self._answer = bool(self._check())
        return self._answer


def code_of(game, policy):
    """Which code plays a run: sim's sources digest, and for a game or policy from
    outside sim, `+` a digest of that plug-in's own sources, so that two plug-ins of one
    name but other code are never taken for one setting."""
    outside = sorted({*_plugin_sources(game.module_name), *_plugin_sources(_module_of(policy))})
    if not outside:
        return sources_digest()
    digest = hashlib.sha256()
    for path in outside:
        digest.update(str(path.name).encode() + b"\0" + path.read_bytes())
    return f"{sources_digest()}+{digest.hexdigest()[:12]}"


def _module_of(policy):
    """The name of the module that holds a policy's kernel, without importing it."""
    if isinstance(policy.kernel, str):
        return policy.kernel.partition(":")[0]
    function = getattr(policy.kernel, "py_func", policy.kernel)
    return getattr(function, "__module__", None) or ""


def _plugin_sources(module_name):
    """The source files of a module from outside sim: a package's every .py file (its
    helpers change its play too), a lone module's own file; () for sim's own."""
    if not module_name or module_name == "sim" or module_name.startswith("sim."):
        return ()
    module = sys.modules.get(module_name)
    origin = getattr(module, "__file__", None)
    if origin is None:
        try:
            spec = importlib.util.find_spec(module_name)
        except (ImportError, ValueError):
            return ()
        origin = spec.origin if spec else None
    if not origin or not origin.endswith(".py"):
        return ()
    top = module_name.partition(".")[0]
    if top != module_name:
        spec = importlib.util.find_spec(top)
        folders = (spec.submodule_search_locations or ()) if spec else ()
        return tuple(sorted(p for root in folders for p in Path(root).rglob("*.py")))
    return tuple(sorted(_with_helpers(module, Path(origin))))


def _with_helpers(module, origin):
    """A lone plug-in file and the modules it uses from its own folder (and theirs, in
    turn): a helper beside it changes its play as much as its own lines do. Only what it
    uses: two plug-ins side by side in one folder stay two codes."""
    folder, found = origin.resolve().parent, {origin.resolve()}
    todo = [module] if module is not None else []
    while todo:
        for value in list(vars(todo.pop()).values()):
            used = value if inspect.ismodule(value) else sys.modules.get(_home(value))
            path = Path(getattr(used, "__file__", None) or "").resolve()
            if path.suffix == ".py" and path.is_relative_to(folder) and path not in found:
                found.add(path)
                todo.append(used)
    return found


def _home(value):
    """The module a function or class was defined in ("" for other values)."""
    value = getattr(value, "py_func", value)
    return getattr(value, "__module__", "") if callable(value) else ""
