"""Basic blocks, control-flow graph and loops of each kernel, built from the code listing alone.

The listing (code.json rows, or the rows attdec builds for a raw decode) gives each instruction's text
and address, and that is all this needs, so ui_output folders and raw decodes share one builder:

* instruction sizes come from consecutive addresses (the last instruction of a kernel: 4 bytes);
* `s_branch` / `s_cbranch_*` print their simm16 (`s_cbranch_scc1 65109`): the target is
  address + 4 + 4 * sign-extended simm16 (SOPP, isa-decoding.md §3);
* a block ends at a branch, before a branch target, and at `s_endpgm*`, `s_setpc_b64` (indirect jump or
  return), `s_rfe_b64`, `s_trap`, which are exits; `s_swappc_b64` / `s_call_b64` end a block too and
  continue, as the callee returns, at the next instruction (edge kind "call");
* loops are natural loops: an edge to a block that dominates its source is a back edge, the loop is its
  header plus every block that reaches the edge's source without passing the header; loops sharing a
  header are one loop, and loops nest by containment. Retreating edges to a block that does not
  dominate (irreducible control flow) are listed, not turned into loops.

Per block, `block_stats` sums the listing's per-instruction totals: hits (every instruction of a block
executes as often as the block; `UNEVEN` instructions, whose trace record count does not follow
execution, are left out of that), cycles (latency), stall, idle, and the stall by type.
"""

from __future__ import annotations

from attdec.analysis.classify import STALL_TYPES, classify
from attdec.isa import flow_of
from attdec.isa.categories import mnemonic_of
from attdec.model import CodeLine, Dispatch
from attdec.model.record import Record, field
from attdec.model.target import Target

EXITS = ("end", "indirect", "return", "trap")
# Instructions whose trace record count does not follow execution, left out of a block's hit count:
# gfx11/12 traces never record s_delay_alu and s_wait_alu (0 hits), gfx12 traces record s_barrier_wait
# only for some waves and s_endpgm several times per wave (seen in every gfx1200/gfx1201 capture).
UNEVEN = ("s_delay_alu", "s_wait_alu", "s_barrier_wait", "s_endpgm")


class Block(Record):
    id: int
    lines: list[CodeLine]  # its instructions in address order
    succ: list[tuple[int, str]] = field(default_factory=list)  # (block id, "taken"|"fallthrough"|"jump"|"call")
    pred: list[int] = field(default_factory=list)
    exit: str | None = None  # how the kernel leaves here: end, indirect, return, trap, outside
    loop: int | None = None  # innermost loop holding it
    # filled by block_stats
    hits: int = 0
    cycles: int = 0
    stall: int = 0
    idle: int = 0
    by_type: dict[str, int] = field(default_factory=dict)
    consistent: bool = True  # every traced instruction of the block has the block's hit count

    @property
    def start(self) -> int:
        return self.lines[0].vaddr

    @property
    def last(self) -> CodeLine:
        return self.lines[-1]

    @property
    def dominant(self) -> str | None:
        if not self.stall:
            return None
        return max(self.by_type.items(), key=lambda kv: (kv[1], -STALL_TYPES.index(kv[0])))[0]


class Loop(Record):
    id: int
    header: int  # block id
    blocks: list[int]  # block ids, address order
    back_edges: list[tuple[int, int]]  # (latch block, header)
    parent: int | None = None
    depth: int = 1  # 1 = outermost
    children: list[int] = field(default_factory=list)


class Cfg(Record):
    """One kernel's control-flow graph."""

    kernel: str
    codeobj: int
    blocks: list[Block]
    loops: list[Loop]
    irreducible: list[tuple[int, int]] = field(default_factory=list)  # retreating edges that are not back edges

    def block_of_line(self) -> dict[int, int]:
        return {c.line: b.id for b in self.blocks for c in b.lines}


def branch_target(c: CodeLine) -> int | None:
    """Target address of a direct branch (s_branch, s_cbranch_*, s_call_b64) from its printed simm16."""
    parts = c.text.replace(",", " ").split()
    if len(parts) < 2:
        return None
    tok = parts[-1] if mnemonic_of(c.text) == "s_call_b64" else parts[1]
    try:
        simm = int(tok, 0)
    except ValueError:
        return None
    if not -0x8000 <= simm <= 0xFFFF:
        return None
    if simm >= 0x8000:
        simm -= 0x10000
    return c.vaddr + 4 + 4 * simm


def kernels_of(code: list[CodeLine]) -> list[tuple[str, int, list[CodeLine]]]:
    """(kernel name, codeobj, instruction rows in address order) for each kernel of the listing.

    A label row `; name` starts a kernel; rows before any label, and rows for PCs outside every code
    object (raw decodes list them after the kernels), are grouped per code object under "".
    """
    out: list[tuple[str, int, list[CodeLine]]] = []
    current: tuple[str, int, list[CodeLine]] | None = None
    for c in code:
        if c.is_label:
            current = (c.text[1:].strip(), c.codeobj, [])
            out.append(current)
        elif c.text.startswith("<"):
            continue
        else:
            if current is None or current[1] != c.codeobj:
                current = ("", c.codeobj, [])
                out.append(current)
            current[2].append(c)
    return [(k, o, sorted(rows, key=lambda r: r.vaddr)) for k, o, rows in out if rows]


def build_cfg(kernel: str, codeobj: int, rows: list[CodeLine]) -> Cfg:
    """Blocks, edges and loops of one kernel's instruction rows (address order)."""
    at = {c.vaddr: i for i, c in enumerate(rows)}
    flows = [flow_of(mnemonic_of(c.text)) for c in rows]
    leaders = {0}
    for i, (c, f) in enumerate(zip(rows, flows)):
        if f in ("jump", "branch", "call", *EXITS):
            leaders.add(i + 1)
        if f in ("jump", "branch"):
            t = branch_target(c)
            if t in at:
                leaders.add(at[t])
    starts = sorted(x for x in leaders if x < len(rows))
    blocks = [Block(k, rows[s:e]) for k, (s, e) in enumerate(zip(starts, [*starts[1:], len(rows)]))]
    block_at = {b.start: b.id for b in blocks}
    for b in blocks:
        c = b.last
        f = flows[at[c.vaddr]]
        nxt = b.id + 1 if b.id + 1 < len(blocks) else None
        if f in ("jump", "branch"):
            t = branch_target(c)
            if t in block_at:
                b.succ.append((block_at[t], "jump" if f == "jump" else "taken"))
            else:
                b.exit = "outside"
            if f == "branch" and nxt is not None:
                b.succ.append((nxt, "fallthrough"))
        elif f in EXITS:
            b.exit = f
        elif f == "call":
            if nxt is not None:
                b.succ.append((nxt, "call"))
        elif nxt is not None:
            b.succ.append((nxt, "fallthrough"))
        else:
            b.exit = "end"  # runs off the end of the listing
    for b in blocks:
        for s, _k in b.succ:
            if b.id not in blocks[s].pred:
                blocks[s].pred.append(b.id)
    cfg = Cfg(kernel, codeobj, blocks, [])
    if blocks:
        _find_loops(cfg)
    return cfg


def build_cfgs(code: list[CodeLine]) -> list[Cfg]:
    """The control-flow graph of every kernel in a listing."""
    return [build_cfg(k, o, rows) for k, o, rows in kernels_of(code)]


def _dominators(blocks: list[Block]) -> tuple[list[int | None], list[int]]:
    """Immediate dominator of each block reachable from block 0 (None otherwise), and the reverse postorder
    (Cooper, Harvey, Kennedy: "A Simple, Fast Dominance Algorithm")."""
    order, seen = [], set()
    stack = [(0, iter(blocks[0].succ))]
    seen.add(0)
    while stack:
        node, it = stack[-1]
        for s, _k in it:
            if s not in seen:
                seen.add(s)
                stack.append((s, iter(blocks[s].succ)))
                break
        else:
            stack.pop()
            order.append(node)
    rpo = order[::-1]
    num = {b: i for i, b in enumerate(rpo)}
    idom: list[int | None] = [None] * len(blocks)
    idom[0] = 0
    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            preds = [p for p in blocks[b].pred if idom[p] is not None]
            if not preds:
                continue
            new = preds[0]
            for p in preds[1:]:
                x, y = p, new
                while x != y:  # walk both up the dominator tree to their common ancestor
                    while num[x] > num[y]:
                        x = idom[x] or 0
                    while num[y] > num[x]:
                        y = idom[y] or 0
                new = x
            if idom[b] != new:
                idom[b] = new
                changed = True
    return idom, rpo


def _dominates(idom, a: int, b: int) -> bool:
    while True:
        if a == b:
            return True
        if b == 0 or idom[b] is None:
            return False
        b = idom[b]


def _find_loops(cfg: Cfg) -> None:
    blocks = cfg.blocks
    idom, rpo = _dominators(blocks)
    num = {b: i for i, b in enumerate(rpo)}
    bodies: dict[int, set[int]] = {}
    backs: dict[int, list[tuple[int, int]]] = {}
    for b in rpo:
        for s, _k in blocks[b].succ:
            if s not in num or num[s] > num[b]:
                continue  # forward edge
            if _dominates(idom, s, b):
                body = bodies.setdefault(s, {s})
                backs.setdefault(s, []).append((b, s))
                work = [b]
                while work:
                    x = work.pop()
                    if x not in body:
                        body.add(x)
                        work.extend(p for p in blocks[x].pred if idom[p] is not None)
            else:
                cfg.irreducible.append((b, s))
    headers = sorted(bodies, key=lambda h: (-len(bodies[h]), blocks[h].start))
    loops = [Loop(i, h, sorted(bodies[h]), sorted(backs[h])) for i, h in enumerate(headers)]
    for lp in loops:  # parent: the smallest loop strictly containing it (loops are sorted largest first)
        for other in reversed(loops[: lp.id]):
            if lp.header in bodies[other.header] and bodies[lp.header] <= bodies[other.header]:
                lp.parent = other.id
                other.children.append(lp.id)
                break
    for lp in loops:
        lp.depth = 1 if lp.parent is None else loops[lp.parent].depth + 1
        for b in lp.blocks:  # innermost loop: loops are visited outermost first
            inner = blocks[b].loop
            if inner is None or loops[inner].depth < lp.depth:
                blocks[b].loop = lp.id
    cfg.loops = loops


def dispatch_cfgs(d: Dispatch, totals: dict[int, tuple[int, int, int, int]] | None = None) -> list[Cfg]:
    """The control-flow graphs of `d`'s listing with block statistics, from `totals` (per-line totals of
    the waves kept, as `block_stats` takes them) or the listing's own."""
    cfgs = build_cfgs(d.code)
    for cfg in cfgs:
        block_stats(cfg, d.target, totals)
    return cfgs


def block_stats(cfg: Cfg, tgt: Target, totals: dict[int, tuple[int, int, int, int]] | None = None) -> None:
    """Fill each block's hits, cycles, stall, idle and stall by type from the listing's per-instruction
    totals (or `totals`: line id -> (hit, latency, stall, idle), e.g. over a subset of waves)."""
    for b in cfg.blocks:
        hits = []
        b.cycles = b.stall = b.idle = 0
        b.by_type = {}
        for c in b.lines:
            h, la, s, i = (
                totals.get(c.line, (0, 0, 0, 0)) if totals is not None else (c.hit, c.latency, c.stall, c.idle)
            )
            hits.append(h)
            b.cycles += la
            b.stall += s
            b.idle += i
            if s:
                t = classify(c.text, tgt)[0]
                b.by_type[t] = b.by_type.get(t, 0) + s
        even = [h for h, c in zip(hits, b.lines) if not mnemonic_of(c.text).startswith(UNEVEN)]
        b.hits = max(even or hits, default=0)
        b.consistent = all(h == b.hits for h in even)
