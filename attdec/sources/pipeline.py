"""The one reader: paths -> `Dispatch`es.

    open_dispatches(paths)   every dispatch the paths name, raw captures decoded (what the analyses take)
    open_raw(paths)          the raw (undecoded) dispatches the paths name (what export-ui and decode take)

Paths may be files, folders, parents of many inputs (walked, not descending into recognised ones) and
globs; each is claimed by the first input kind of attdec.sources.KINDS that detects it (a kind's module
is imported when its turn comes). With `code` (`FILE@LOADBASE` specs), the paths are the SQTT blobs of
one dispatch (attdec.sources.explicit). Progress goes to an optional callback (label, done, total);
nothing here prints.
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Callable
from functools import cache, cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from attdec.errors import AttdecError, InputError
from attdec.model import Dispatch, target
from attdec.model.options import InputOptions
from attdec.model.record import Frozen
from attdec.sources import KINDS
from attdec.sources.kind import Loaded, Progress, Tracker, raw_weight
from attdec.sources.limits import check_whole_decode

if TYPE_CHECKING:
    from attdec.sources.raw import RawDispatch


class InputKind(Frozen):
    name: str  # the --input-format name
    help: str
    module_name: str  # attdec.sources.<module_name>: detect(path), load(path, tracker), weight(path)

    @cached_property
    def module(self) -> ModuleType:
        return importlib.import_module(f"attdec.sources.{self.module_name}")

    def detect(self, path: Path) -> bool:
        return self.module.detect(path)

    def load(self, path: Path, tracker: Tracker) -> Loaded:
        return self.module.load(path, tracker)

    def weight(self, path: Path) -> int:
        return self.module.weight(path)


@cache
def kinds() -> tuple[InputKind, ...]:
    return tuple(InputKind(name, what, mod) for name, (mod, what) in KINDS.items())


def kind_of(path: Path, only: str | None = None) -> InputKind | None:
    for kind in kinds():
        try:
            if (only is None or kind.name == only) and kind.detect(path):
                return kind
        except OSError:  # cannot look inside: not recognised (reading it says why, if it is named)
            continue
    return None


def _expand_globs(paths) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        p = os.path.expanduser(str(p))
        if any(c in p for c in "*?[") and not os.path.exists(p):  # a pattern (glob.has_magic)
            import glob

            hits = sorted(glob.glob(p))
            if not hits:
                raise InputError("no file or folder matches this pattern", p)
            out.extend(Path(h) for h in hits)
        else:
            out.append(Path(p))
    return out


# What happens to inputs that cannot be read (docs/reliability.md): `report(level, error)` hears of each,
# "error" for an input or dispatch lost, "warning" for an entry of a walked folder skipped.
Report = Callable[[str, AttdecError], None]


class Failures:
    """Inputs and dispatches that failed, kept aside so that the others are still read. Without a `report`
    callback the first error is raised where it happens (and skipped entries are not mentioned)."""

    def __init__(self, report: Report | None = None):
        self.report = report
        self.errors: list[AttdecError] = []

    @contextlib.contextmanager
    def guard(self):
        """Run the body; an AttdecError in it is kept (with a `report`) or raised (without)."""
        try:
            yield
        except AttdecError as e:
            if self.report is None:
                raise
            self.errors.append(e)

    def skipped(self, e: AttdecError) -> None:
        if self.report is not None:
            self.report("warning", e)

    def settle(self, read_any: bool) -> None:
        """Report the failures; when nothing at all was read, the last one is raised instead of reported,
        so that one bad input is one error line, as it always was."""
        errors, self.errors = self.errors, []
        if not errors or self.report is None:
            return
        for e in errors if read_any else errors[:-1]:
            self.report("error", e)
        if not read_any:
            raise errors[-1]


def _walk(root: Path, only: str | None, failures: Failures) -> list[tuple[InputKind, Path]]:
    """Every recognised input below `root`, not descending into recognised folders. Folders and files that
    cannot be read are skipped with a warning (attdec cannot tell whether they held an input)."""

    def unreadable(e: OSError) -> None:
        failures.skipped(InputError(f"cannot read: {e.strerror or e}: skipped", e.filename))

    found = []
    for dirpath, dirnames, filenames in os.walk(root, onerror=unreadable):
        dirnames.sort()
        keep = []
        for d in dirnames:
            if d.startswith(".") and d.endswith(".tmp"):  # an output being written (report.output): not an input yet
                continue
            sub = Path(dirpath, d)
            k = kind_of(sub, only)
            if k:
                found.append((k, sub))
            else:
                keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            sub = Path(dirpath, f)
            if not os.access(sub, os.R_OK):
                failures.skipped(InputError("cannot read: permission denied: skipped", str(sub)))
                continue
            k = kind_of(sub, only)
            if k:
                found.append((k, sub))
    return found


def _resolve_one(p: Path, only: str | None, failures: Failures) -> list[tuple[InputKind, Path]]:
    if not p.exists():
        raise InputError("no such file or folder", str(p))
    if not os.access(p, os.R_OK):
        raise InputError("permission denied", str(p))
    k = kind_of(p, only)
    items = [(k, p)] if k else (_walk(p, only, failures) if p.is_dir() else [])
    if not items:
        if only is not None:
            raise InputError(f"not a {only} input", str(p))
        if p.is_file() and p.suffix == ".att":  # one SE's blob: its PCs need its code object, which a folder names
            where = f" ({p.parent} is one)" if kind_of(p.parent, None) else ""
            raise InputError(
                "a bare SQTT blob: name its code object and load address with --code FILE@LOADBASE (and --arch), "
                f"or give the capture folder it belongs to{where}",
                str(p),
            )
        what = "folder" if p.is_dir() else "file"
        known = "; ".join(k.help for k in kinds())
        raise InputError(f"not an input attdec reads (this {what} is none of: {known})", str(p))
    return items


def resolve(paths, only: str | None = None, failures: Failures | None = None) -> list[tuple[InputKind, Path]]:
    """(kind, path) for every input named by `paths`, in command-line then name order, no duplicates.
    `only` restricts recognition to the input kind of that name (--input-format). A path that is missing,
    unreadable or no input goes to `failures` (raised when there is none)."""
    if only is not None and only not in KINDS:
        raise InputError(f"unknown input format {only!r} (known: {', '.join(KINDS)})")
    failures = failures or Failures()
    out, seen = [], set()
    for pattern in paths:
        with failures.guard():
            for p in _expand_globs([pattern]):
                for k, q in _resolve_one(p, only, failures):
                    key = os.path.realpath(q)
                    if key not in seen:
                        seen.add(key)
                        out.append((k, q))
    return out


def read(
    paths, options: InputOptions = InputOptions(), tracker: Tracker | None = None, failures: Failures | None = None
) -> Loaded:
    """Every dispatch the paths name (read as `options` say), as read: `Dispatch`es and `RawDispatch`es still
    to decode. An input that fails goes to `failures` and the others are still read (without `failures`, the
    error is raised)."""
    tracker = tracker or Tracker()
    failures = failures or Failures()
    if options.arch is not None:
        target(options.arch)  # an unknown name is an error listing the known ones, whatever the input
    if options.code:
        from attdec.sources import explicit

        raw = explicit.load(paths, options.code, options.arch).check()
        tracker.grow(raw_weight(raw))
        return [raw]
    items = resolve(paths, options.input_format, failures)
    if tracker.progress is not None:  # the total is only shown (weighing a capture folder stats its blobs)
        tracker.grow(sum(_weight(k, p) for k, p in items))
    loaded: Loaded = []
    for k, p in items:
        with failures.guard():
            loaded += [d if isinstance(d, Dispatch) else d.check() for d in k.load(p, tracker)]
    out = _unique(loaded)
    if not out and not failures.errors:  # every input was recognised, yet none held a dispatch: say so
        raise InputError("no dispatch in this input", ", ".join(str(p) for _k, p in items))
    return out


def _weight(kind: InputKind, path: Path) -> int:
    try:
        return kind.weight(path)
    except OSError:  # unreadable: its load will say so
        return 0


def _unique(dispatches) -> list:
    """Drop a dispatch reached twice (e.g. a raw folder and, walking its parent, its ui_output folder)."""
    out, seen = [], set()
    for d in dispatches:
        key = (os.path.realpath(d.path), d.name) if d.path else None
        if key is None or key not in seen:
            seen.add(key)
            out.append(d)
    return out


def open_dispatches(
    paths,
    options: InputOptions = InputOptions(),
    *,
    progress: Progress | None = None,
    need: tuple[str, ...] = (),
    report: Report | None = None,
    before_decode: Callable[[list], None] | None = None,
) -> list[Dispatch]:
    """Every dispatch the paths name, read and raw captures decoded as `options` say (on up to
    `options.decode.jobs` processes: attdec.sources.parallel), `before_decode(raw dispatches)` called first
    when there are any. Attributes a source defers (a ui_output folder's `waves`, `occupancy`) load on first use; those
    named in `need` are loaded here, where `progress` reports them. With `report`, an input or dispatch that
    fails is reported and the others are still read; without, its error is raised."""
    tracker = Tracker(progress)
    failures = Failures(report)
    found = read(paths, options, tracker, failures)
    raw = [d for d in found if not isinstance(d, Dispatch)]
    decoded = None
    if raw:  # the decoding (and worker pool) module only when there is something to decode
        from attdec.sources.parallel import decode_dispatches, unwrap

        if not options.decode.fold:  # every record of every dispatch is kept
            check_whole_decode(raw)
        if before_decode is not None:
            before_decode(raw)
        decoded = decode_dispatches(raw, tracker, options.decode)
    out = []
    try:
        for d in found:
            outcome = next(decoded) if not isinstance(d, Dispatch) else None  # type: ignore[arg-type]
            with failures.guard():  # one failing dispatch is kept aside, the others are still read
                if outcome is not None:
                    d = unwrap(outcome)
                for name in need:
                    getattr(d, name)
                out.append(d)
    finally:
        if decoded is not None:
            decoded.close()  # the workers end here, whether or not every dispatch was reached
    failures.settle(bool(out))
    tracker.progress = None  # what loads later does so after the caller's progress display is gone
    return _unique(out)


def open_raw(paths, options: InputOptions = InputOptions(), report: Report | None = None) -> list[RawDispatch]:
    """The raw dispatches the paths name (`options.decode` aside: they are not decoded); an input that is
    already decoded (ui_output) is an error here. `report` as for `open_dispatches`."""
    failures = Failures(report)
    out = []
    for d in read(paths, options, failures=failures):
        with failures.guard():
            if isinstance(d, Dispatch):
                raise InputError("this is a decoded ui_output folder, not a raw capture", d.path)
            out.append(d)
    failures.settle(bool(out))
    return out


def describe(paths, input_format: str | None = None) -> list[dict]:
    """What each input is (`attdec info`): its kind, what the kind's module says about it (its optional
    `describe(path) -> dict`), and the dispatches it holds, not decoded."""
    out = []
    for kind, path in resolve(paths, input_format):
        info: dict[str, Any] = {"path": str(path), "kind": kind.name, "what": kind.help}
        own = getattr(kind.module, "describe", None)
        info.update(own(path) if own else {"dispatches": kind.load(path, Tracker())})
        info["dispatches"] = [_summary(d) for d in info["dispatches"]]
        out.append(info)
    return out


def _summary(d: Dispatch | RawDispatch) -> dict:
    if not isinstance(d, Dispatch):  # a RawDispatch
        return {
            "name": d.name,
            "kernel": d.kernel,
            "arch": str(d.arch),
            "shader_engines": sorted({b.se for b in d.blobs}),
            "sqtt_bytes": sum(len(b.data) for b in d.blobs),
            # a code.json standing in for the code object: placed by the trace's kernel entry when decoded
            "code_objects": [{"name": c.name, "base": c.base} for c in d.code_objects]
            or ([{"name": d.listing, "base": None}] if d.listing else []),
        }
    return {"name": d.name, "kernel": d.kernel, "arch": d.arch, "waves": d.wave_count}
