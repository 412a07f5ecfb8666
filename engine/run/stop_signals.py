"""Stop signals: Ctrl-C, SIGTERM and SIGHUP (a scheduler's stop).

A signal is never raised into numba or LLVM: an exception raised into them as they
import or compile is swallowed by a ctypes callback, turned into an ImportError, or
leaves half-built objects that print tracebacks as they go. So a command ends at once
while nothing of its own is half written (stop_at_once, saying what say_kept last
said); a run notes a stop and acts on it between writes (StopSignals); plain Python that
undoes its work as it unwinds (a file under a temporary name, a child process) is
interrupted (StopSignals.immediate, raising_stops); and compiled work runs beside a
waiting main thread (beside), so that a handler never waits for it."""

import contextlib
import os
import signal
import sys
import threading

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class StopSignals:
    """Within the block, SIGINT, SIGTERM and SIGHUP ask the run to stop.

    A signal only sets `signum`, which the run polls, so that no write is ever cut in
    half. While `immediate` (plain Python that undoes its work as it unwinds: waiting on
    a Dask cluster, writing files under temporary names) the first signal interrupts at
    once, as a KeyboardInterrupt."""

    def __init__(self):
        self.signum = None
        self.immediate = False
        self._old = {}

    def requested(self):
        return self.signum is not None

    def _handle(self, signum, frame):
        self.signum = self.signum or signum
        if self.immediate:
            self.immediate = False  # once: a second signal must not cut the clean-up
            raise KeyboardInterrupt

    def __enter__(self):
        self._old = _install(self._handle)
        return self

    def __exit__(self, *exc):
        _restore(self._old)


def _install(handler):
    # Only the main thread may install handlers: work in another thread takes none.
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {s: signal.signal(s, handler) for s in SIGNALS}


def _restore(old):
    for signum, handler in old.items():
        signal.signal(signum, handler)


_KEPT = ["nothing written"]


def say_kept(line):
    """What a stop ending the command at once (stop_at_once) says is kept, from now on:
    set by the work that writes, before it lets such a stop in again."""
    _KEPT[0] = line


def kept_so_far():
    return _KEPT[0]


def stop_at_once():
    """Make SIGINT, SIGTERM and SIGHUP end the process at once, with one line,
    `interrupted: ` and what say_kept last said, and exit 128 + signal: for a command
    while no file of its own is half written (the blocks below say when one is)."""

    def stop(signum, frame):
        with contextlib.suppress(Exception):  # the interrupted code may be writing to it
            sys.stdout.flush()
        after_caret = "\n" if signum == signal.SIGINT and _on_a_terminal() else ""
        with contextlib.suppress(OSError):
            os.write(2, f"{after_caret}interrupted: {_KEPT[0]}\n".encode())
        os._exit(128 + signum)

    _install(stop)


def _on_a_terminal():
    try:
        return os.isatty(2)
    except OSError:
        return False


class Stopped(BaseException):
    """A stop signal raised by raising_stops. `unwritten`: the files whose writing it
    cut short, removed as it unwound; `written`: files it let finish first."""

    def __init__(self, signum, unwritten=(), written=()):
        super().__init__(signum)
        self.signum, self.unwritten, self.written = signum, list(unwritten), list(written)

    def what_is_kept(self):
        """What the `interrupted: ` line says, or None when the stop named no file."""
        if self.written:
            return f"{', '.join(map(str, self.written))} written in full"
        if self.unwritten:
            return f"{', '.join(map(str, self.unwritten))} not written"
        return None


@contextlib.contextmanager
def raising_stops():
    """Within the block, the first SIGINT, SIGTERM or SIGHUP raises Stopped: for plain
    Python that cleans up as it unwinds (a file under a temporary name, a child
    process). Later ones are only noted, so that they do not cut the clean-up. The
    block gets the StopSignals: with `immediate` turned off, a stop is only noted."""
    with StopSignals() as stop:
        stop.immediate = True
        try:
            yield stop
        except KeyboardInterrupt:
            raise Stopped(stop.signum or signal.SIGINT) from None


@contextlib.contextmanager
def ending_at_once():
    """Within the block, SIGINT, SIGTERM and SIGHUP end the process at once, by their
    default action. For work that writes nothing (`sim show`): a compiled search does
    not return to Python before it ends, so a Python handler would wait for it."""
    old = _install(signal.SIG_DFL)
    try:
        yield
    finally:
        _restore(old)


def beside(work, stop=None):
    """Call work() in a thread of its own while this one waits: True once it is done,
    False as soon as stop.requested() (the thread is then left to end with the process).
    An exception of work() is raised here.

    A compile, or a long compiled loop, runs no Python for seconds or minutes, and a
    signal handler runs only in the main thread between Python steps: waiting here keeps
    handlers prompt, and nothing is ever raised into the work."""
    failure = []

    def call():
        try:
            work()
        except BaseException as error:  # handed to the waiting thread, raised there
            failure.append(error)

    worker = threading.Thread(target=call, name="sim-beside", daemon=True)
    worker.start()
    while worker.is_alive():
        if stop is not None and stop.requested():
            return False
        worker.join(0.05)
    if failure:
        raise failure[0]
    return True
