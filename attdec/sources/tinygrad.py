"""tinygrad profile pickles (`profile.pkl`, VIZ=-2) -> RawDispatches.

A profile is untrusted input, so it is never unpickled normally: `_Unpickler.find_class` hands out
only inert record classes of our own, for tinygrad class names (`data_class_name`: every tinygrad
version adds data classes to its events, and the reader only needs the events), and refuses every other
global: functions, anything outside `tinygrad`, and names that reach into modules such as `os` or
`builtins`. Since pickle can only call what find_class returned, no REDUCE/NEWOBJ/BUILD of the
stream can reach anything but those records (which just store their arguments) and a checked
`decimal.Decimal` constructor. (pickle, decimal and the raw-dispatch model are imported when a profile
is read: walking a folder asks `detect` about every entry.)
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from attdec.errors import FormatError, InputError
from attdec.model.target import Target, from_version
from attdec.sources.kind import Tracker, blob_weight

if TYPE_CHECKING:
    from attdec.sources.raw import RawDispatch

# Module names no tinygrad data class lives under: a `tinygrad.x.os` would only be there to reach code.
CODE_MODULES = frozenset(
    (
        *("os", "posix", "nt", "sys", "subprocess", "builtins", "importlib", "shutil", "socket", "ctypes"),
        *("pickle", "marshal", "runpy", "code", "codecs", "io", "functools", "operator", "types", "inspect"),
        *("signal", "threading", "multiprocessing", "pty", "platform", "webbrowser", "eval", "exec"),
    )
)


def data_class_name(module: str, name: str) -> bool:
    """Whether (module, name) can name a tinygrad data class: under the `tinygrad` package, no module
    part that names code (CODE_MODULES) or is private, and a class-style name (CamelCase, or nested as
    `Outer.Inner`): tinygrad's functions and methods are lower-case, and a record stands in for a class."""
    parts = module.split(".")
    if parts[0] != "tinygrad" or not all(p.isidentifier() and not p.startswith("_") for p in parts):
        return False
    if CODE_MODULES.intersection(parts):
        return False
    return all(n.isidentifier() and n[0].isupper() for n in name.split("."))


class Record:
    """A tinygrad object rebuilt as plain data: constructor args in `args`, pickled state as attributes."""

    cls_name = "Record"

    def __new__(cls, *args, **kwargs):
        obj = object.__new__(cls)
        obj.args = args
        return obj

    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        slots = None
        if isinstance(state, tuple) and len(state) == 2:  # (dict or None, slot dict)
            state, slots = state
        for st in (state, slots):
            if isinstance(st, dict):
                for k, v in st.items():
                    if isinstance(k, str) and not k.startswith("__") and k not in ("args", "cls_name", "get"):
                        object.__setattr__(self, k, v)

    def get(self, name, default=None):
        return getattr(self, name, default)

    def __repr__(self):
        return f"{self.cls_name}({', '.join(f'{k}={v!r:.40}' for k, v in vars(self).items())})"


_RECORDS: dict[str, type] = {}


def _record_class(name: str) -> type:
    if name not in _RECORDS:
        _RECORDS[name] = type(name, (Record,), {"cls_name": name, "__module__": __name__})
    return _RECORDS[name]


def _decimal(value="0", *rest):
    """decimal.Decimal, only from the plain values tinygrad pickles (a string or a number)."""
    import decimal
    import pickle

    if rest or not isinstance(value, (str, int, float, tuple)):
        raise pickle.UnpicklingError("Decimal from an unexpected argument")
    return decimal.Decimal(value)


class _Refused(Exception):
    """What the unpickler will not build (find_class's exception ends the load)."""


@cache
def _unpickler() -> type:
    """The allow-list Unpickler class, made on first use (so that importing this module imports no pickle)."""
    import pickle

    class Unpickler(pickle.Unpickler):
        def find_class(self, module, name):
            if (module, name) == ("decimal", "Decimal"):
                return _decimal
            if data_class_name(module, name):
                return _record_class(name)
            raise _Refused(f"{module}.{name}")

        def persistent_load(self, pid):
            raise _Refused(f"persistent id {pid!r:.40}")

    return Unpickler


def load_events(data: bytes, where: str) -> list:
    """Unpickle a profile into records. Anything but a list of known tinygrad events is a FormatError."""
    import decimal
    import io
    import pickle

    f = io.BytesIO(data)
    try:
        events = _unpickler()(f).load()
    except _Refused as e:
        raise FormatError(f"refusing to unpickle unknown class {e} (not a tinygrad data class)", where) from None
    except RecursionError:
        raise FormatError("pickle nests too deeply", where) from None
    except (
        pickle.UnpicklingError,
        EOFError,
        ValueError,
        TypeError,
        AttributeError,
        IndexError,
        KeyError,
        decimal.InvalidOperation,
        MemoryError,
        OverflowError,  # a FRAME or length opcode claiming more bytes than an address space holds
        UnicodeDecodeError,
    ) as e:
        at = f"read up to byte {f.tell():,} of {len(data):,}"  # a framed pickle is read a frame at a time
        raise FormatError(f"not a readable pickle ({at}): {str(e)[:120] or type(e).__name__}", where) from None
    if not isinstance(events, list):
        raise FormatError(f"a tinygrad profile is a list of events, this pickle holds a {type(events).__name__}", where)
    return [e for e in events if isinstance(e, Record)]


def _int(v, what, where):
    if isinstance(v, bool) or not isinstance(v, int):
        raise FormatError(f"{what} is {type(v).__name__}, expected an integer", where)
    return v


def _bytes(v, what, where):
    if not isinstance(v, (bytes, bytearray, memoryview)):
        raise FormatError(f"{what} is {type(v).__name__}, expected bytes", where)
    return bytes(v)


def _key(v, what, where):
    """A device, kernel or tag: names and numbers only (they become dictionary keys and labels)."""
    import decimal

    if v is None or isinstance(v, (str, int, bytes, float, decimal.Decimal)):
        return v
    raise FormatError(f"{what} is {type(v).__name__}, expected a name or a number", where)


def _identity(blob) -> int | None:
    """What tells a pickled blob object from others: its id; None for what Python itself shares between
    equal values (bytes of 0 or 1 byte) and for what is no blob (refused where it is read)."""
    if isinstance(blob, (bytes, bytearray, memoryview)) and len(blob) > 1:
        return id(blob)
    return None


def dispatches_from_events(events: list, where: str) -> list[RawDispatch]:
    """Group a profile's SQTT blobs into dispatches (kernel + exec_tag), in pickle order.

    `ProfileSQTTEvent.kern` is the program's `tag` in current profiles and its name in old ones
    (whose programs have no tag). Each dispatch gets the code object of its own program only:
    programs can reuse load addresses, so mixing them in one PC map would be wrong.
    """
    from attdec.sources.pmc import PendingPmc
    from attdec.sources.raw import RawBlob, RawCodeObject, RawDispatch

    targets: dict[str, Target] = {}
    for e in events:
        if e.cls_name == "ProfileDeviceEvent" and isinstance(e.get("props"), dict):
            v = e.props.get("gfx_target_version")
            if isinstance(v, int) and v:
                targets[str(e.get("device"))] = from_version(v, where)
    programs: dict[object, Record] = {}
    for e in events:
        if e.cls_name == "ProfileProgramEvent":
            dev = _key(e.get("device"), "program device", where)
            if e.get("tag") is not None:
                programs.setdefault((dev, _key(e.get("tag"), "program tag", where)), e)
            programs.setdefault((dev, _key(e.get("name"), "program name", where)), e)

    groups: dict[tuple, RawDispatch] = {}
    # A pickle can name one object many times (its memo): a blob object already read is not read again,
    # whichever event names it (tinygrad gives every event its own blob), so that a small file cannot
    # make attdec decode the same bytes over and over. Counted per dispatch that holds it.
    first_named: dict[int | None, RawDispatch] = {}
    repeats: dict[int, int] = {}
    for e in events:
        if e.cls_name != "ProfileSQTTEvent":
            continue
        blob, ident = e.get("blob"), _identity(e.get("blob"))
        if ident in first_named:
            holder = first_named[ident]
            repeats[id(holder)] = repeats.get(id(holder), 0) + 1
            continue
        dev, kern, tag = (_key(e.get(k), f"SQTT event {k}", where) for k in ("device", "kern", "exec_tag"))
        prog = programs.get((dev, kern))
        if prog is None:
            raise FormatError(
                f"SQTT blob of kernel {kern!r} on {dev} has no program (code object) in the profile", where
            )
        name = str(prog.get("name"))
        key = (dev, kern, tag)
        if key not in groups:
            tgt = targets.get(str(dev)) or targets.get(str(dev).split(":")[0])
            if tgt is None:
                raise FormatError(f"no device properties (gfx_target_version) for device {dev}", where)
            dname = f"{name}#{tag}" if tag is not None else name
            co = RawCodeObject(
                _bytes(prog.get("lib"), f"program {name} lib", where),
                _int(prog.get("base"), f"program {name} base", where),
                name,
                1,
            )
            groups[key] = RawDispatch(name=dname, target=tgt, code_objects=[co], kernel=name, path=where)
        d = groups[key]
        se = _int(e.get("se"), "SQTT se", where)
        itrace = e.get("itrace")
        d.blobs.append(
            RawBlob(
                se,
                _bytes(blob, "SQTT blob", where),
                f"{where}: {d.name} se{se}",
                itrace if isinstance(itrace, bool) else None,
            )
        )
        if ident is not None:
            first_named[ident] = d
    for d in groups.values():
        if repeats.get(id(d)):
            d.damage.append(
                f"{where}: {d.name}: {repeats[id(d)]:,} more SQTT event(s) name a blob of this dispatch (the same "
                "pickled object, which tinygrad never writes twice): left out, the blob read once"
            )
    for e in events:  # PMC samples of the traced dispatches (tinygrad samples a dispatch once, after it ran)
        if e.cls_name != "ProfilePMCEvent":
            continue
        traced = groups.get(tuple(_key(e.get(k), f"PMC event {k}", where) for k in ("device", "kern", "exec_tag")))
        if traced is None:
            continue
        sched = e.get("sched")
        if not isinstance(sched, list):
            raise FormatError(f"PMC event of {traced.name} has no sample schedule", where)
        pmc = _bytes(e.get("blob"), "PMC blob", where)
        traced.counters.append(PendingPmc(pmc, sched, f"{where}: {traced.name} PMC"))  # unpacked when read
    return list(groups.values())


def detect(path: Path) -> bool:
    """A pickle file (protocol 2+ opcode first) that is not obviously something else."""
    if not path.is_file():
        return False
    with open(path, "rb") as f:
        head = f.read(2)
    return len(head) == 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def load(path: str | Path, tracker: Tracker | None = None) -> list[RawDispatch]:
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read: {e.strerror}", str(path)) from None
    events = load_events(data, str(path))
    out = dispatches_from_events(events, str(path))
    if not out:
        if not events:
            raise FormatError("no tinygrad profile in this pickle (none of its items is a profile event)", str(path))
        raise FormatError("this tinygrad profile holds no thread trace (no ProfileSQTTEvent)", str(path))
    return out


def weight(path: Path) -> int:
    return blob_weight(path.stat().st_size)  # the blobs are most of a profile
