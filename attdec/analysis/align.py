"""Pair the instructions of two listings of one kernel, for comparing runs whose code changed.

Two steps (docs/diff.md):

1. **Source lines** are paired: same file, same number. When a file's set of line numbers differs
   between the two listings (lines were inserted or deleted above), the file's lines, in number order,
   are aligned by content - the mnemonic sequence each line compiled to - with difflib's matcher; a line
   with no content match is paired with its number shifted as much as the nearest paired line above it
   (below it, before the first pair), if that line is still free.
2. **Instructions** of each paired source line (call chain included), in program order, are aligned by
   mnemonic sequence with difflib's matcher (longest common run first, then recursively either side of
   it). A matched pair is `same`, or `changed` when the text differs (operands, modifiers); what is left
   is `removed` (before only) or `added` (after only). When either listing has no line info (a
   hand-edited kernel), each whole listing is one group, aligned by mnemonics.

Identical listings (the usual case: repeated runs of one binary) short-cut to the identity.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import defaultdict
from difflib import SequenceMatcher

from attdec.analysis.hotspots import frames
from attdec.model.record import Record, field

SAME, CHANGED, ADDED, REMOVED = "same", "changed", "added", "removed"
UNPAIRED = " (line gone)"  # suffix given to a before-frame whose source line has no partner


def mnemonic(text: str) -> str:
    return text.split(None, 1)[0] if text else ""


def split_location(loc: str) -> tuple[str, int] | None:
    """'a/b.py:12' -> ('a/b.py', 12); None when there is no line number."""
    path, _, num = loc.rpartition(":")
    return (path, int(num)) if path and num.isdigit() else None


class Alignment(Record):
    """`pairs`: (before index or None, after index or None, status), in after-program order with removed
    instructions where they stood; `lines`: before (file, line) -> after (file, line) or None, for the
    files whose line numbers changed."""

    pairs: list[tuple[int | None, int | None, str]]
    lines: dict[tuple[str, int], tuple[str, int] | None] = field(default_factory=dict)

    def location(self, loc: str) -> str:
        """A before-side 'file:line' as the after side numbers it ('file:line (line gone)' if unpaired)."""
        p = split_location(loc)
        if p is None or p not in self.lines:
            return loc
        q = self.lines[p]
        return loc + UNPAIRED if q is None else f"{q[0]}:{q[1]}"

    def chain(self, source: str) -> str:
        return " -> ".join(self.location(f) for f in frames(source))

    def counts(self) -> dict[str, int]:
        out = dict.fromkeys((SAME, CHANGED, ADDED, REMOVED), 0)
        for _, _, s in self.pairs:
            out[s] += 1
        return out


def matches(a: list, b: list) -> list[tuple[int, int]]:
    """Index pairs of equal items, in order: the common head and tail, and difflib's matcher in between
    (longest common run first, then recursively either side). Trimming first keeps one insertion into a
    long listing linear instead of quadratic."""
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    out = [(k, k) for k in range(head)]
    sm = SequenceMatcher(None, a[head : len(a) - tail], b[head : len(b) - tail], autojunk=False)
    out += [(head + m.a + k, head + m.b + k) for m in sm.get_matching_blocks() for k in range(m.size)]
    return out + [(len(a) - tail + k, len(b) - tail + k) for k in range(tail)]


def _signatures(insts: list[tuple[str, str]]) -> dict[str, dict[int, list[str]]]:
    """file -> line -> mnemonics (program order) of the instructions any frame of which is that line."""
    sig: dict[str, dict[int, list[str]]] = defaultdict(lambda: defaultdict(list))
    for text, source in insts:
        for fr in frames(source):
            p = split_location(fr)
            if p:
                sig[p[0]][p[1]].append(mnemonic(text))
    return sig


def pair_lines(before: list[tuple[str, str]], after: list[tuple[str, str]]) -> dict:
    """Source-line pairing (step 1) for the files whose line numbers differ; see the module docstring."""
    sb, sa = _signatures(before), _signatures(after)
    out: dict[tuple[str, int], tuple[str, int] | None] = {}
    for path in sb.keys() & sa.keys():
        lb, la = sorted(sb[path]), sorted(sa[path])
        if lb == la:
            continue
        pairs = {lb[x]: la[y] for x, y in matches([tuple(sb[path][n]) for n in lb], [tuple(sa[path][n]) for n in la])}
        anchors = sorted(pairs)
        shifts = [pairs[b] - b for b in anchors]
        taken, free = set(pairs.values()), set(la)
        for n in lb:
            if n in pairs:
                continue
            k = bisect_left(anchors, n)
            shift = shifts[k - 1] if k else (shifts[0] if shifts else 0)
            if n + shift in free and n + shift not in taken:
                pairs[n] = n + shift
                taken.add(n + shift)
        for n in lb:
            out[(path, n)] = (path, pairs[n]) if n in pairs else None
    return out


def align(before: list[tuple[str, str]], after: list[tuple[str, str]]) -> Alignment:
    """Pair two instruction lists, each [(text, source chain)] in program order (labels left out)."""
    if before == after:
        return Alignment([(i, i, SAME) for i in range(len(before))])
    groups_b: dict[str, list[int]] = defaultdict(list)
    groups_a: dict[str, list[int]] = defaultdict(list)
    if not any(src for _, src in before) or not any(src for _, src in after):
        # one side has no line information (a hand-edited kernel): source lines cannot pair anything,
        # so the whole listings are one group each, aligned by mnemonic sequence
        al = Alignment([])
        groups_b[""], groups_a[""] = list(range(len(before))), list(range(len(after)))
    else:
        al = Alignment([], pair_lines(before, after))
        for i, (_, src) in enumerate(before):
            groups_b[al.chain(src)].append(i)
        for j, (_, src) in enumerate(after):
            groups_a[src].append(j)
    partner: dict[int, int] = {}  # after index -> before index
    for key, ib in groups_b.items():
        ia = groups_a.get(key)
        if not ia:
            continue
        for x, y in matches([mnemonic(before[i][0]) for i in ib], [mnemonic(after[j][0]) for j in ia]):
            partner[ia[y]] = ib[x]
    # After's program order; a removed instruction goes right after the partner of the last matched
    # instruction before it in before's program order.
    order: list[tuple[tuple[int, int, int], tuple[int | None, int | None, str]]] = []
    last = -1
    by_b = {i: j for j, i in partner.items()}
    for i in range(len(before)):
        if i in by_b:
            last = by_b[i]
        else:
            order.append(((last, 1, i), (i, None, REMOVED)))
    for j in range(len(after)):
        p = partner.get(j)
        order.append(
            ((j, 0, 0), (None, j, ADDED) if p is None else (p, j, SAME if before[p][0] == after[j][0] else CHANGED))
        )
    al.pairs = [p for _, p in sorted(order, key=lambda x: x[0])]
    return al
