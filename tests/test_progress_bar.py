"""The progress bar on a terminal: drawn on a terminal only, hidden by TQDM_DISABLE, in
ASCII under NO_COLOR; and NO_COLOR takes the colour out of `sim show`."""

import fcntl
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import time

ESCAPE = b"\x1b["


def on_terminal(tmp_path, *args, columns=100, stdout_too=False, **env):
    """Run `sim ARGS` with its stderr (and its stdout with stdout_too) on a
    pseudo-terminal `columns` wide (0: one nobody sized); return what the terminal got
    and the stdout that did not go there."""
    master, slave = pty.openpty()
    if columns:
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("TQDM_DISABLE", "NO_COLOR")}
    process = subprocess.Popen(
        [sys.executable, "-m", "sim", *map(str, args)],
        cwd=tmp_path,
        env=environment | {"PYTHONIOENCODING": "utf-8"} | env,
        stdin=subprocess.DEVNULL,
        stdout=slave if stdout_too else subprocess.PIPE,
        stderr=slave,
    )
    os.close(slave)
    screen = b""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if not select.select([master], [], [], 1)[0]:
            continue
        try:
            data = os.read(master, 65536)
        except OSError:  # the terminal's last holder closed it
            break
        if not data:
            break
        screen += data
    os.close(master)
    stdout = process.stdout.read() if process.stdout else b""
    assert process.wait(timeout=60) == 0, screen.decode(errors="replace")
    return screen, stdout


def run_calc(tmp_path, **options):
    return on_terminal(tmp_path, "calc", "-n", 2000, "--out", tmp_path / "run.parquet", **options)


def test_the_bar_is_drawn_on_a_terminal_from_zero_to_every_deal(tmp_path):
    screen, stdout = run_calc(tmp_path)
    assert b"  0%|" in screen
    assert "100%|█".encode() in screen
    assert b"2000/2000" in screen and b"deals/s" in screen  # whole deals below 10,000
    assert b"deals       2,000" in stdout


def test_a_terminal_that_reports_no_size_still_gets_the_bar(tmp_path):
    screen, _ = run_calc(tmp_path, columns=0)
    assert b"100%|" in screen and b"deals/s" in screen


def test_tqdm_disable_hides_the_bar(tmp_path):
    screen, stdout = run_calc(tmp_path, TQDM_DISABLE="1")
    assert b"deals/s]" not in screen and b"%|" not in screen
    assert b"deals       2,000" in stdout


def test_no_color_draws_the_bar_in_ascii_without_escapes(tmp_path):
    screen, _ = run_calc(tmp_path, NO_COLOR="1", stdout_too=True)
    assert b"100%|#" in screen
    assert ESCAPE not in screen
    assert screen.replace("·".encode(), b"").isascii()  # the summary's separator aside


def test_a_piped_stderr_gets_no_bar(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "sim", "calc", "-n", "2000", "--out", tmp_path / "run.parquet"],
        cwd=tmp_path,
        capture_output=True,
    )
    assert done.returncode == 0, done.stderr
    assert b"deals/s]" not in done.stderr and b"%|" not in done.stderr
    assert ESCAPE not in done.stderr + done.stdout


def test_show_is_in_colour_on_a_terminal_unless_no_color(tmp_path):
    show = ("show", "calc", "--seed", 0, "--deal", 3, "--final")
    coloured, _ = on_terminal(tmp_path, *show, stdout_too=True)
    assert ESCAPE in coloured
    plain, _ = on_terminal(tmp_path, *show, stdout_too=True, NO_COLOR="1")
    assert ESCAPE not in plain
    assert "♥".encode() in plain or "♦".encode() in plain
