"""Compiled kernels cached on disk that never outlive the sources they were built from.

numba checks a cached function against its own source file only, so a kernel of
policies/calc_strong.py would keep running the code of engine/calc.py it was compiled
with after that file changed (an upgrade, a checkout, an edit). Installed before any
kernel is declared (engine.rng and engine.kernel call install() first), this makes every
cached function's source stamp cover the rules and policy sources too: any change there
recompiles what is loaded next, in place, instead of running old code.
"""

import contextlib
import functools
import importlib.util
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


def _source_roots():
    # The engine's own folder and the policies package: beside each other in a checkout,
    # sim/engine and sim/policies once installed.
    policies = importlib.util.find_spec("sim.policies").submodule_search_locations
    return (str(Path(__file__).resolve().parent), *policies)


def install():
    """Make numba's file-backed cache locators stamp with the sources too (once)."""
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
