"""A kernel's resources next to its occupancy: what the code object asks for, how many waves per SIMD
that allows on the target (theoretical), and how many the trace saw (achieved).

Raw inputs carry the code object's figures (`Dispatch.resources`). ui_output folders have no code
object: the listing's register names give lower bounds (v[12:15] means at least 16 VGPRs), so the
theoretical occupancy is then an upper bound, and says so.
"""

from __future__ import annotations

import re

from attdec.analysis.occupancy import (
    Achieved,
    Theoretical,
    achieved_occupancy,
    theoretical_occupancy,
)
from attdec.isa.categories import CROSS_LANE_PREFIXES
from attdec.model import CodeLine, Dispatch, KernelResources, Target
from attdec.model.record import Record, field
from attdec.model.target import TARGETS, most_waves_per_simd

LISTING = "listing (lower bounds)"


class KernelSummary(Record):
    kernel: str
    arch: str
    dispatch: str | None = None  # None for a bare code object
    resources: KernelResources | None = None
    theoretical: Theoretical | None = None
    # chip unknown (ui_output gfx9): the theoretical figure on each possible chip, "gfx90a, gfx942" -> ...
    candidates: dict[str, Theoretical] = field(default_factory=dict)
    achieved: Achieved | None = None
    achieved_unit: str = "CU"  # what the trace's CU field names: a CU (gfx9) or a WGP (gfx10+)
    notes: list[str] = field(default_factory=list)


# v7, s[4:5], a[0:15] -> the highest register number named
_REG = re.compile(r"(?<![\w.])([vas])(?:(\d{1,9})(?!\d)|\[\d+:(\d{1,9})\])")  # listing text may hold any digits
_WAVE32 = ("vcc_lo", "vcc_hi", "exec_lo", "exec_hi", "saveexec_b32")
_WAVE64 = r"saveexec_b64|\b(?:vcc|exec)\b(?!_)"  # compiled (by re, once) only for a gfx10+ listing
# a line starting with an LDS access (a cross-lane move touches no LDS memory), searched for in "\n" + the
# lines: a literal first is found at C speed, where a pattern starting with ^ (re.M) is tried at every
# character (a sixth of the time)
_LDS = re.compile(r"\n(?!" + "|".join(CROSS_LANE_PREFIXES) + r")ds_")


def _kernel_lines(code: list[CodeLine], kernel: str) -> list[CodeLine]:
    """The listing rows of `kernel`: from its label to the next one (all rows when no label names it)."""
    labels = [i for i, c in enumerate(code) if c.text.startswith(";")]
    for n, i in enumerate(labels):
        if code[i].text[1:].strip() == kernel:
            end = labels[n + 1] if n + 1 < len(labels) else len(code)
            return code[i + 1 : end]
    return [c for c in code if not c.text.startswith(";")]


def listing_resources(code: list[CodeLine], tgt: Target, kernel: str = "") -> tuple[KernelResources | None, list]:
    """Lower bounds on registers (highest register named + 1), the wave size and LDS use, read from the
    instruction text. (resources, notes); resources None when the listing has no instructions."""
    lines = _kernel_lines(code, kernel)
    if not lines:
        return None, []
    operands = "\n".join(c.text.partition(" ")[2] for c in lines)
    # one regex pass over the distinct words of the operands (a listing names the same registers over and
    # over: a twentieth of the text); no register name holds a space or a comma, so none is cut
    words = "\n".join(set(operands.replace(",", " ").split()))
    top = {"v": -1, "a": -1, "s": -1}
    for kind, one, hi in set(_REG.findall(words)):
        top[kind] = max(top[kind], int(one or hi))
    text = "\n".join(c.text for c in lines)
    lds = bool(_LDS.search("\n" + text))
    arch_v, agpr = top["v"] + 1, top["a"] + 1
    unified = tgt.cu.unified_agprs if tgt.cu else tgt.family == "gfx9"  # chip unknown: as gfx90a+ count them
    vgpr = -(-arch_v // 4) * 4 + agpr if agpr and unified else arch_v
    wave: int | None = 64  # gfx9 runs wave64 only
    if tgt.family != "gfx9":
        wave32, wave64 = any(w in text for w in _WAVE32), bool(re.search(_WAVE64, text))
        wave = 32 if wave32 and not wave64 else 64 if wave64 and not wave32 else None
    notes = [
        f"no code object: registers are the highest ones the listing names ({len(lines)} instructions), "
        "so at least these; occupancy is at most the figure shown"
    ]
    if wave is not None and tgt.family != "gfx9":
        notes.append(f"wave{wave} inferred from the listing's {'vcc_lo/exec_lo' if wave == 32 else 'vcc/exec'} use")
    res = KernelResources(
        name=kernel,
        arch=tgt.name if tgt.chip_known else "",
        vgpr=vgpr,
        agpr=agpr if tgt.family == "gfx9" else None,
        arch_vgpr=arch_v,
        sgpr=top["s"] + 1,
        lds_bytes=None if lds else 0,
        wave_size=wave,
        source=LISTING,
    )
    return res, notes


def _candidates(res: KernelResources, tgt: Target) -> dict[str, Theoretical]:
    """Chip unknown: the theoretical figure on each chip of the family, chips with equal figures merged."""
    groups: dict[tuple, tuple[list[str], Theoretical]] = {}
    for t in TARGETS.values():
        if t.family == tgt.family and t.cu is not None and "generic" not in t.name:
            th = theoretical_occupancy(res, t, _bound(res))
            names, _ = groups.setdefault((th.waves_per_simd, th.limited_by), ([], th))
            names.append(t.name)
    return {", ".join(names): th for names, th in groups.values()}


def _bound(res: KernelResources) -> str:
    return "at most" if res.source == LISTING else "exact"


def _with_occupancy(s: KernelSummary, tgt: Target) -> KernelSummary:
    if s.resources is None:
        return s
    if tgt.chip_known:
        s.theoretical = theoretical_occupancy(s.resources, tgt, _bound(s.resources))
    else:
        s.candidates = _candidates(s.resources, tgt)
    return s


ACHIEVED_NOT_READ = "achieved occupancy not read here (it needs the wave start/end records): see `attdec kernel`"


def kernel_summary(d: Dispatch, achieved: bool = True) -> KernelSummary:
    """Resources, theoretical and achieved occupancy of one traced dispatch; `achieved=False` leaves the
    achieved figure out (its records, a folder's occupancy.json, are not read)."""
    s = KernelSummary(kernel=d.kernel, arch=d.arch, dispatch=d.name)
    s.achieved_unit = d.target.traced_unit
    if d.resources is not None:
        s.resources = d.resources
        if d.resources.rounded:
            s.notes.append(
                f"{', '.join(d.resources.rounded)} from the kernel descriptor: rounded up to its allocation granule"
            )
    else:
        s.resources, notes = listing_resources(d.code, d.target, d.kernel)
        s.notes += notes
        if s.resources is None:
            s.notes.append("no code object and no listing: resources unknown")
    _with_occupancy(s, d.target)
    if not achieved:
        s.notes.append(ACHIEVED_NOT_READ)
        return s
    s.achieved = achieved_occupancy(d.occupancy)
    if s.achieved is None:
        s.notes.append("no wave start/end records: achieved occupancy unknown")
        return s
    limit = most_waves_per_simd(d.target)
    if limit is not None and s.achieved.peak > limit:
        s.achieved.over_limit = limit
        what = (
            f"achieved occupancy peaks at {s.achieved.peak:,} waves on one SIMD, more than the {limit} a SIMD of "
            f"{d.arch} holds: the wave start/end records are damaged or repeated, the figures are no measurement"
        )
        s.achieved.notes.append(what)
        d.damage.append(f"{d.path or d.name}: {what}")
    return s


def code_object_summaries(co) -> list[KernelSummary]:
    """Resources and theoretical occupancy of every kernel in a loaded code object (attdec.isa)."""
    tgt = co.target
    out = []
    for k in co.kernels:
        s = KernelSummary(kernel=k.name, arch=tgt.display if tgt else "")
        s.resources = co.resources(k, tgt)
        if s.resources.rounded:
            s.notes.append(
                f"{', '.join(s.resources.rounded)} from the kernel descriptor: rounded up to its allocation granule"
            )
        if tgt is None:
            s.notes.append("target unknown (give --arch): occupancy not computed")
        else:
            _with_occupancy(s, tgt)
        out.append(s)
    return out
