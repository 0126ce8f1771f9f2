"""Typed errors that say what went wrong and where; the CLI prints them as one line. And the checks every
reader applies where file data enters (docs/reliability.md): bounded integers, guarded JSON."""

from __future__ import annotations

import os
import re
from enum import IntEnum


class ExitCode(IntEnum):
    """The exit status of every `attdec` command: one table, so that a script or CI job can tell a slower
    kernel from a broken trace (`attdec --help` lists MEANING; the README and docs/commands.md repeat it)."""

    OK = 0
    INPUT_ERROR = 1
    USAGE = 2
    DAMAGED = 3
    REGRESSION = 4
    INTERRUPTED = 130  # 128 + SIGINT, as shells report a Ctrl-C
    TERMINATED = 143  # 128 + SIGTERM

    @property
    def meaning(self) -> str:
        return _MEANING[self]


_MEANING = {
    ExitCode.OK: "success",
    ExitCode.INPUT_ERROR: "an input could not be read or an output written (one `attdec: error:` line each)",
    ExitCode.USAGE: "usage error: an unknown command or option, a bad option value",
    ExitCode.DAMAGED: "decoded, but an input was damaged (truncated, lost sync): warnings say where",
    ExitCode.REGRESSION: "`diff --fail-above`: a kernel grew by more than the threshold",
    ExitCode.INTERRUPTED: "interrupted (Ctrl-C)",
    ExitCode.TERMINATED: "terminated (SIGTERM); temporary files removed",
}


class AttdecError(Exception):
    """Base error. `where` names the file (and offset, dispatch...) the problem was found in."""

    def __init__(self, message: str, where: str | None = None):
        super().__init__(message)
        self.message = message
        self.where = where

    def __str__(self) -> str:
        return f"{self.where}: {self.message}" if self.where else self.message


class InputError(AttdecError):
    """A path, folder or file that is missing, unreadable or not what it claims to be."""


class FormatError(AttdecError):
    """Input whose bytes or JSON do not follow the expected format (malformed JSON, corrupt blob, bad ELF)."""


class ArchError(AttdecError):
    """An architecture that is unknown, unsupported, or does not match the trace or code object."""


class WorkerError(AttdecError):
    """A `--jobs` worker process that ended before its work was done (killed: out of memory, a signal)."""


def read_bytes(path, map_from: int | None = None) -> bytes:
    """A file's bytes, or an InputError that names the file and says why it cannot be read. Only regular
    files are read: a device or pipe could block or never end. A file of `map_from` bytes or more is
    mapped (read-only mmap), not read: a big SQTT blob is decoded a window at a time."""
    import stat

    try:
        st = os.stat(path)
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise InputError("not a regular file (a device, pipe or socket)", str(path))
        with open(path, "rb") as f:
            if map_from is not None and st.st_size >= max(map_from, 1) and stat.S_ISREG(st.st_mode):
                import mmap

                return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)  # type: ignore[return-value]
            return f.read()
    except FileNotFoundError:
        raise InputError("no such file", str(path)) from None
    except IsADirectoryError:
        raise InputError("is a folder, expected a file", str(path)) from None
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror or e}", str(path)) from None


# ---- numbers and JSON from files: checked where they enter -------------------------------------------------
I64 = (-(1 << 63), (1 << 63) - 1)  # what numpy's int64 columns hold


def checked_int(value, what: str, where: str | None, lo: int = I64[0], hi: int = I64[1]) -> int:
    """`value` if it is an integer (not a bool) in [lo, hi]; otherwise a FormatError naming `what` (a field,
    a JSON path) and `where` (the file). Every number read from a file goes through this or a check like it
    before it reaches numpy, struct or an allocation."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise FormatError(f"{what} is {_kind(value)}, expected an integer", where)
    if not lo <= value <= hi:
        raise FormatError(f"{what} is {_short(value)}, outside {lo:,}..{hi:,}", where)
    return value


def _kind(v) -> str:
    if v is None:
        return "null"
    if isinstance(v, (list, tuple)):
        return "a list"
    if isinstance(v, dict):
        return "an object"
    return f"{type(v).__name__} {_short(v)}"


def _short(v) -> str:
    s = repr(v)
    return s if len(s) <= 40 else f"{s[:20]}...({len(s)} characters)"


def read_json(path):
    """A JSON file's value, or one InputError/FormatError naming the file (see `parse_json`)."""
    return parse_json(read_bytes(path), str(path))


def parse_json(data: bytes | str, where: str):
    """JSON text -> Python values; anything attdec cannot take is one FormatError naming the file and the
    line and column: malformed text, nesting too deep to parse, numbers that are not 64-bit integers or
    finite floats, NaN/Infinity, and duplicate keys (which JSON readers resolve differently)."""
    import json

    try:
        doc = json.loads(data, object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_float=_finite)
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 text (byte {e.start})", where) from None
    except json.JSONDecodeError as e:
        msg = e.msg.removesuffix(" at")  # "Unterminated string starting at": the position follows
        raise FormatError(f"malformed JSON: {msg} at line {e.lineno} column {e.colno}", where) from None
    except (RecursionError, ValueError) as e:  # nesting, a number or a key the hooks refused
        raise FormatError(_json_problem(data, e), where) from None
    _check_ints(data, where)
    return doc


class _Refused(ValueError):
    pass


def _unique_keys(pairs):
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _Refused("duplicate key")
    return d


def _no_constant(name):
    raise _Refused(name)


def _finite(text):
    v = float(text)
    if v - v != 0:  # inf (nan is not produced from digits)
        raise _Refused(text)
    return v


# JSON's strings, brackets, colons, commas and bare words (numbers, true, false, null)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"?|[\[\]{}:,]|[^\s\[\]{}:,"]+')
# a 64-bit integer has at most 20 digits: a run of 20 is found by mapping every digit to "0" and looking for
# twenty of them (both at C speed; a regex search for \d{20} took ~20 ns per byte of number-heavy JSON)
_DIGITS_TO_0 = bytes(0x30 if 0x30 <= b <= 0x39 else b for b in range(256))
_LONG_DIGITS = b"0" * 20
_NUMBER_BYTES = frozenset(bytes([c]) for c in b"0123456789+-.eE")


def _json_problem(data: bytes | str, e: BaseException) -> str:
    """What is wrong and where, found by scanning the text (only on this error path: json.loads does not
    say where its hooks or its recursion limit stopped it)."""
    import json

    text = data if isinstance(data, str) else data.decode("utf-8", "replace")
    stack: list[set | None] = []  # per open bracket: the keys seen (objects) or None (arrays)
    key_next = False
    for m in _TOKEN.finditer(text):
        pos, tok = m.start(), m.group()
        c = tok[0]
        if c in "[{":
            stack.append(set() if c == "{" else None)
            key_next = c == "{"
            if isinstance(e, RecursionError) and len(stack) > 100:
                return f"JSON nested more than 100 levels deep at {_line_col(text, pos)}: too deep to read"
        elif c in "]}":
            if stack:
                stack.pop()
            key_next = False
        elif c == ",":
            key_next = bool(stack) and stack[-1] is not None
        elif c == '"' and key_next:
            key_next = False
            keys = stack[-1]
            try:
                key = json.loads(tok)
            except ValueError:
                key = tok
            if keys is not None:
                if key in keys:
                    return f"duplicate key {_short(key)} at {_line_col(text, pos)}"
                keys.add(key)
        elif c not in ':"':
            key_next = False
            if tok in ("NaN", "Infinity", "-Infinity"):
                return f"{tok} at {_line_col(text, pos)} is not a JSON number"
            if c in "-0123456789" and _bad_number(tok):
                return f"number {_short(tok)} at {_line_col(text, pos)} is out of range"
    if isinstance(e, RecursionError):
        return "JSON nested too deeply to read"
    return f"unreadable JSON ({str(e)[:80]})"


def _bad_number(tok: str) -> bool:
    try:
        if any(ch in tok for ch in ".eE"):
            v = float(tok)
            return v - v != 0
        return not -(1 << 63) <= int(tok) < (1 << 64)
    except ValueError:  # more digits than Python converts
        return True


def _check_ints(data: bytes | str, where: str) -> None:
    """Integers that fit no 64-bit field are refused here, where their position is known. Only a run of
    20 digits (found at C speed) sends the text through the slow scan."""
    raw = data.encode() if isinstance(data, str) else data
    zeros = raw.translate(_DIGITS_TO_0)
    at = zeros.find(_LONG_DIGITS)
    while at >= 0:  # each long number read where it stands (a u64 id is fine): the scan only for a bad one
        start, end = at, at + len(_LONG_DIGITS)
        while start and raw[start - 1 : start] in _NUMBER_BYTES:
            start -= 1
        while raw[end : end + 1] in _NUMBER_BYTES and end < len(raw):
            end += 1
        if _bad_number(raw[start:end].decode("ascii")):
            break
        at = zeros.find(_LONG_DIGITS, end)
    else:
        return
    problem = _json_problem(data, ValueError())
    if not problem.startswith("unreadable"):
        raise FormatError(problem, where)


def _line_col(text: str, pos: int) -> str:
    line = text.count("\n", 0, pos) + 1
    return f"line {line} column {pos - text.rfind(chr(10), 0, pos)}"
