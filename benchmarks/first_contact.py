"""First contact: the README's first command on a fresh clone, timed.

Clones the repository (its committed HEAD) into a scratch folder, installs it with the
README's command into a fresh virtual environment (which sees the packages already
installed for this Python, so nothing is downloaded), then runs the main job in a
pseudo-terminal, as a user at a terminal would, and reports when each thing appeared,
counted from the end of `pip install`: the first output, the compile notice, the
progress bar, and the exit.

    python benchmarks/first_contact.py                 # this checkout's HEAD
    python benchmarks/first_contact.py --repo URL-OR-PATH --keep
"""

import argparse
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

INSTALL = ["pip", "install", "-e", "."]  # the README's first command: install, then the main job
MAIN_JOB = ["sim", "calc", "--policy", "greedy", "-n", "1e6"]
BAR = re.compile(rb"\d+%\|")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]))
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder")
    options = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="sim-first-contact-"))
    try:
        clone, venv = scratch / "sim", scratch / "venv"
        subprocess.run(["git", "clone", "-q", options.repo, str(clone)], check=True)
        make_venv = [sys.executable, "-m", "venv", "--system-site-packages", str(venv)]
        subprocess.run(make_venv, check=True)
        clock = time.perf_counter()
        pip = [str(venv / "bin" / INSTALL[0]), *INSTALL[1:], "-q"]
        subprocess.run(pip, cwd=clone, check=True, stdout=subprocess.DEVNULL)
        print(f"{' '.join(INSTALL):<28}{time.perf_counter() - clock:6.1f} s")
        events = run_in_terminal([str(venv / "bin" / MAIN_JOB[0]), *MAIN_JOB[1:]], clone)
        for label, seconds in events:
            print(f"{label:<28}{seconds:6.1f} s after the install")
    finally:
        if options.keep:
            print(f"kept {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)


def run_in_terminal(command, folder):
    """[(event, seconds)] of one command run with a terminal as its stdout and stderr."""
    clock = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        os.chdir(folder)
        os.execv(command[0], command)
    events, seen, output = [], set(), b""
    while True:
        ready, _, _ = select.select([fd], [], [], 1.0)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # the terminal closed: the command ended
            break
        if not chunk:
            break
        output += chunk
        now = time.perf_counter() - clock
        for label, found in (
            ("first output", bool(output.strip())),
            ("compile notice", b"compiling" in output),
            ("progress bar", bool(BAR.search(output))),
        ):
            if found and label not in seen:
                seen.add(label)
                events.append((label, now))
    os.waitpid(pid, 0)
    events.append(("exit", time.perf_counter() - clock))
    return events


if __name__ == "__main__":
    main()
