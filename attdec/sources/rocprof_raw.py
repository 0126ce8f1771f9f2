"""rocprofv3 raw ATT output (a folder, its `<hostname>/` subfolder, or loose files) -> RawDispatches.

rocprofv3 names its raw files (ui-output-format.md §1)

    <prefix>_<agent>_shader_engine_<SE>_<dispatch>.att      one per shader engine and dispatch
    <prefix>_<gfxname>_code_object_id_<id>.out              every code object the process loaded

where <prefix> is `<pid>` (default `%hostname%/%pid%`) or the `-o` name. Blobs are grouped into
dispatches by (folder, prefix, agent, dispatch id). Every code object of the same prefix (given, or
next to the given .att files) is offered to each dispatch (rocprofv3 hands the decoder all of them).
Where each was loaded comes from, in
order: the ROCm code-object markers in the trace itself (attdec.decoders.userdata), a rocprofv3
results file next to the raw files (results.json or a code-object CSV with Load_Delta/Load_Base), or,
failing both, is left to `decode_dispatch` to infer from the kernel entry PC in the trace.
Assumptions (no real raw folder was available): a marker's address and a results file's load
delta/base are the amount added to ELF vaddrs (they coincide for HSA code objects, whose first
segment is at vaddr 0); a results file's `load_delta` wins over `load_base`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from attdec.errors import InputError, read_bytes, read_json
from attdec.model.target import Target, target
from attdec.sources.kind import Tracker, blob_weight

if TYPE_CHECKING:
    from attdec.sources.raw import RawDispatch

ATT_RE = re.compile(r"^(?:(?P<prefix>.+)_)?(?P<agent>\d+)_shader_engine_(?P<se>\d+)_(?P<disp>\d+)\.att$")
CO_RE = re.compile(r"^(?:(?P<prefix>.+?)_)?(?:(?P<gfx>gfx[0-9a-f]+)_)?code_object_id_(?P<id>\d+)\.(?:out|hsaco|co)$")


def _files(paths: list[Path]) -> list[Path]:
    """The candidate files: loose files as given, folders and their immediate subfolders (<hostname>/)."""
    out = []
    for p in paths:
        if p.is_dir():
            for q in sorted(p.iterdir()):
                if q.is_file():
                    out.append(q)
                elif q.is_dir():
                    out.extend(sorted(r for r in q.iterdir() if r.is_file()))
        else:
            out.append(p)
    return out


def _load_table(folders: set[Path]) -> tuple[dict[int, int], dict[int, str]]:
    """Code-object id -> load delta and dispatch id -> kernel name, from rocprofv3 results files."""
    bases: dict[int, int] = {}
    names: dict[int, str] = {}
    for folder in folders:
        for f in sorted(folder.glob("*results.json")):
            doc = read_json(f)
            symbols: dict[int, str] = {}
            dispatch_kernel: dict[int, int] = {}
            stack = [doc]
            while stack:
                x = stack.pop()
                if isinstance(x, list):
                    stack.extend(x)
                    continue
                if not isinstance(x, dict):
                    continue
                stack.extend(v for v in x.values() if isinstance(v, (dict, list)))
                if "code_object_id" in x and ("load_delta" in x or "load_base" in x) and "kernel_id" not in x:
                    base = _u64(x.get("load_delta", x.get("load_base")))
                    if base is not None and _u64(x["code_object_id"]) is not None:
                        bases[x["code_object_id"]] = base
                elif "kernel_id" in x and "kernel_name" in x and "dispatch_id" not in x:
                    if _u64(x["kernel_id"]) is not None:
                        symbols[x["kernel_id"]] = str(x["kernel_name"])
                elif "dispatch_id" in x and "kernel_id" in x:
                    if _u64(x["dispatch_id"]) is not None and _u64(x["kernel_id"]) is not None:
                        dispatch_kernel[x["dispatch_id"]] = x["kernel_id"]
            names.update({d: symbols[k] for d, k in dispatch_kernel.items() if k in symbols})
        for f in sorted(folder.glob("*.csv")):
            _csv_bases(f, bases, names)
    return bases, names


def _u64(v) -> int | None:
    """An id or address of a results file: an integer a 64-bit field holds, else None (the entry is ignored,
    as entries of other shapes are)."""
    return v if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 1 << 64 else None


def _csv_bases(f: Path, bases: dict[int, int], names: dict[int, str]) -> None:
    import csv

    try:
        with open(f, newline="") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, csv.Error, UnicodeDecodeError):
        return
    for r in rows:
        low = {k.strip().lower(): (v or "").strip() for k, v in r.items() if k}
        try:
            if "code_object_id" in low and ("load_delta" in low or "load_base" in low):
                co, base = _u64(int(low["code_object_id"], 0)), _u64(int(low.get("load_delta") or low["load_base"], 0))
                if co is not None and base is not None:
                    bases[co] = base
            elif "dispatch_id" in low and "kernel_name" in low:
                names[int(low["dispatch_id"], 0)] = low["kernel_name"]
        except ValueError:
            continue


def load_files(names: Sequence[str | Path]) -> list[RawDispatch]:
    from attdec.decoders import stream_generation
    from attdec.decoders.userdata import scan_userdata
    from attdec.sources.raw import RawBlob, RawCodeObject, RawDispatch

    paths = [Path(p) for p in names]
    for p in paths:
        if not p.exists():
            raise InputError("no such file or folder", str(p))
    files = _files(paths)
    groups: dict[tuple, list[tuple[int, Path]]] = {}
    cos: dict[tuple, list[tuple[int, str, Path]]] = {}
    for f in files:
        m = ATT_RE.match(f.name)
        if m:
            key = (f.parent, m["prefix"] or "", int(m["agent"]), int(m["disp"]))
            groups.setdefault(key, []).append((int(m["se"]), f))
            continue
        m = CO_RE.match(f.name)
        if m:
            cos.setdefault((f.parent, m["prefix"] or ""), []).append((int(m["id"]), m["gfx"] or "", f))
    for folder, prefix in {(k[0], k[1]) for k in groups} - set(cos):  # loose .att files: objects next to them
        for f in sorted(folder.glob(f"{prefix}_*code_object_id_*" if prefix else "*code_object_id_*")):
            m = CO_RE.match(f.name)
            if m and (m["prefix"] or "") == prefix:
                cos.setdefault((folder, prefix), []).append((int(m["id"]), m["gfx"] or "", f))
    if not groups:
        raise InputError(
            "no rocprofv3 shader-engine files (<prefix>_<agent>_shader_engine_<SE>_<dispatch>.att)",
            ", ".join(map(str, paths)),
        )
    folders = {k[0] for k in groups} | {k[0].parent for k in groups}
    table_bases, table_names = _load_table(folders)

    out = []
    for (folder, prefix, agent, disp), ses in sorted(
        groups.items(), key=lambda kv: (kv[0][3], kv[0][2], str(kv[0][0]))
    ):
        blobs = []
        markers: dict[int, int] = {}
        for se, f in sorted(ses):
            data = read_bytes(f)
            blobs.append(RawBlob(se, data, str(f)))
            gen = stream_generation(data)
            if gen is not None:
                for mk in scan_userdata(data, gen).markers:
                    if mk.unload:
                        markers.pop(mk.id, None)
                    else:
                        markers[mk.id] = mk.addr
        objs = sorted(cos.get((folder, prefix), []))
        gens = {g for g in (stream_generation(b.data) for b in blobs) if g is not None}
        tgt = _code_object_target([(g, str(f)) for _, g, f in objs], gens) or _agent_target(folder, gens)
        listing, problems = None, []
        if not objs:  # rocprofv3 often keeps no code object: its own decode's listing can stand in
            ui = _ui_output_folder(folder, agent, disp)
            if ui is not None:
                listing = str(ui / "code.json")
            else:
                problems.append(
                    f"no code object ({prefix + '_' if prefix else ''}<gfx>_code_object_id_<id>.out) next to the "
                    f".att files and no ui_output_agent_{agent}_dispatch_{disp}/code.json: decoded without PCs "
                    "(per-line figures unknown, totals kept)"
                )
        code_objects = []
        for co_id, gfx, f in objs:
            if gfx and tgt and gfx != tgt.name:
                continue
            base = markers.get(co_id, table_bases.get(co_id))
            code_objects.append(RawCodeObject(read_bytes(f), base, str(f), co_id))
        kernel = table_names.get(disp, "")
        out.append(
            RawDispatch(
                name=f"dispatch_{disp}" + (f" {kernel}" if kernel else ""),
                target=tgt,
                code_objects=code_objects,
                blobs=blobs,
                kernel=kernel,
                path=str(folder),
                agent=agent,
                dispatch_id=disp,
                listing=listing,
                problems=problems,
            )
        )
    return out


def _agent_target(folder: Path, gens: set[int]) -> Target | None:
    """The chip rocprofv3's agent table (`<pid>_agent_info.csv`, next to the .att files or one level up)
    names for the blobs' generation, when it names exactly one; else the generation's family ("gfx9")."""
    from attdec.model.target import family_target
    from attdec.sources.ui_output import agent_targets

    for where in (folder, folder.parent):
        found = {t for t in agent_targets(where) if not gens or t.generation in gens}
        if len(found) == 1:
            return found.pop()
        if found:
            break  # several GPUs of that generation: which one ran it, the table cannot say
    return family_target(gens.pop()) if len(gens) == 1 else None


def _code_object_target(gfx_names: list[tuple[str, str]], gens: set[int]) -> Target | None:
    """The target the code objects' file names give whose generation matches the blobs' (multi-GPU runs mix
    them); `gfx_names`: (gfx name, the code object file it is from)."""
    named = sorted({(target(g, f), f) for g, f in gfx_names if g}, key=lambda tf: (tf[0].name, tf[1]))
    fit = [t for t, _ in named if not gens or t.generation in gens] or [t for t, _ in named]
    return fit[0] if fit else None


# --- the input kind: a folder holding such files, or one of the files itself ---------------------


def detect(p: Path) -> bool:
    """A rocprofv3-named shader-engine .att file or code object, or a folder holding such files directly
    or in a subfolder (rocprofv3 writes <output>/<hostname>/)."""
    if p.is_dir():
        try:
            return _holds_att(p) or any(_holds_att(e.path) for e in _entries(p) if e.is_dir())
        except OSError:
            return False
    return bool(ATT_RE.match(p.name) or CO_RE.match(p.name))


def _entries(folder) -> list[os.DirEntry]:
    with os.scandir(folder) as it:
        return list(it)


def _holds_att(folder) -> bool:
    """Whether `folder` directly holds a shader-engine .att file: names only, no sort and no stat per file.
    Walking a parent of a ui_output folder passes here with its thousands of wave files: one search of
    all the names at once (C speed) finds none with ".att" in it."""
    names = os.listdir(folder)
    if ".att" not in "\n".join(names):
        return False
    return any(ATT_RE.match(n) and os.path.isfile(os.path.join(folder, n)) for n in names)


def _ui_output_folder(folder: Path, agent: int, disp: int) -> Path | None:
    """The ui_output folder rocprofv3 wrote for this dispatch (with its code.json), next to the raw files
    or one level up (the session folder holds `<host>/` and the ui_output folders side by side)."""
    name = f"ui_output_agent_{agent}_dispatch_{disp}"
    for where in (folder, folder.parent):
        if (where / name / "code.json").is_file():
            return where / name
    return None


def load(p: Path, tracker: Tracker) -> list[RawDispatch]:
    """A folder (a rocprofv3 session: `<host>/` with the .att files, the agent table, the ui_output
    folders): its dispatches, decoded from the .att files; code objects as kept, else the ui_output folder's
    code.json (`RawDispatch.listing`). A loose .att: its dispatch, once (from its lowest SE file); a loose
    code object: nothing by itself (the .att files pick it up)."""
    if p.is_file():
        m = ATT_RE.match(p.name)
        if not m:
            return []
        prefix = f"{m['prefix']}_" if m["prefix"] else ""
        siblings = sorted(p.parent.glob(f"{prefix}{m['agent']}_shader_engine_*_{m['disp']}.att"))
        if int(m["se"]) != min(int(ATT_RE.match(q.name)["se"]) for q in siblings):  # type: ignore[index]
            return []
        raws = load_files(siblings)
    else:
        raws = load_files([p])
    return raws


def weight(p: Path) -> int:
    files = _files([p]) if p.is_dir() else [p]
    return sum(blob_weight(f.stat().st_size) for f in files if f.suffix == ".att")
