"""Read rocprofv3 `--att` ui_output dispatch folders (and .tar.xz archives of them) into `Dispatch`es.

Spec: ../shared/docs/ui-output-format.md (its §18 checklist). A folder is recognised by its
`filenames.json` (or, that manifest lost, by code.json beside wave files), never by its name.
Everything layout-specific stays here; analyses see only the model.

Reading a folder parses filenames.json, code.json (the listing with its totals: what the default reports
need) and realtime.json. The wave files and occupancy.json are deferred (`attdec.model.deferred`): parsed,
in bulk, when an analysis first reads `Dispatch.waves` / `Dispatch.occupancy`, and only then is numpy
imported. A folder's wave count comes from its file names. (A wave file that disagrees with filenames.json
is noted when it is read; snapshots.json and wstates*.json are never read: no analysis uses them.)
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from attdec.errors import I64, ArchError, AttdecError, FormatError, InputError, checked_int, parse_json
from attdec.model import CodeLine, Dispatch, Wave, deferred, empty_insts, empty_occupancy
from attdec.model.record import Frozen
from attdec.model.records import MAX_SE
from attdec.model.target import Target, family_target, from_version, undetermined_target
from attdec.sources.archive import ARCHIVE_SUFFIXES, members
from attdec.sources.kind import Tracker
from attdec.sources.limits import LISTING

if TYPE_CHECKING:
    import numpy as np

WAVE_FILE = re.compile(r"^se(\d+)_sm(\d+)_sl(\d+)_wv(\d+)\.json$")


# ---- where the files come from: a folder on disk or an archive read into memory ---------------


class _DirFiles:
    """The files of a dispatch folder on disk."""

    def __init__(self, path: Path):
        self.path = path
        self.label = str(path)
        self.parent = path.parent  # where stats_*.csv and *_agent_info.csv live
        self._names: list[str] | None = None

    def names(self) -> list[str]:
        """The folder's entries, listed once (a big folder holds thousands of wave files)."""
        if self._names is None:
            try:
                self._names = os.listdir(self.path)
            except OSError as e:
                raise InputError(f"cannot list folder: {e.strerror}", self.label) from None
            self._set = set(self._names)
        return self._names

    def has(self, name: str) -> bool:
        self.names()
        return name in self._set

    def where(self, name: str) -> str:
        return str(self.path / name)

    def size(self, name: str) -> int:
        try:
            return (self.path / name).stat().st_size
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", self.where(name)) from None

    def ends(self, name: str, n: int) -> list[bytes]:
        """The first and the last `n` bytes of a file (one piece when it is no longer than `n`)."""
        try:
            with open(self.path / name, "rb") as f:
                head, size = f.read(n), os.fstat(f.fileno()).st_size
                if size <= n:
                    return [head]
                f.seek(max(n, size - n))
                return [head, f.read(n)]
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", self.where(name)) from None

    def read(self, name: str) -> bytes:
        try:
            return (self.path / name).read_bytes()
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", self.where(name)) from None

    def read_each(self, names: list[str]) -> Iterator[bytes | AttdecError]:
        """Each file's bytes, or the error reading it (the others are still read)."""
        for n in names:
            try:
                yield self.read(n)
            except AttdecError as e:
                yield e


class _MemFiles:
    """The files of one dispatch folder inside an archive, never extracted. The archive was walked once
    for the folder's small files; its wave files (`later`: their names) are read by a second walk when
    they are needed."""

    def __init__(self, archive: Path, folder: str, files: dict[str, bytes], later: list[str]):
        self.archive = archive
        self.label = f"{archive}:{folder}"
        self.parent = archive.parent
        self.folder = folder
        self._files = files
        self._later = set(later)

    def names(self) -> list[str]:
        return [*self._files, *self._later]

    def has(self, name: str) -> bool:
        return name in self._files or name in self._later

    def where(self, name: str) -> str:
        return f"{self.label}/{name}"

    def size(self, name: str) -> int:
        return len(self._files[name]) if name in self._files else 0  # the others are read later, capped as members

    def ends(self, name: str, n: int) -> list[bytes]:
        data = self.read(name)
        return [data[:n], data[-n:]] if len(data) > n else [data]

    def read(self, name: str) -> bytes:
        data = next(self.read_each([name]))
        if isinstance(data, AttdecError):
            raise data
        return data

    def read_each(self, names: list[str]) -> Iterator[bytes | AttdecError]:
        """The files `names`, in that order: one walk of the archive for those not in memory, stopped as
        soon as it has them all."""
        got = {n: self._files[n] for n in names if n in self._files}
        wanted = {PurePosixPath(self.folder, n) for n in names if n in self._later}
        if wanted:
            for p, data in members(self.archive, wanted.__contains__):
                if data is not None:
                    got[p.name] = data
                    wanted.discard(p)
                    if not wanted:
                        break
        for n in names:
            yield got[n] if n in got else InputError("missing file", self.where(n))


def _json(files, name: str):
    """Parse one JSON file; anything attdec cannot take is a FormatError naming the file and position."""
    return parse_json(files.read(name), files.where(name))


def _parse(files, name: str, parse, *args, doc=None):
    """Run a parser on one file (or on `doc`, that file already read); JSON of the wrong shape becomes a
    FormatError naming the file."""
    doc = _json(files, name) if doc is None else doc
    try:
        return parse(doc, *args)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as e:
        raise FormatError(f"unexpected structure ({type(e).__name__}: {e})", files.where(name)) from None


I32 = (-(1 << 31), (1 << 31) - 1)  # what the occupancy records' cu/simd/slot hold
# code.json line ids are below the row count in every real listing; analyses size tables by the largest id,
# so a larger one (a hostile 2^40) is refused rather than allocated
LINE_IDS_PER_ROW = 16
MAX_LINE_ID = 1 << 24  # a wave file's line ids, where the listing's size is not known: far above any real one


def _int(v, where: str, what: str, lo: int = I64[0], hi: int = I64[1]) -> int:
    """A field that must be an integer in [lo, hi] (`what` is its JSON path); digits in a string count."""
    if isinstance(v, str) and 0 < len(v) <= 20 and v.lstrip("-").isdigit():
        v = int(v)
    return checked_int(v, what, where, lo, hi)


def _int_rows_of(raw, where: str, what: str, cols: int):
    """A JSON list of rows of at least `cols` integers -> int64 array [n, >= cols]; otherwise a FormatError
    naming the first element that is not (`what[i][j]`). One numpy conversion when the rows are good."""
    import numpy as np

    if not isinstance(raw, list):
        raise FormatError(f"{what} is {type(raw).__name__}, expected a list of rows", where)
    if not raw:
        return np.zeros((0, cols), np.int64)
    try:
        a = np.asarray(raw)
    except (ValueError, TypeError, OverflowError):  # ragged rows, mixed content
        a = None
    if a is not None and a.ndim == 2 and a.shape[1] >= cols and a.dtype.kind in "iu":
        if a.dtype.kind == "i" or a.max() <= I64[1]:
            return a.astype(np.int64, copy=False)
    for i, r in enumerate(raw):  # the slow path only finds the element to name
        if not isinstance(r, list) or len(r) < cols:
            got = f"has {len(r)} value(s)" if isinstance(r, list) else f"is {type(r).__name__}"
            raise FormatError(f"{what}[{i}] {got}, expected a row of {cols} integers", where)
        for j, x in enumerate(r):
            _int(x, where, f"{what}[{i}][{j}]")
    raise FormatError(f"{what}: rows of different lengths", where)


# ---- architecture ------------------------------------------------------------------------------


def agent_targets(folder: Path, names: list[str] | None = None) -> set[Target]:
    """GPU targets named by `*_agent_info.csv` files in `folder` (rocprofv3's agent table); `names`: its
    entries when they are known already."""
    out: set[Target] = set()
    try:
        names = os.listdir(folder) if names is None else names
    except OSError:
        return out
    if "agent_info.csv" not in "\n".join(names):  # one search of all the names (a folder of 4,000 wave files)
        return out
    candidates = sorted(folder / n for n in names if n.endswith("agent_info.csv"))
    if not candidates:
        return out
    import csv

    for p in candidates:
        try:
            with p.open(newline="") as f:
                for row in csv.DictReader(f):
                    if row.get("Agent_Type", "").strip('"') != "GPU":
                        continue
                    v = int(row.get("Gfx_Target_Version") or 0)
                    if v:
                        out.add(from_version(v))
        except (OSError, ValueError, csv.Error, ArchError):
            continue
    return out


@cache
def session_hosts(session: Path) -> list[Path]:
    """The `<host>/` folders of a rocprofv3 session folder that hold an agent table (`*_agent_info.csv`,
    beside the .att files): its subfolders other than ui_output folders, looked at once per session."""
    out = []
    try:
        with os.scandir(session) as entries:
            subs = sorted(e.path for e in entries if not e.name.startswith("ui_output") and e.is_dir())
        for sub in subs:
            if "agent_info.csv" in "\n".join(os.listdir(sub)):
                out.append(Path(sub))
    except OSError:
        return out
    return out


def detect_target(
    gfxip, search: list[Path], gfxv=None, names: list[str] | None = None, where: str | None = None
) -> Target:
    """The chip when rocprofv3's agent table next to the run names exactly one matching GPU target;
    otherwise the family-only target of `gfxip` (gfxip 9 covers gfx90a, gfx942 and gfx950 alike), or
    what `gfxv` alone says when there is no gfxip (rocprofv2 folders: "vega" is gfx9, "navi" gfx10-12).
    `names`: the entries of the first folder, when they are known already; `where`: the filenames.json."""
    for i, folder in enumerate(search):
        targets = agent_targets(folder, names if i == 0 else None)
        if isinstance(gfxip, int):
            targets = {t for t in targets if t.generation == gfxip}
        if len(targets) == 1:
            return targets.pop()
        if targets:
            break  # several different GPUs: we cannot tell which one ran it
    if isinstance(gfxip, int):
        return family_target(gfxip, f"{where}: gfxip" if where else None)
    return undetermined_target(gfxv if isinstance(gfxv, str) else None)


# ---- code.json ---------------------------------------------------------------------------------


class CodeJson(Frozen):
    """What code.json gave: its rows, the totals it lacks that the wave files carry, and notes."""

    rows: list[CodeLine]
    recompute: tuple[str, ...]  # CodeLine totals to recompute from the wave files ("stall", "idle")
    stall_measured: bool  # False: the format has no stall anywhere (rocprofv2: wave files carry 0)
    problems: list[str]


LEGACY_COMMENT = "; Begin ATT ASM"  # rocprofv2's first row: a comment, not a kernel


def parse_code(doc, where: str) -> CodeJson:
    """code.json -> CodeJson. Columns are read by position (§5).

    rocprofv2 folders (a `top_n` key) have 8 columns [text, type, line, source, index, line_num, hits,
    cycles]. Their wave files and hit/cycle sums refer to a row by its position in the list: that is
    column 2 of every instruction row in `auto` mode (comment rows repeat the column 2 of the row before
    them), while with an assembly file given column 2 is a jump target. Nothing in the folder measures stall.
    """
    if not isinstance(doc, dict):
        raise FormatError("code.json is not a JSON object", where)
    legacy = "top_n" in doc
    rows = doc.get("code")
    if rows is None:
        return CodeJson([], (), not legacy, [])
    if not isinstance(rows, list):
        raise FormatError("'code' is neither a list nor null", where)
    out, short = [], False
    for i, r in enumerate(rows):
        if type(r) is list and len(r) == 10 and not legacy:  # the common row, every figure an int: fast
            text, _, line, src, codeobj, vaddr, hit, lat, stall, idle = r
            ints = (
                type(line) is type(codeobj) is type(vaddr) is type(hit) is type(lat) is type(stall) is type(idle) is int
            )
            if ints and type(text) is str and type(src) is str:
                out.append(CodeLine(line, text, src, codeobj, vaddr, hit, lat, stall, idle))
                continue
        if not isinstance(r, list) or len(r) < 8:
            raise FormatError(
                f"row {i} has {len(r) if isinstance(r, list) else 'no'} columns, expected at least 8", where
            )
        text = str(r[0]) if r[0] is not None else ""
        src = r[3] if isinstance(r[3], str) else ""
        col = lambda j: _int(r[j], where, f"code[{i}][{j}]")  # noqa: B023 (used at once)
        line, hit, lat = (i if legacy else col(2)), col(6), col(7)
        codeobj, vaddr = (0, 0) if legacy else (col(4), _int(r[5], where, f"code[{i}][5]", 0, (1 << 64) - 1))
        if len(r) >= 10 and not legacy:
            stall, idle = col(8), col(9)
        else:
            stall, idle, short = 0, 0, True
        if not legacy and len(r) == 8 and r[1] == 100 and not text.startswith(";"):
            text = "; " + text  # early C++ writer: label rows marked by type 100
        out.append(CodeLine(line, text, src, codeobj, vaddr, hit, lat, stall, idle))
    most = LINE_IDS_PER_ROW * len(out) + 4096  # line ids index per-line tables: keep those proportional
    bad = next((i for i, c in enumerate(out) if c.line >= most), None)
    if bad is not None:
        raise FormatError(f"code[{bad}][2]: line id {out[bad].line:,} is beyond a listing of {len(out):,} rows", where)
    if legacy:
        return CodeJson(out, ("idle",), False, [])
    return CodeJson(out, ("stall", "idle") if short and out else (), True, [])


def kernel_name(code: list[CodeLine]) -> str:
    """Kernel name(s) from the label rows: the demangled name when there is one, else the symbol."""
    names = []
    for c in code:
        if c.is_label and c.text != LEGACY_COMMENT:
            n = c.source.strip() or c.text[1:].strip()
            if n not in names:
                names.append(n)
    return ", ".join(names)


# ---- wave files --------------------------------------------------------------------------------


def listed_waves(fn_doc, where: str | None = None) -> dict[str, list]:
    """filenames.json wave_filenames -> {file: [file, begin, end]} as listed: one pass, no per-file work
    beyond a type check, so a manifest of 100,000 entries stays cheap. A level that is not an object, or a
    begin/end that is not an integer, is a FormatError naming `where` and its JSON path."""
    tree = fn_doc.get("wave_filenames") if isinstance(fn_doc, dict) else None
    if not isinstance(tree, dict):
        return {}
    out = {}
    for se, simds in tree.items():
        for simd, slots in _levels(simds, f"wave_filenames.{se}", where):
            for slot, wvs in _levels(slots, f"wave_filenames.{se}.{simd}", where):
                for wv, e in _levels(wvs, f"wave_filenames.{se}.{simd}.{slot}", where):
                    if isinstance(e, list) and len(e) >= 3:
                        if type(e[1]) is not int or type(e[2]) is not int:
                            at = f"wave_filenames.{se}.{simd}.{slot}.{wv}"
                            raise FormatError(f"{at}: begin/end are not integers: {_short(e[1:3])}", where)
                        out[str(e[0])] = e
    return out


def _levels(v, path: str, where: str | None):
    """The (key, value) pairs of one level of wave_filenames (null or empty: none)."""
    if not v and (v is None or isinstance(v, (list, dict))):
        return ()
    if not isinstance(v, dict):
        raise FormatError(f"{path} is {type(v).__name__}, expected an object", where)
    return v.items()


def _short(v) -> str:
    s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def parse_wave(doc, where: str, name: str) -> Wave:
    """One se*_sm*_sl*_wv*.json -> Wave (instructions [time, category, stall, duration, line])."""
    import numpy as np

    from attdec.model import Category, WaveState

    w = doc.get("wave") if isinstance(doc, dict) else None
    if not isinstance(w, dict):
        raise FormatError("no 'wave' object", where)
    m = WAVE_FILE.match(name)
    if m:
        se = _int(m.group(1), where, "se<N> of the file name", 0, MAX_SE)
    else:
        se = _int(str(doc.get("name", "SE0"))[2:], where, "name (SE<N>)", 0, MAX_SE)
    arr = _int_rows_of(w.get("instructions") or [], where, "wave.instructions", 5)
    top = len(Category) - 1  # categories and states index name tables: unknown values stop here
    bad = np.flatnonzero((arr[:, 1] < 0) | (arr[:, 1] > top))
    if len(bad):
        raise FormatError(f"wave.instructions[{bad[0]}][1]: category {arr[bad[0], 1]} is not one (0..{top})", where)
    bad = np.flatnonzero(arr[:, 4] >= MAX_LINE_ID)
    if len(bad):
        raise FormatError(f"wave.instructions[{bad[0]}][4]: line id {arr[bad[0], 4]:,} is beyond any listing", where)
    insts = empty_insts(len(arr))
    if len(arr):
        insts["time"], insts["category"], insts["stall"] = arr[:, 0], arr[:, 1], arr[:, 2]
        insts["duration"], insts["line"] = arr[:, 3], arr[:, 4]
    tl = _int_rows_of(w.get("timeline") or [], where, "wave.timeline", 2)[:, :2]
    bad = np.flatnonzero((tl[:, 0] < 0) | (tl[:, 0] >= len(WaveState)))
    if len(bad):
        raise FormatError(
            f"wave.timeline[{bad[0]}][0]: state {tl[bad[0], 0]} is not one (0..{len(WaveState) - 1})", where
        )
    timeline = [(s, d) for s, d in tl.tolist()]
    # a writer that leaves out simd/slot/id still names the file se<S>_sm<SIMD>_sl<SLOT>_wv<WAVE>.json
    simd, slot, wave = m.group(2, 3, 4) if m else (0, 0, 0)
    return Wave(
        se=se,
        cu=_int(w.get("cu", -1), where, "wave.cu", *I32),  # rocprofv2 wave files do not say: -1, unknown
        simd=_int(w.get("simd", simd), where, "wave.simd", *I32),
        slot=_int(w.get("slot", slot), where, "wave.slot", *I32),
        begin=_int(w.get("begin", 0), where, "wave.begin"),
        end=_int(w.get("end", 0), where, "wave.end"),
        insts=insts,
        timeline=timeline,
        seq=_int(w.get("id", wave), where, "wave.id", 0),
        path=where,
    )


# ---- occupancy.json, realtime.json ---------------------------------------------------------------


def _int_rows(val) -> np.ndarray | None:
    """`val` as an int64 [n, >=6] array when every row is a list of at least 6 plain ints, else None."""
    if not val or not isinstance(val[0], list):
        return None
    import numpy as np

    try:
        a = np.array(val)
    except (ValueError, TypeError):
        return None
    if a.dtype.kind != "i" or a.ndim != 2 or a.shape[1] < 6:
        return None
    a = a.astype(np.int64, copy=False)
    small = a[:, 1:4]
    if len(a) and (small.min() < -(2**31) or small.max() >= 2**31 or a[:, 4].min() < 0 or a[:, 4].max() > 255):
        return None  # let the row-by-row path report / cast as it always did
    return a


OCC_COLUMNS = (I64, I32, I32, I32, (0, 255), I64)  # time, cu, simd, slot, start, kernel id


def parse_occupancy(doc, where: str) -> tuple[np.ndarray, set[int], dict[str, str]]:
    """All three layouts (§7) -> (OCCUPANCY_DTYPE rows, kernel ids used, dispatches name table)."""
    import numpy as np

    from attdec.model import OCCUPANCY_DTYPE
    from attdec.model.totals import distinct

    if not isinstance(doc, dict):
        raise FormatError("occupancy.json is not a JSON object", where)
    rows, kids, parts = [], set(), []
    names_list = doc.get("names")  # rocprofv2: key k holds the rows of trace file names[k] (..._se<N>.att)
    for key, val in doc.items():
        if not key.isdigit() or not isinstance(val, list):
            continue
        se = _int(key, where, f"key {key!r}", 0, MAX_SE)
        if isinstance(names_list, list) and se < len(names_list):
            m = re.search(r"_se(\d+)\.att$", str(names_list[se]))
            se = _int(m.group(1), where, f"names[{se}]", 0, MAX_SE) if m else se
        a = _int_rows(val)
        if a is not None:  # the common case, vectorised
            part = np.zeros(len(a), OCCUPANCY_DTYPE)
            part["se"] = se
            for j, name in enumerate(("time", "cu", "simd", "slot", "start")):
                part[name] = a[:, j]
            parts.append(part)
            kids.update(distinct(a[:, 5]).tolist())
            continue
        for i, r in enumerate(val):
            if isinstance(r, list) and len(r) >= 6:  # [time, cu, simd, slot, start, kernel_id, ...]
                t, cu, simd, slot, start, kid = (
                    _int(x, where, f"{key}[{i}][{j}]", *lim) for j, (x, lim) in enumerate(zip(r[:6], OCC_COLUMNS))
                )
            elif isinstance(r, int) and not isinstance(r, bool) and 0 <= r <= I64[1]:  # early packed layout
                kid, simd, slot = r & 0xFFF, (r >> 12) & 3, (r >> 14) & 0xF
                start, cu, t = (r >> 18) & 1, (r >> 19) & 0xF, (r >> 23) * 8
            else:
                raise FormatError(f"SE {key}: occupancy row {r!r} has an unknown layout", where)
            rows.append((se, cu, simd, slot, start, t, 0))
            kids.add(kid)
        if rows:
            parts.append(np.array(rows, dtype=OCCUPANCY_DTYPE))
            rows = []
    occ = np.concatenate(parts) if parts else empty_occupancy()
    names = doc.get("dispatches")
    return occ, kids, {str(k): str(v) for k, v in names.items()} if isinstance(names, dict) else {}


def parse_realtime(doc, where: str = "realtime.json") -> tuple[dict[int, list[tuple[int, int]]], int | None]:
    """realtime.json -> (shader clock, reference clock) pairs per SE, and the reference clock's frequency in Hz
    as metadata.frequency states it (None: not stated; the clock then defaults to REALTIME_HZ)."""
    if not isinstance(doc, dict):
        return {}, None
    out = {}
    for k in sorted(k for k in doc if k.startswith("SE") and k[2:].isdigit()):
        out[_int(k[2:], where, f"key {k!r}", 0, MAX_SE)] = _pairs(doc[k], where, k)
    meta = doc.get("metadata")
    hz = meta.get("frequency") if isinstance(meta, dict) else None
    return dict(sorted(out.items())), None if hz is None else _int(hz, where, "metadata.frequency", 1, I64[1])


def _pairs(raw, where: str, what: str) -> list[tuple[int, int]]:
    """A JSON list of [int, int, ...] rows -> pairs, in plain Python (read at open: numpy is not imported
    yet); otherwise a FormatError naming the first bad element (`what[i][j]`)."""
    if not isinstance(raw, list):
        raise FormatError(f"{what} is {type(raw).__name__}, expected a list of rows", where)
    lo, hi = I64
    out = []
    for i, r in enumerate(raw):
        if type(r) is list and len(r) >= 2 and type(r[0]) is int and type(r[1]) is int:
            if lo <= r[0] <= hi and lo <= r[1] <= hi:
                out.append((r[0], r[1]))
                continue
        if not isinstance(r, list) or len(r) < 2:
            got = f"has {len(r)} value(s)" if isinstance(r, list) else f"is {type(r).__name__}"
            raise FormatError(f"{what}[{i}] {got}, expected a row of 2 integers", where)
        out.append((_int(r[0], where, f"{what}[{i}][0]"), _int(r[1], where, f"{what}[{i}][1]")))
    return out


# ---- one folder --------------------------------------------------------------------------------


def read_dispatch(files, tracker: Tracker | None = None) -> Dispatch:
    """One dispatch folder -> Dispatch; its wave files and occupancy.json are read when first needed.
    Wave instructions keep their code.json line ids."""
    manifest = files.has("filenames.json")
    if not manifest and not _holds_waves_and_code(files.names()):
        raise InputError("not a ui_output folder (no filenames.json, nor code.json with wave files)", files.label)
    fn = _json(files, "filenames.json") if manifest else {}
    if not isinstance(fn, dict):
        raise FormatError("filenames.json is not a JSON object", files.where("filenames.json"))
    name = PurePosixPath(files.label.replace(":", "/")).name
    if name in ("", "."):  # an archive with the files at its top level
        name = Path(files.label.split(":")[0]).name
    parent = files.parent
    gfxip = fn.get("gfxip")
    on_disk = isinstance(files, _DirFiles)  # then its own listing is the first place to look
    search = [files.path, parent, parent.parent] if on_disk else [parent, parent.parent]
    search += session_hosts(parent)
    tgt = detect_target(
        gfxip, search, fn.get("gfxv"), files.names() if on_disk else None, files.where("filenames.json")
    )
    problems = []
    if fn.get("thread_trace") is False:
        problems.append("not a thread trace (PC-sampling folder): no waves, no cycle totals")
    if not manifest:
        problems.append(
            "no filenames.json: read from code.json and the wave files present "
            f"(architecture {tgt.display}{', from agent_info.csv' if tgt.chip_known else ''})"
        )
    elif tgt.shown:
        problems.append(f"filenames.json has no gfxip: architecture {tgt.display}, ISA read with {tgt.family} rules")

    cj = CodeJson([], (), True, [])
    if files.has("code.json"):
        LISTING.check(files.size("code.json"), "code.json", files.where("code.json"))
        cj = _parse(files, "code.json", parse_code, files.where("code.json"))
    code = cj.rows
    problems += cj.problems

    listed = listed_waves(fn, files.where("filenames.json"))
    names = files.names()
    present = list(filter(WAVE_FILE.fullmatch, names))  # not .match: its $ would pass a name ending in "\n"
    missing = sorted(set(listed).difference(present))  # a set difference and nothing per file: cheap at any size
    if len(missing) == 1:
        problems.append(f"wave file listed in filenames.json is missing: {missing[0]}")
    elif missing:
        eg = ", ".join(missing[:3])
        problems.append(f"{len(missing):,} wave files listed in filenames.json are missing, e.g. {eg}")

    @cache
    def occupancy_file() -> tuple[np.ndarray, set[int], dict[str, str]]:
        if not files.has("occupancy.json"):
            return empty_occupancy(), set(), {}
        return _parse(files, "occupancy.json", parse_occupancy, files.where("occupancy.json"))

    def load_waves() -> list[Wave]:
        waves = read_waves(files, present, listed, problems, tracker)
        if code and cj.stall_measured and not missing and len(waves) == len(present):  # every wave file read
            damage.extend(listing_disagreements(waves, code, files.where("code.json")))
        return waves

    realtime_se, rt_frequency = {}, None
    if files.has("realtime.json"):
        realtime_se, rt_frequency = _parse(files, "realtime.json", parse_realtime, files.where("realtime.json"))
    side_records = {key: _side_records(files, fn, key, problems) for key in SIDE_RECORDS}
    kernel = kernel_name(code)
    damage = other_kernel(files, code)
    if not kernel:  # zero-wave folders: take the name from the kernel ids this dispatch's rows use
        _, kids, names = occupancy_file()
        kernel = ", ".join(names[str(k)] for k in sorted(kids) if str(k) in names and k != 0)
        if not kernel:  # no rows at all: the name table is process-wide, so use it only if unambiguous
            named = {v for k, v in names.items() if k != "0"}
            kernel = named.pop() if len(named) == 1 else ""
    d = Dispatch(
        name=name,
        target=tgt,
        kernel=kernel,
        code=code,
        waves=deferred(load_waves, len(present)),
        occupancy=deferred(lambda: occupancy_file()[0]),
        realtime=realtime_se[min(realtime_se)] if realtime_se else [],
        realtime_se=realtime_se,
        rt_frequency=rt_frequency,
        path=files.label,
        problems=problems,
        damage=damage,
        stall_measured=cj.stall_measured,
    )
    d.other_simd, d.shaderdata = side_records["other_simd_filenames"], side_records["shaderdata_filenames"]
    _complete_listing(d, cj, files.has("code.json"))
    return d


UNNAMED = re.compile(r"\d+ / 0x[0-9a-fA-F]+")
NAME_TABLE_BYTES = 1 << 16  # occupancy.json's kernel-name table is looked for in this much of each end


def other_kernel(files, code: list[CodeLine]) -> list[str]:
    """A damage line when code.json lists kernels none of which occupancy.json's name table (the kernels the
    traced process dispatched) names: the listing was copied from another capture. Only that table is read,
    from either end of occupancy.json (its rows are read when needed, if ever)."""
    import json

    labels = {
        n for c in code if c.is_label and c.text != LEGACY_COMMENT for n in (c.text[1:].strip(), c.source.strip())
    }
    labels.discard("")
    if not labels or not files.has("occupancy.json"):
        return []
    table = None
    for part in files.ends("occupancy.json", NAME_TABLE_BYTES):  # rocprofv3 writes it last, attdec first
        text = part.decode("utf-8", "replace")
        at = text.find('"dispatches"')
        if at < 0:
            continue
        colon = text.find(":", at) + 1
        try:
            table = json.JSONDecoder().raw_decode(text, colon + len(text[colon:]) - len(text[colon:].lstrip()))[0]
        except (ValueError, RecursionError):
            return []  # a damaged (or too long) table: the rows' reader says what is wrong
        break
    names = set()
    if isinstance(table, dict):  # "<code object id> / <address>" stands where rocprofv3 knew no kernel name
        names = {v for k, v in table.items() if k != "0" and isinstance(v, str) and not UNNAMED.fullmatch(v)}
    if not names or any(_same_kernel(a, b) for a in labels for b in names):
        return []
    shown = ", ".join(sorted(names)[:3]) + (f" and {len(names) - 3:,} more" if len(names) > 3 else "")
    return [
        f"{files.where('code.json')}: lists {kernel_name(code)}, a kernel occupancy.json does not name (it names "
        f"{shown}): code.json belongs to another capture"
    ]


def _same_kernel(a: str, b: str) -> bool:
    """Whether two names may be one kernel's: mangled (`_Z6vecAddPfi`), demangled (`void vecAdd<2>(float*, int)`),
    truncated or with a leading `_`, the one's function name is found in the other (too short a name: yes)."""

    def base(name: str) -> str:
        words = name.split("(")[0].split("<")[0].split("::")[-1].split()
        return words[-1].strip("_") if words else ""

    x, y = base(a), base(b)
    return len(x) < 3 or len(y) < 3 or x in b or y in a


def listing_disagreements(waves: list[Wave], code: list[CodeLine], where: str) -> list[str]:
    """A damage line when the wave files do not fit code.json: records on line ids it does not list, or
    another number of executions than it counts (rocprofv3 writes code.json's hits from the same records)."""
    import numpy as np

    lines = np.concatenate([w.insts["line"] for w in waves]) if waves else np.zeros(0, np.int64)
    lines = lines[lines >= 0]
    listed = np.array([c.line for c in code], np.int64)
    unknown = int((~np.isin(lines, listed)).sum())
    # records without a PC sit on a label row, which code.json does not count: instruction rows only
    on_instructions = int(np.isin(lines, np.array([c.line for c in code if not c.is_label], np.int64)).sum())
    counted = sum(c.hit for c in code if not c.is_label)
    if unknown:
        return [
            f"{where}: {unknown:,} of the wave files' {len(lines):,} instruction records are on line ids code.json "
            "does not list: code.json belongs to another kernel or dispatch"
        ]
    if on_instructions != counted:
        return [
            f"{where}: counts {counted:,} executions, the wave files hold {on_instructions:,} instruction records: "
            "code.json belongs to another dispatch, or was changed"
        ]
    return []


# filenames.json lists of the newest writers: key -> (the rows' key in each file, their columns in order,
# the record layout, file-level fields copied into every record)
SIDE_RECORDS = {
    "other_simd_filenames": ("instructions", ("time", "cycles", "category"), "OTHER_SIMD_DTYPE", ("wgp",)),
    "shaderdata_filenames": ("records", ("time", "value", "cu", "simd", "slot", "flags"), "SHADERDATA_DTYPE", ()),
}


def _side_records(files, fn: dict, key: str, problems: list[str]):
    """The other-SIMD or SHADERDATA records of the files filenames.json lists under `key` ({se: [[file,
    begin, end], ...]}), as one array with each record's SE; None when there are none. A listed file
    that is missing is a problem, not an error (the waves are still there)."""
    listed = fn.get(key)
    if not listed:
        return None
    import numpy as np

    import attdec.model as M

    rows_key, cols, layout, from_file = SIDE_RECORDS[key]
    dtype = getattr(M, layout)
    where = files.where("filenames.json")
    parts = []
    if not isinstance(listed, dict):
        raise FormatError(f"{key} is {type(listed).__name__}, expected an object", where)
    for se_key, entries in listed.items():
        se = _int(se_key, where, f"{key} key", 0, MAX_SE)
        if not isinstance(entries, list):
            raise FormatError(f"{key}[{se_key!r}] is {type(entries).__name__}, expected a list", where)
        for entry in entries:
            name = entry[0] if isinstance(entry, list) and entry and isinstance(entry[0], str) else None
            if name is None or "/" in name or "\\" in name:
                raise FormatError(f"{key}[{se_key!r}]: {entry!r} is not [file, begin, end]", where)
            if not files.has(name):
                problems.append(f"{name} listed in filenames.json is missing")
                continue
            doc = _json(files, name)
            if not isinstance(doc, dict):
                raise FormatError("not a JSON object", files.where(name))
            rows = _int_rows_of(doc.get(rows_key, []), files.where(name), rows_key, len(cols))
            part = np.zeros(len(rows), dtype)
            part["se"] = se
            for j, c in enumerate(cols):
                part[c] = rows[:, j]
            for c in from_file:
                part[c] = _int(doc.get(c, 0), files.where(name), c, 0, 255)
            parts.append(part)
    return np.concatenate(parts) if parts else None


def read_waves(files, names: list[str], listed: dict[str, list], problems: list[str], tracker=None) -> list[Wave]:
    """The wave files `names` of a folder, parsed; one that disagrees with filenames.json (`listed`) in
    begin/end adds a line to `problems`, one that cannot be read or parsed is left out with a line naming
    it (the others are still read)."""
    waves, moved, bad = [], [], []
    names = sorted(names, key=_wave_order)
    if tracker is not None:
        tracker.grow(len(names))
    for n, data in zip(names, files.read_each(names)):
        where = files.where(n)
        try:
            if isinstance(data, AttdecError):
                raise data
            w = _parse(files, n, parse_wave, where, n, doc=parse_json(data, where))
        except AttdecError as e:
            bad.append(e)
            continue
        if n in listed and listed[n][1:3] != [w.begin, w.end]:
            moved.append(f"{n} ({w.begin}/{w.end} vs {listed[n][1]}/{listed[n][2]})")
        waves.append(w)
        if tracker is not None:
            tracker.advance(label=files.label)
    if moved:
        many = f"{len(moved):,} wave files differ" if len(moved) > 1 else "wave file differs"
        problems.append(f"{many} from filenames.json in begin/end, e.g. {moved[0]}")
    problems += [f"wave file left out: {err}" for err in bad[:3]]
    if len(bad) > 3:
        problems.append(f"{len(bad) - 3:,} more wave files left out (unreadable or malformed)")
    return waves


def _complete_listing(d: Dispatch, cj: CodeJson, has_file: bool) -> None:
    """Fill what code.json lacks from the wave files: totals it has no column for, or the whole listing.
    Only then are the wave files read here."""
    from_waves = not d.code or bool(cj.recompute)
    executed = from_waves and d.wave_count > 0 and any(len(w.insts) for w in d.waves)
    if not d.code and executed:
        from attdec.model.totals import listing_from_waves

        d.code = listing_from_waves(d.waves)
        why = "code.json has no listing (code: null or [])" if has_file else "no code.json"
        d.problems.append(
            f"{why}: listing built from the wave files ({len(d.code)} line ids; instruction text and source unknown)"
        )
        return
    if not has_file:
        d.problems.append("no code.json")
    if not d.stall_measured:
        d.problems.append("rocprofv2-era folder: no stall in this format (shown as -); idle recomputed from the waves")
    elif cj.recompute and executed:
        d.problems.append("code.json has no Stall/Idle columns: they were recomputed from the wave files")
    if cj.recompute and executed:
        from attdec.model.totals import fill_code_totals

        fill_code_totals(d, columns=cj.recompute)
    lost = sum(c.hit for c in d.code if c.is_label)
    if lost:
        d.problems.append(f"{lost:,} execution(s) counted on comment rows (PCs outside every code object): left out")


def _wave_order(name: str):
    m = WAVE_FILE.match(name)
    return tuple(int(x) for x in m.groups()) if m else (1 << 30,)


# ---- input kinds -------------------------------------------------------------------------------


def _holds_waves_and_code(names) -> bool:
    """A folder's entries hold code.json and a wave file: a dispatch folder whose filenames.json was lost
    or never written (the manifest only repeats what the wave files hold)."""
    names = list(names)
    return "code.json" in names and any(WAVE_FILE.fullmatch(n) for n in names)


def is_dispatch_folder(path: Path) -> bool:
    if not path.is_dir():
        return False
    if (path / "filenames.json").is_file():
        return True
    if not (path / "code.json").is_file():
        return False
    with os.scandir(path) as entries:  # stops at the first wave file: a big folder is not listed whole
        return any(WAVE_FILE.fullmatch(e.name) and e.is_file() for e in entries)


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES)


def read_folder(path: Path, tracker: Tracker | None = None) -> Dispatch:
    """One dispatch folder on disk -> Dispatch."""
    return read_dispatch(_DirFiles(Path(path)), tracker)


# The files of a dispatch folder read when it is opened; its wave files are read when needed, and no other
# member (snapshots.json, wstates*.json, anything else an archive holds) is kept.
READ_AT_OPEN = frozenset(("filenames.json", "code.json", "occupancy.json", "realtime.json"))


def load_archive(path: Path, tracker: Tracker) -> list[Dispatch]:
    """Every dispatch folder inside a tar archive, never extracted: one walk keeps the files of READ_AT_OPEN
    and notes the wave files' names (a second walk reads them if they are needed). Members the walk refused
    (links, devices, paths outside the archive) are named in the first dispatch's problems."""
    folders: dict[str, dict[str, bytes]] = {}
    later: dict[str, list[str]] = {}
    refused: list[str] = []
    for p, data in members(path, lambda p: p.name in READ_AT_OPEN, refused):
        folder = str(p.parent)
        if data is not None:
            folders.setdefault(folder, {})[p.name] = data
        elif WAVE_FILE.match(p.name):
            later.setdefault(folder, []).append(p.name)
    out = []
    for folder, files in sorted(folders.items()):
        if "filenames.json" in files or _holds_waves_and_code([*files, *later.get(folder, [])]):
            out.append(read_dispatch(_MemFiles(path, folder, files, later.get(folder, [])), tracker))
    if not out:
        raise InputError(
            "archive holds no ui_output folder (no filenames.json, nor code.json with wave files)", str(path)
        )
    for r in refused[:5]:
        out[0].problems.append(f"archive member {r} not read")
    if len(refused) > 5:
        out[0].problems.append(f"{len(refused) - 5:,} more archive member(s) not read (links, devices, unsafe paths)")
    return out


# ---- the input kind (attdec.sources.KINDS) -----------------------------------------------------


def detect(path: Path) -> bool:
    return is_dispatch_folder(path) or is_archive(path)


def load(path: Path, tracker: Tracker) -> list[Dispatch]:
    return load_archive(path, tracker) if path.is_file() else [read_dispatch(_DirFiles(path), tracker)]


def weight(path: Path) -> int:
    return 0  # progress counts wave files, once they are read (most reports read none)
