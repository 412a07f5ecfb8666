"""Output files that never destroy data: checked paths, temporary names, exclusive locks.

Every command that writes a file goes through here, so the rules hold everywhere:
only a regular file is ever replaced (and only when the caller passed --overwrite), a
file is written under a temporary name beside it and moved into place whole, and two
runs never write the same file at once.
"""

import errno
import fcntl
import os
import stat
from pathlib import Path

# The temporary name adds `.` + `.<pid>.tmp` (up to 7 + 5 characters) to the file name.
_TMP_OVERHEAD = 14


class OutputError(ValueError):
    """An output path that cannot (or must not) be written."""


def temporary_path(path, tag=None):
    """The hidden name a file is written under before it is moved into place."""
    path = Path(path)
    return path.with_name(f".{path.name}.{tag or os.getpid()}.tmp")


def check_output(path, overwrite, what="output", flag="--overwrite"):
    """Refuse, before any work is done, an output that must not be written.

    Returns the path. Creates the parent folder if it is missing."""
    path = Path(path)
    if len(os.fsencode(path.name)) + _TMP_OVERHEAD > _name_max(path.parent):
        raise OutputError(
            f"file name too long for this file system: {path.name[:40]}...; "
            f"give {what} a shorter one"
        )
    try:
        if path.is_symlink():
            raise OutputError(f"{path} is a symbolic link; it is never replaced (name its target)")
        info = path.stat()
    except FileNotFoundError:
        info = None
    except OSError as error:  # a path too long, a folder that cannot be searched...
        raise OutputError(f"cannot use {shortened(path)} as {what}: {_reason(error)}") from None
    if info is not None:
        _check_replaceable(path, info, overwrite, what, flag)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise OutputError(f"cannot create folder {path.parent}: {_reason(error)}") from None
    if not path.parent.is_dir():
        raise OutputError(f"{path.parent} is not a folder")
    if not os.access(path.parent, os.W_OK):
        raise OutputError(f"cannot write to folder {path.parent}")
    return path


def _check_replaceable(path, info, overwrite, what, flag):
    """Refuse to replace what exists at path (its `info`) unless a regular file, overwritten."""
    if stat.S_ISDIR(info.st_mode):
        raise OutputError(f"{path} is a folder; give a file name for {what}")
    if not stat.S_ISREG(info.st_mode):
        raise OutputError(f"{path} exists and is not a regular file; it is never replaced")
    if not overwrite:
        raise OutputError(f"{path} exists; use {flag} to replace it")


def _name_max(folder):
    try:
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def shortened(path, limit=100):
    """A path as an error line shows it: whole up to `limit` characters, else its two
    ends (a path can be thousands of characters long)."""
    text = str(path)
    return text if len(text) <= limit else f"{text[: limit // 2]}...{text[-limit // 2 :]}"


def same_file(a, b):
    """Whether two spellings name one file (`x`, `./d/../x`, a symbolic link to x...)."""
    a, b = Path(a), Path(b)
    try:
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    except OSError:
        pass
    return a.resolve() == b.resolve()


def _reason(error):
    if error.errno == errno.ENOSPC:
        return "no space left on the device"
    return error.strerror or str(error)


def describe_os_error(error, path=None):
    """One line for an OSError met while writing (or, for a name too long, using) a
    file."""
    where = path or error.filename
    if error.errno == errno.ENAMETOOLONG:
        return f"file name too long: {shortened(where)}" if where else _reason(error)
    return f"cannot write {where}: {_reason(error)}" if where else _reason(error)


class FileLock:
    """An exclusive lock on the output `path`, held through a hidden `.NAME.lock` file.

    The lock is the kernel's (flock), so it is released when its holder dies, however it
    dies; the lock file itself is removed by the holder on release.
    """

    def __init__(self, path, option="--out"):
        self.path, self.option = Path(path), option
        self.lock_path = self.path.with_name(f".{self.path.name}.lock")
        self._fd = None

    def acquire(self):
        while True:
            try:
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as error:
                raise OutputError(f"cannot lock {self.path}: {_reason(error)}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
                os.close(fd)
                who = f" (process {holder})" if holder else ""
                raise OutputError(
                    f"{self.path} is being written by another sim run{who}; "
                    f"wait for it to finish or choose another {self.option}"
                ) from None
            # The file may have been removed by a holder that released it meanwhile.
            try:
                same = os.fstat(fd).st_ino == os.stat(self.lock_path).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.pwrite(fd, str(os.getpid()).encode(), 0)
                self._fd = fd
                return self
            os.close(fd)

    def release(self):
        if self._fd is not None:
            try:
                self.lock_path.unlink(missing_ok=True)
            finally:
                os.close(self._fd)
                self._fd = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
