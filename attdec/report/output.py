"""Writing the outputs the user named, and nothing else (docs/reliability.md, "Outputs").

`open_output` is the one way a command or the API opens a file it was told to write: a regular file (or
a new name) is written under a temporary name in its folder and renamed over it at the end, so a failed or
interrupted run leaves the earlier file as it was; a symlink is written through to its target (the link
stays); stdout, a device, a fifo or a socket is written directly, never replaced. A read-only file, one
of the files the command reads, and a file that changed while the command ran are refused, not clobbered.
`output_folder` does the same for a folder written whole (export-ui's dispatch folders), and `guarded`
turns what ends a run from outside (Ctrl-C, SIGTERM, a full disk) into one line and an exit status.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any

from attdec.errors import AttdecError, ExitCode, InputError

STDOUT = "-"
TEMP_SUFFIX = ".tmp"  # `.NAME.<pid>.tmp`: hidden, and skipped by the input walker (sources.pipeline)
FULL = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)  # a disk, quota or `ulimit -f` that is full


def temp_path(target: Path, kind: str = TEMP_SUFFIX) -> Path:
    """A hidden name next to `target` for this process to write before renaming."""
    return target.with_name(f".{target.name}.{os.getpid()}{kind}")


def _same(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def read_file_like(target: os.stat_result, inputs: Iterable[str | os.PathLike]) -> str | None:
    """The file a command reading `inputs` reads that is the same file as `target` (through links), or
    None: a path named, or an input the sources find under one, an input folder with everything in it
    (a capture's blobs and capture.json, a ui_output folder's files). A report written next to input
    folders is not one of them. Compares inode numbers from directory listings and stats only a match."""
    from attdec.sources.pipeline import Failures, resolve

    named = [str(p) for p in inputs]
    for p in named:
        with contextlib.suppress(OSError):
            if _same(os.stat(p), target):
                return p
    found = resolve(named, failures=Failures(lambda level, e: None))  # what cannot be read is said later
    seen: set[tuple[int, int]] = set()
    stack = [str(p) for _, p in found]
    while stack:
        path = stack.pop()
        try:
            st = os.stat(path)
        except OSError:
            continue
        if _same(st, target):
            return path
        if not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) in seen:
            continue
        seen.add((st.st_dev, st.st_ino))
        try:
            with os.scandir(path) as entries:
                for e in entries:
                    with contextlib.suppress(OSError):
                        if e.inode() == target.st_ino or e.is_symlink() or e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
        except OSError:
            continue
    return None


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror}", path) from None


def _fingerprint(st: os.stat_result | None) -> tuple | None:
    return None if st is None else (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Ctrl-C and SIGTERM wait while a few renames put a finished output in place (not half of them)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


class Output:
    """An output the user named; checked when made (before the command reads anything), opened by `with`.

    `inputs`: the paths the command reads; an output that is one of their files is refused.
    """

    def __init__(self, path: str | os.PathLike, binary: bool = False, inputs: Iterable[str | os.PathLike] = ()):
        self.name = str(path)
        self.binary = binary
        self.stream: IO[Any] | None = None  # stdout, when that is where it goes
        self.direct: str | None = None  # a device, fifo or socket: opened and written as it is
        if self.name == STDOUT:
            if binary:
                raise InputError("binary output (--format npz) needs a file: give -o FILE", "-o")
            self.stream = sys.stdout
            return
        st = _stat(self.name)  # through symlinks
        if st is not None and _is_stdout(st):  # /dev/stdout, /proc/self/fd/1: the stream itself, not its file
            self.stream = sys.stdout.buffer if binary else sys.stdout
            return
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise InputError("is a directory; give a file name", self.name)
        if st is not None and not stat.S_ISREG(st.st_mode):
            self.direct = self.name
            return
        self.target = Path(os.path.realpath(self.name))  # a symlink's target: the link stays
        if st is not None:
            if not st.st_mode & 0o222 or not os.access(self.target, os.W_OK):
                raise InputError("cannot write: the file is read-only (permission denied)", self.name)
            same = read_file_like(st, inputs)
            if same is not None:
                where = "" if same == self.name else f" ({same})"
                raise InputError(f"is one of the files this command reads{where}: give another output", self.name)
        self.before = st
        self.tmp: Path | None = None

    def __enter__(self) -> IO[Any]:
        if self.stream is not None:
            return self.stream
        if self.direct is not None:
            try:
                self.file = open(self.direct, "wb") if self.binary else open(self.direct, "w", encoding="utf-8")
            except OSError as e:
                raise InputError(f"cannot write: {e.strerror}", self.name) from None
            return self.file
        tmp = temp_path(self.target)
        try:
            with signals_held():  # a signal waits until the file is made; if it then ends the run, it goes
                try:
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
                except OSError as e:
                    raise InputError(f"cannot write: {e.strerror}", self.name) from None
                if self.before is not None:  # the old file's permission bits (a new one gets the umask's)
                    os.fchmod(fd, stat.S_IMODE(self.before.st_mode))
                self.file = os.fdopen(fd, "wb") if self.binary else os.fdopen(fd, "w", encoding="utf-8")
                self.tmp = tmp
        except BaseException:
            if self.tmp is not None:
                self.file.close()
                tmp.unlink()
            raise
        return self.file

    def __exit__(self, kind, error, tb) -> None:
        if self.stream is not None:
            return
        if self.direct is not None:
            try:
                self.file.close()
            except OSError as e:
                if error is None:
                    raise self._full(e) from None
            if isinstance(error, OSError) and error.errno in FULL:
                raise self._full(error) from None
            return
        tmp = self.tmp
        assert tmp is not None
        try:
            try:
                self.file.close()
            except OSError as e:
                if error is None:
                    raise self._full(e) from None
            if error is not None:
                if isinstance(error, OSError) and error.errno in FULL:
                    raise self._full(error) from None
                return
            self._commit(tmp)
        finally:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()

    def _full(self, e: OSError) -> InputError:
        return InputError(f"cannot write: {e.strerror}", self.name)

    def _commit(self, tmp: Path) -> None:
        """Put the finished temporary file in place, unless the target changed since the command began."""
        with signals_held():
            if _fingerprint(_stat(str(self.target))) != _fingerprint(self.before):
                raise self._moved()
            if self.before is None:  # a new name: linked, so a file that appeared meanwhile is not replaced
                try:
                    os.link(tmp, self.target)
                    return
                except FileExistsError:
                    raise self._moved() from None
                except OSError:  # no hard links here (FAT, some network file systems): a plain rename
                    pass
            os.replace(tmp, self.target)

    def _moved(self) -> InputError:
        what = "appeared" if self.before is None else "changed"
        return InputError(f"{what} while this command ran: left as it is, nothing written", self.name)


def _is_stdout(st: os.stat_result) -> bool:
    try:
        return _same(st, os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):  # no real stdout (tests capture it in memory)
        return False


def open_output(path: str | os.PathLike, binary: bool = False, inputs: Iterable[str | os.PathLike] = ()) -> Output:
    """The output the user named (see the module's docstring), checked now: `with open_output(...) as f`."""
    return Output(path, binary, inputs)


@contextlib.contextmanager
def output_folder(path: str | os.PathLike, ours: Callable[[str], bool]) -> Iterator[Path]:
    """A folder written whole under a temporary name, then renamed into place of `path`: until then an
    earlier folder there stays as it was, and an interrupted run leaves no partial folder under the name.
    Files of the earlier folder that `ours(name)` says the writer does not make are carried over."""
    target = Path(os.path.realpath(path))
    if target.exists() and not target.is_dir():
        raise InputError("is a file; give a folder", str(path))
    tmp = temp_path(target)
    try:
        with signals_held():  # a signal waits until the folder is made; if it then ends the run, it goes
            try:
                tmp.mkdir(parents=True)
            except OSError as e:
                raise InputError(f"cannot create output folder: {e.strerror}", str(path)) from None
        yield tmp
        with signals_held():
            _swap_in(tmp, target, ours)
    except AttdecError as e:  # a file of the temporary folder is named as it was going to be called
        if e.where is not None and e.where.startswith(str(tmp)):
            e.where = str(target) + e.where[len(str(tmp)) :]
        raise
    finally:
        if tmp.exists():
            _remove_ours(tmp, lambda name: True)


def _swap_in(new: Path, target: Path, ours: Callable[[str], bool]) -> None:
    if not target.exists():
        os.rename(new, target)
        return
    for e in os.scandir(target):  # the user's own files in the earlier folder stay with it
        if not ours(e.name) and not (new / e.name).exists():
            os.rename(e.path, new / e.name)
    old = temp_path(target, ".old")
    os.rename(target, old)
    os.rename(new, target)
    _remove_ours(old, ours)


def _remove_ours(folder: Path, ours: Callable[[str], bool]) -> None:
    """The files `ours` names in a folder this process moved aside or made, then the folder if it is empty."""
    for e in os.scandir(folder):
        if ours(e.name) and e.is_file(follow_symlinks=False):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(e.path)
    with contextlib.suppress(OSError):  # something else there: left as it is
        folder.rmdir()


# ---- a run ended from outside -----------------------------------------------------------------------


class Terminated(BaseException):
    """SIGTERM, raised where the run is so that temporary files are removed and workers stopped on the way out."""


_RECEIVED: list[int] = []  # the signals that reached the guarded run


def _on_signal(signum, frame) -> None:
    _RECEIVED.append(signum)
    raise KeyboardInterrupt if signum == signal.SIGINT else Terminated


def _ended(say: Callable[[str], object]) -> int:
    if _RECEIVED[-1] == signal.SIGINT:
        say("attdec: error: interrupted")
        return ExitCode.INTERRUPTED
    say("attdec: error: terminated")
    return ExitCode.TERMINATED


def quiet_stdout() -> None:
    """Point stdout at /dev/null so that flushing it at exit does not fail again (a closed pipe, a full disk)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real file descriptor (tests capture stdout in memory)
        pass


def guarded(run: Callable[[], int], say: Callable[[str], object]) -> int:
    """`run()`'s exit status, stdout flushed; Ctrl-C, SIGTERM and a full disk (of an output or of a
    redirected stdout) each end it with one line passed to `say` and their exit status, not a traceback;
    a reader of stdout that went away (`| head`) ends it quietly with 0. Whatever exception a signal
    turned into on its way out (an import wraps it in an ImportError), the signal is what is reported."""
    _RECEIVED.clear()
    main = threading.current_thread() is threading.main_thread()
    before = [(s, signal.signal(s, _on_signal)) for s in (signal.SIGINT, signal.SIGTERM)] if main else []
    try:
        status = run()
        sys.stdout.flush()
        return _ended(say) if _RECEIVED else status
    except BaseException as e:
        if not _RECEIVED and isinstance(e, (KeyboardInterrupt, Terminated)):  # raised, not signalled
            _RECEIVED.append(signal.SIGINT if isinstance(e, KeyboardInterrupt) else signal.SIGTERM)
        if _RECEIVED:
            return _ended(say)
        if isinstance(e, BrokenPipeError):  # `attdec ... | head`: the reader is gone, which is not an error
            quiet_stdout()
            return 0
        if isinstance(e, OSError) and e.errno in FULL:
            quiet_stdout()
            say(f"attdec: error: {e.filename or 'stdout'}: cannot write: {e.strerror}")
            return 1
        raise
    finally:
        for s, handler in before:
            signal.signal(s, handler)
