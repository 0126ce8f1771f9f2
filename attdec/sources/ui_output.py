"""Read rocprofv3 `--att` ui_output dispatch folders (and .tar.xz archives of them) into `Dispatch`es.

Spec: ../shared/docs/ui-output-format.md (its §18 checklist). A folder is recognised by its
`filenames.json`, never by its name. Everything layout-specific stays here; analyses see only the model.

Reading a folder parses filenames.json, code.json (the listing with its totals: what the default reports
need) and realtime.json. The wave files and occupancy.json are deferred (`attdec.model.deferred`): parsed,
in bulk, when an analysis first reads `Dispatch.waves` / `Dispatch.occupancy`, and only then is numpy
imported. A folder's wave count comes from its file names. (A wave file that disagrees with filenames.json
is noted when it is read; snapshots.json and wstates*.json are never read: no analysis uses them.)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, NamedTuple

from attdec.errors import ArchError, FormatError, InputError
from attdec.model import CodeLine, Dispatch, Wave, deferred, empty_insts, empty_occupancy
from attdec.model.target import Target, family_target, from_version, undetermined_target
from attdec.sources.archive import ARCHIVE_SUFFIXES, members
from attdec.sources.kind import Tracker

if TYPE_CHECKING:
    import numpy as np

WAVE_FILE = re.compile(r"^se(\d+)_sm(\d+)_sl(\d+)_wv(\d+)\.json$")
_WAVE_FILES = re.compile(r"^se\d+_sm\d+_sl\d+_wv\d+\.json$", re.M)  # WAVE_FILE over a whole listing at once
DISPATCH_NAME = re.compile(r"^ui_output_agent_(\d+)_dispatch_(\d+)")


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

    def read(self, name: str) -> bytes:
        try:
            return (self.path / name).read_bytes()
        except OSError as e:
            raise InputError(f"cannot read: {e.strerror}", self.where(name)) from None

    def read_each(self, names: list[str]) -> Iterator[bytes]:
        return (self.read(n) for n in names)


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

    def read(self, name: str) -> bytes:
        return next(self.read_each([name]))

    def read_each(self, names: list[str]) -> Iterator[bytes]:
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
            if n not in got:
                raise InputError("missing file", self.where(n))
            yield got[n]


def _json(files, name: str):
    """Parse one JSON file; malformed JSON is a FormatError naming the file and position."""
    return _loads(files.read(name), files.where(name))


def _loads(data: bytes, where: str):
    """Parse JSON bytes; malformed JSON is a FormatError naming the file and position."""
    try:
        return json.loads(data)
    except UnicodeDecodeError as e:
        raise FormatError(f"not UTF-8 text (byte {e.start})", where) from None
    except json.JSONDecodeError as e:
        raise FormatError(
            f"malformed JSON: {e.msg} at line {e.lineno} column {e.colno} (byte {e.pos})", where
        ) from None


def _parse(files, name: str, parse, *args, doc=None):
    """Run a parser on one file (or on `doc`, that file already read); JSON of the wrong shape becomes a
    FormatError naming the file."""
    doc = _json(files, name) if doc is None else doc
    try:
        return parse(doc, *args)
    except (TypeError, ValueError, KeyError, AttributeError, IndexError, OverflowError) as e:
        raise FormatError(f"unexpected structure ({type(e).__name__}: {e})", files.where(name)) from None


def _int(v, where: str, what: str) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        raise FormatError(f"{what} is not an integer: {v!r}", where) from None


# ---- architecture ------------------------------------------------------------------------------


def _agent_targets(folder: Path, names: list[str] | None = None) -> set[Target]:
    """GPU targets named by `*_agent_info.csv` files in `folder` (rocprofv3's agent table); `names`: its
    entries when they are known already."""
    out: set[Target] = set()
    try:
        candidates = sorted(
            folder / n for n in (os.listdir(folder) if names is None else names) if n.endswith("agent_info.csv")
        )
    except OSError:
        return out
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


def detect_target(gfxip, search: list[Path], gfxv=None, names: list[str] | None = None) -> Target:
    """The chip when rocprofv3's agent table next to the run names exactly one matching GPU target;
    otherwise the family-only target of `gfxip` (gfxip 9 covers gfx90a, gfx942 and gfx950 alike), or
    what `gfxv` alone says when there is no gfxip (rocprofv2 folders: "vega" is gfx9, "navi" gfx10-12).
    `names`: the entries of the first folder, when they are known already."""
    for i, folder in enumerate(search):
        targets = _agent_targets(folder, names if i == 0 else None)
        if isinstance(gfxip, int):
            targets = {t for t in targets if t.generation == gfxip}
        if len(targets) == 1:
            return targets.pop()
        if targets:
            break  # several different GPUs: we cannot tell which one ran it
    if isinstance(gfxip, int):
        return family_target(gfxip)
    return undetermined_target(gfxv if isinstance(gfxv, str) else None)


# ---- code.json ---------------------------------------------------------------------------------


class CodeJson(NamedTuple):
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
        try:
            line, hit, lat = (i if legacy else int(r[2])), int(r[6]), int(r[7])
            codeobj, vaddr = (0, 0) if legacy else (int(r[4]), int(r[5]))
            if len(r) >= 10 and not legacy:
                stall, idle = int(r[8]), int(r[9])
            else:
                stall, idle, short = 0, 0, True
        except (TypeError, ValueError):
            raise FormatError(f"row {i} has a non-integer column: {r[:10]!r}", where) from None
        if not legacy and len(r) == 8 and r[1] == 100 and not text.startswith(";"):
            text = "; " + text  # early C++ writer: label rows marked by type 100
        out.append(CodeLine(line, text, src, codeobj, vaddr, hit, lat, stall, idle))
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


def listed_waves(fn_doc) -> dict[str, list]:
    """filenames.json wave_filenames -> {file: [file, begin, end]} as listed: one pass, no per-file work
    beyond a type check, so a manifest of 100,000 entries stays cheap."""
    tree = fn_doc.get("wave_filenames") if isinstance(fn_doc, dict) else None
    if not isinstance(tree, dict):
        return {}
    out = {}
    for simds in tree.values():
        for slots in (simds or {}).values():
            for wvs in (slots or {}).values():
                for e in (wvs or {}).values():
                    if isinstance(e, list) and len(e) >= 3:
                        if type(e[1]) is not int or type(e[2]) is not int:
                            raise ValueError(f"begin/end of {e[0]!r} are not integers: {e[1:3]!r}")
                        out[str(e[0])] = e
    return out


def parse_wave(doc, where: str, name: str) -> Wave:
    """One se*_sm*_sl*_wv*.json -> Wave (instructions [time, category, stall, duration, line])."""
    import numpy as np

    w = doc.get("wave") if isinstance(doc, dict) else None
    if not isinstance(w, dict):
        raise FormatError("no 'wave' object", where)
    m = WAVE_FILE.match(name)
    se = int(m.group(1)) if m else _int(str(doc.get("name", "SE0"))[2:], where, "name")
    raw = w.get("instructions") or []
    try:
        arr = np.asarray(raw, dtype=np.int64)
    except (TypeError, ValueError, OverflowError):
        raise FormatError("instructions are not rows of integers", where) from None
    if arr.size and (arr.ndim != 2 or arr.shape[1] < 5):
        raise FormatError(f"instructions have shape {arr.shape}, expected [n, 5]", where)
    insts = empty_insts(len(raw))
    if len(raw):
        insts["time"], insts["category"], insts["stall"] = arr[:, 0], arr[:, 1], arr[:, 2]
        insts["duration"], insts["line"] = arr[:, 3], arr[:, 4]
    timeline = [(int(s), int(d)) for s, d in (w.get("timeline") or [])]
    return Wave(
        se=se,
        cu=_int(w.get("cu", -1), where, "cu"),  # rocprofv2 wave files do not say: -1, unknown
        simd=_int(w.get("simd", 0), where, "simd"),
        slot=_int(w.get("slot", 0), where, "slot"),
        begin=_int(w.get("begin", 0), where, "begin"),
        end=_int(w.get("end", 0), where, "end"),
        insts=insts,
        timeline=timeline,
        seq=_int(w.get("id", m.group(4) if m else 0), where, "id"),
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


def parse_occupancy(doc, where: str) -> tuple[np.ndarray, set[int], dict[str, str]]:
    """All three layouts (§7) -> (OCCUPANCY_DTYPE rows, kernel ids used, dispatches name table)."""
    import numpy as np

    from attdec.model import OCCUPANCY_DTYPE

    if not isinstance(doc, dict):
        raise FormatError("occupancy.json is not a JSON object", where)
    rows, kids, parts = [], set(), []
    names_list = doc.get("names")  # rocprofv2: key k holds the rows of trace file names[k] (..._se<N>.att)
    for key, val in doc.items():
        if not key.isdigit() or not isinstance(val, list):
            continue
        se = int(key)
        if isinstance(names_list, list) and se < len(names_list):
            m = re.search(r"_se(\d+)\.att$", str(names_list[se]))
            se = int(m.group(1)) if m else se
        a = _int_rows(val)
        if a is not None:  # the common case, vectorised
            part = np.zeros(len(a), OCCUPANCY_DTYPE)
            part["se"] = se
            for j, name in enumerate(("time", "cu", "simd", "wave_id", "start")):
                part[name] = a[:, j]
            parts.append(part)
            kids.update(np.unique(a[:, 5]).tolist())
            continue
        for r in val:
            if isinstance(r, list) and len(r) >= 6:  # [time, cu, simd, slot, start, kernel_id, ...]
                t, cu, simd, slot, start, kid = (int(x) for x in r[:6])
            elif isinstance(r, int):  # early packed layout
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


def parse_realtime(doc) -> dict[int, list[tuple[int, int]]]:
    """realtime.json -> (shader clock, reference clock) pairs per SE."""
    if not isinstance(doc, dict):
        return {}
    ses = sorted(int(k[2:]) for k in doc if k.startswith("SE") and k[2:].isdigit())
    return {se: [(int(a), int(b)) for a, b in doc[f"SE{se}"]] for se in ses}


# ---- one folder --------------------------------------------------------------------------------


def read_dispatch(files, tracker: Tracker | None = None) -> Dispatch:
    """One dispatch folder -> Dispatch; its wave files and occupancy.json are read when first needed.
    Wave instructions keep their code.json line ids."""
    if not files.has("filenames.json"):
        raise InputError("not a ui_output folder (no filenames.json)", files.label)
    fn = _json(files, "filenames.json")
    if not isinstance(fn, dict):
        raise FormatError("filenames.json is not a JSON object", files.where("filenames.json"))
    name = PurePosixPath(files.label.replace(":", "/")).name
    if name in ("", "."):  # an archive with the files at its top level
        name = Path(files.label.split(":")[0]).name
    parent = files.parent
    gfxip = fn.get("gfxip")
    on_disk = isinstance(files, _DirFiles)  # then its own listing is the first place to look
    search = [files.path, parent, parent.parent] if on_disk else [parent, parent.parent]
    tgt = detect_target(gfxip, search, fn.get("gfxv"), files.names() if on_disk else None)
    problems = []
    if fn.get("thread_trace") is False:
        problems.append("not a thread trace (PC-sampling folder): no waves, no cycle totals")
    if tgt.shown:
        problems.append(f"filenames.json has no gfxip: architecture {tgt.display}, ISA read with {tgt.family} rules")

    cj = CodeJson([], (), True, [])
    if files.has("code.json"):
        cj = _parse(files, "code.json", parse_code, files.where("code.json"))
    code = cj.rows
    problems += cj.problems

    listed = _parse(files, "filenames.json", listed_waves, doc=fn)
    names = files.names()
    present = list(set(_WAVE_FILES.findall("\n".join(names))).intersection(names))  # one regex pass, not one a file
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

    realtime_se = _parse(files, "realtime.json", parse_realtime) if files.has("realtime.json") else {}
    kernel = kernel_name(code)
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
        waves=deferred(lambda: read_waves(files, present, listed, problems, tracker), len(present)),
        occupancy=deferred(lambda: occupancy_file()[0]),
        realtime=realtime_se[min(realtime_se)] if realtime_se else [],
        realtime_se=realtime_se,
        path=files.label,
        problems=problems,
        stall_measured=cj.stall_measured,
    )
    _complete_listing(d, cj, files.has("code.json"))
    return d


def read_waves(files, names: list[str], listed: dict[str, list], problems: list[str], tracker=None) -> list[Wave]:
    """The wave files `names` of a folder, parsed; one that disagrees with filenames.json (`listed`) in
    begin/end adds a line to `problems`."""
    waves, moved = [], []
    names = sorted(names, key=_wave_order)
    if tracker is not None:
        tracker.grow(len(names))
    for n, data in zip(names, files.read_each(names)):
        where = files.where(n)
        w = _parse(files, n, parse_wave, where, n, doc=_loads(data, where))
        if n in listed and listed[n][1:3] != [w.begin, w.end]:
            moved.append(f"{n} ({w.begin}/{w.end} vs {listed[n][1]}/{listed[n][2]})")
        waves.append(w)
        if tracker is not None:
            tracker.advance(label=files.label)
    if moved:
        many = f"{len(moved):,} wave files differ" if len(moved) > 1 else "wave file differs"
        problems.append(f"{many} from filenames.json in begin/end, e.g. {moved[0]}")
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


def is_dispatch_folder(path: Path) -> bool:
    return path.is_dir() and (path / "filenames.json").is_file()


def is_archive(path: Path) -> bool:
    return path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES)


def read_folder(path: Path, tracker: Tracker | None = None) -> Dispatch:
    """One dispatch folder on disk -> Dispatch."""
    return read_dispatch(_DirFiles(Path(path)), tracker)


def load_archive(path: Path, tracker: Tracker) -> list[Dispatch]:
    """Every dispatch folder inside a tar archive, never extracted: one walk keeps every file but the wave
    files, whose names are noted (a second walk reads them if they are needed)."""
    folders: dict[str, dict[str, bytes]] = {}
    later: dict[str, list[str]] = {}
    for p, data in members(path, lambda p: not WAVE_FILE.match(p.name)):
        folder = str(p.parent)
        if data is None:
            later.setdefault(folder, []).append(p.name)
        else:
            folders.setdefault(folder, {})[p.name] = data
    out = [
        read_dispatch(_MemFiles(path, folder, files, later.get(folder, [])), tracker)
        for folder, files in sorted(folders.items())
        if "filenames.json" in files
    ]
    if not out:
        raise InputError("archive holds no ui_output folder (no filenames.json)", str(path))
    return out


# ---- the input kind (attdec.sources.KINDS) -----------------------------------------------------


def detect(path: Path) -> bool:
    return is_dispatch_folder(path) or is_archive(path)


def load(path: Path, tracker: Tracker) -> list[Dispatch]:
    return load_archive(path, tracker) if path.is_file() else [read_dispatch(_DirFiles(path), tracker)]


def weight(path: Path) -> int:
    return 0  # progress counts wave files, once they are read (most reports read none)
