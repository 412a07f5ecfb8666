"""Stop signals: Ctrl-C, SIGTERM and SIGHUP (a scheduler's stop) ask a run to stop."""

import contextlib
import signal
import threading


class StopSignals:
    """Within the block, SIGINT, SIGTERM and SIGHUP ask the run to stop.

    While `immediate` (loading the kernel, or waiting on a Dask cluster) a signal
    interrupts at once; otherwise it only sets `signum`, which the pool polls, so that
    no write is ever cut in half."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

    def __init__(self):
        self.signum = None
        self.immediate = True
        self._old = {}

    def requested(self):
        return self.signum is not None

    def _handle(self, signum, frame):
        self.signum = self.signum or signum
        if self.immediate:
            raise KeyboardInterrupt

    def __enter__(self):
        # Only the main thread may install handlers: a run in another thread takes none.
        if threading.current_thread() is threading.main_thread():
            self._old = {s: signal.signal(s, self._handle) for s in self.SIGNALS}
        return self

    def __exit__(self, *exc):
        for signum, old in self._old.items():
            signal.signal(signum, old)


@contextlib.contextmanager
def ending_at_once():
    """Within the block, SIGINT, SIGTERM and SIGHUP end the process at once, by their
    default action. For work that writes nothing (`sim show`): a compiled search does
    not return to Python before it ends, so a Python handler would wait for it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, signal.SIG_DFL) for s in StopSignals.SIGNALS}
    try:
        yield
    finally:
        for signum, handler in old.items():
            signal.signal(signum, handler)
