"""Preloaded into the worker processes of a local Dask cluster (engine.run.cluster).

Ctrl-C reaches the whole process group, the cluster's workers included, and each would
end with a traceback printed over the run's one line. The run (the parent) owns Ctrl-C:
it keeps what its workers finished and says so. So a worker that gets it just ends, at
once and in silence, as one stopped by a signal."""

import logging
import os
import signal


def dask_setup(worker):
    signal.signal(signal.SIGINT, _end_in_silence)
    logging.getLogger("distributed").setLevel(logging.CRITICAL)  # its closing chatter too


def _end_in_silence(signum, frame):
    os._exit(128 + signum)
