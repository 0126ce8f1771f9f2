"""The raw input kinds (undecoded SQTT + code objects): how each is recognised and loaded.

Each kind is a (detect, load) pair over the list of paths the user gave; `load_raw` picks the first
kind that recognises them, or the one named by `--input-format`. The general input resolver
(attdec.sources) registers these next to the ui_output reader.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from attdec.errors import InputError, read_bytes
from attdec.sources import capture, rocprof_raw, tinygrad
from attdec.sources.raw import RawBlob, RawCodeObject, RawDispatch


def _tinygrad_detect(paths: list[Path]) -> bool:
    return len(paths) == 1 and tinygrad.is_profile(paths[0])


RAW_KINDS: dict[str, tuple[Callable[[list[Path]], bool], Callable[[list[Path]], list[RawDispatch]]]] = {
    "tinygrad": (_tinygrad_detect, lambda paths: tinygrad.load(paths[0])),
    "rocprof-raw": (rocprof_raw.detect, rocprof_raw.load),
    "capture": (capture.detect, capture.load),
}


def load_explicit(blobs: list[str | Path], code: list[str], arch: str | None = None) -> RawDispatch:
    """Blobs + `FILE@LOADBASE` code objects named on the command line (as `attdec decode` takes them):
    one dispatch; each blob's SE from `se<N>` / `shader_engine_<N>` in its name, else its position.
    The arch, when not given, comes from the first code object (at decode time)."""
    from attdec.commands.decode import parse_code_spec, se_of

    if not code:
        raise InputError("explicit blobs need at least one --code FILE@LOADBASE")
    cos = []
    for i, spec in enumerate(code):
        path, base = parse_code_spec(spec)
        cos.append(RawCodeObject(read_bytes(Path(path)), base, path, i + 1))
    raws = []
    for i, b in enumerate(blobs):
        se = se_of(str(b))
        raws.append(RawBlob(i if se is None else se, read_bytes(Path(b)), str(b)))
    if len({b.se for b in raws}) != len(raws):
        raise InputError(
            "two blobs for the same shader engine; name them ..._se<N>.att", ", ".join(str(b) for b in blobs)
        )
    name = Path(blobs[0]).name if len(blobs) == 1 else "explicit"
    return RawDispatch(
        name=name, arch=arch or "", code_objects=cos, blobs=sorted(raws), path=str(Path(blobs[0]).parent)
    )


def open_explicit(blobs, code, arch=None) -> list:
    """The decoded Dispatch of explicit blobs + code objects (hotspots/waves --code)."""
    from attdec.report.progress import progress

    raw = load_explicit(list(blobs), list(code), arch)
    with progress(sum(_blob_steps(len(b.data)) for b in raw.blobs), "decoding") as bar:
        return _decoded([raw], bar)


def detect_raw(paths: list[Path]) -> str | None:
    for name, (detect, _) in RAW_KINDS.items():
        if detect(paths):
            return name
    return None


def load_raw(paths: list[str | Path], fmt: str | None = None) -> list[RawDispatch]:
    """RawDispatches of the given inputs, of kind `fmt` or of the kind they are recognised as."""
    paths = [Path(p) for p in paths]
    for p in paths:
        if not p.exists():
            raise InputError("no such file or folder", str(p))
    kind = fmt or detect_raw(paths)
    if kind is None:
        raise InputError(
            "not a raw capture attdec knows (tinygrad profile.pkl, rocprofv3 raw output with "
            "*_shader_engine_*.att files, or a capture folder with capture.json)",
            ", ".join(map(str, paths)),
        )
    if kind not in RAW_KINDS:
        raise InputError(f"unknown input format {kind!r} (known: {', '.join(RAW_KINDS)})")
    return RAW_KINDS[kind][1](paths)


# --- the general input resolver (attdec.sources.register / InputKind, from the ui_output reader's branch) ---
# Each raw kind is registered as a per-path (detect, load, weight) triple that decodes what it loads, so
# `attdec hotspots` / `waves` take raw captures like ui_output folders.

UNIT = 1 << 16  # progress is counted in 64 KiB of SQTT (plus one step per blob): big decodes show a bar


def _blob_steps(n_bytes: int) -> int:
    return 1 + n_bytes // UNIT


def _decoded(raws: list[RawDispatch], bar) -> list:
    from attdec.sources.raw import decode_dispatch

    out = []
    for raw in raws:
        steps = [_blob_steps(len(b.data)) for b in raw.blobs]
        seen = [0]

        def step(label, done, total, seen=seen, steps=steps):
            if done > seen[0]:
                bar.advance(sum(steps[seen[0] : done]))
                seen[0] = done

        out.append(decode_dispatch(raw, step))
    return out


def _att_steps(folder: Path) -> int:
    return sum(_blob_steps(f.stat().st_size) for f in folder.glob("*.att"))


def _has_ui_output(raw: RawDispatch) -> bool:
    """A rocprofv3 dispatch that was decoded already: its ui_output folder sits in the output root."""
    if raw.dispatch_id is None or not raw.path:
        return False
    name = f"ui_output_agent_{raw.agent}_dispatch_{raw.dispatch_id}"
    return any((Path(raw.path) / up / name / "filenames.json").is_file() for up in ("..", "."))


def _rocprof_detect(p: Path) -> bool:
    if p.is_dir():
        try:
            return any(rocprof_raw.ATT_RE.match(q.name) for q in p.iterdir() if q.is_file())
        except OSError:
            return False
    return bool(rocprof_raw.ATT_RE.match(p.name) or rocprof_raw.CO_RE.match(p.name))


def _rocprof_load(p: Path, bar) -> list:
    """A folder: its dispatches not decoded already. A loose .att: its dispatch, once (from its lowest SE
    file); a loose code object: nothing by itself (the .att files pick it up)."""
    if p.is_file():
        m = rocprof_raw.ATT_RE.match(p.name)
        if not m:
            return []
        prefix = f"{m['prefix']}_" if m["prefix"] else ""
        siblings = p.parent.glob(f"{prefix}{m['agent']}_shader_engine_*_{m['disp']}.att")
        lowest = min(int(rocprof_raw.ATT_RE.match(q.name)["se"]) for q in siblings)
        if int(m["se"]) != lowest:
            return []
        return _decoded(
            rocprof_raw.load(sorted(p.parent.glob(f"{prefix}{m['agent']}_shader_engine_*_{m['disp']}.att"))), bar
        )
    return _decoded([r for r in rocprof_raw.load([p]) if not _has_ui_output(r)], bar)


def _tinygrad_steps(p: Path) -> int:
    try:
        return sum(_blob_steps(len(b.data)) for d in tinygrad.load(p) for b in d.blobs)
    except Exception:
        return 1


def _register_with_resolver() -> None:
    import attdec.sources as src

    register, InputKind = getattr(src, "register", None), getattr(src, "InputKind", None)
    if register is None or InputKind is None or any(k.name == "tinygrad" for k in getattr(src, "KINDS", [])):
        return
    register(
        InputKind(
            "tinygrad",
            lambda p: p.is_file() and tinygrad.is_profile(p),
            lambda p, bar: _decoded(tinygrad.load(p), bar),
            weight=_tinygrad_steps,
        )
    )
    register(
        InputKind(
            "rocprof-raw",
            _rocprof_detect,
            _rocprof_load,
            weight=lambda p: _att_steps(p) if p.is_dir() else _blob_steps(p.stat().st_size),
        )
    )
    register(
        InputKind(
            "capture",
            lambda p: p.is_dir() and (p / "capture.json").is_file(),
            lambda p, bar: _decoded(capture.load([p]), bar),
            weight=_att_steps,
        )
    )


_register_with_resolver()
