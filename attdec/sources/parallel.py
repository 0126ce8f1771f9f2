"""Decoding raw dispatches on several cores (`--jobs`).

`decode_dispatches` decodes each raw dispatch whole (code objects, blobs, listing) in a worker process,
`decode_blob_results` (the `decode` command: no listing) each dispatch or, for a big one, each blob; the
workers send results back as columns: every wave's records in one array, the waves' fields and
timelines as arrays, the listing as a few lists. Pickling the objects themselves (430,000 timeline tuples
and 15,000 listing rows for the 59 captures) costs more than a second core saves; the columns cost a few
arrays per dispatch, and this process rebuilds the `Wave`s (timelines as `Timeline` views of the columns)
and `CodeLine`s from them.

Results come back in input order, and an error is raised where serial decoding would have raised it.
`--jobs N` is this process and N - 1 workers: this one decodes too whenever no result is waiting (on 2
cores, 2 workers and an idle parent share them three ways). Workers are forked after the imports
decoding needs (they inherit the raw dispatches: only an index crosses to them), each with a pair of
pipes (`_Channel`); the columns come back as pickle protocol 5 with the arrays' bytes out of band
(`_send`). This process forks them (os.fork) and waits on the pipes itself: multiprocessing.Pool's
worker-handler thread spins while a result is in its pipe (0.15 s of CPU for the 59 captures). With
`jobs=1`, one dispatch (or one that is most of the work), too little SQTT for a pool to pay off, or no
fork (not Linux), everything is decoded here.
"""

from __future__ import annotations

import contextlib
import gc
import os
import struct
from collections.abc import Callable, Generator, Hashable, Iterator, Sequence
from itertools import chain
from typing import TYPE_CHECKING, Any

from attdec.errors import AttdecError, WorkerError
from attdec.model.options import DecodeOptions
from attdec.sources.kind import UNIT, Tracker, raw_weight
from attdec.sources.limits import check_whole_decode

if TYPE_CHECKING:
    import numpy as np

    from attdec.model import Dispatch, Wave
    from attdec.sources.raw import RawBlob, RawDispatch

# Below this much work (weight units: sources.kind.UNIT bytes of SQTT, plus one per blob) a pool costs more
# than it saves: starting a forked worker and moving the results back is ~20-40 ms, decoding 2 MB ~0.1-0.2 s.
MIN_PARALLEL_WEIGHT = (2 << 20) // UNIT
# One dispatch this big a share of the work (a single big kernel and a few small ones) finishes last
# whatever the others do: workers would save less than they cost.
MAX_SHARE = 0.8
# Decoded but not yet taken by the caller, at most this much work (plus PREFETCH items per worker and one
# here): 16 MB of SQTT.
IN_FLIGHT = (16 << 20) // UNIT


def default_jobs() -> int:
    """The --jobs default: the cores this process may run on. This process decodes too, so on a busy
    machine the one worker it adds costs little (measured: never slower than serial at load 2)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def workers_for(weights: Sequence[int], jobs: int | None) -> int:
    """How many processes are worth decoding items of these weights: this one and N - 1 forked workers
    (1: only this one)."""
    jobs = default_jobs() if jobs is None else jobs
    total = sum(weights)
    if jobs <= 1 or len(weights) < 2 or total < MIN_PARALLEL_WEIGHT or max(weights) > MAX_SHARE * total:
        return 1
    if not hasattr(os, "fork"):
        return 1
    return min(jobs, len(weights))


# ---- the pool --------------------------------------------------------------------------------------------

_JOB: tuple[Callable[[Any], Any], Sequence[Any]] | None = None  # (pack(work(.)), items), inherited by workers
# Tasks a worker holds (running and waiting): a second one means it never waits for this process between two.
PREFETCH = 2
# The next tasks not yet handed out that a free worker chooses among (the rest wait their turn).
WINDOW = 64
# What loading a dispatch's code objects, or a target's instruction tables (~8 ms), again in a second worker
# costs, in weight units (5-15 ms: about as long as decoding 128 KiB of SQTT).
RELOAD = (128 << 10) // UNIT


class _Channel:
    """One end of the two pipes between this process and a worker: it reads `r`, writes `w`, and is waited
    on (select) by `r`. Pipes, not a socket pair: importing `socket` costs ~3 ms before the workers start."""

    __slots__ = ("r", "w")

    def __init__(self, r: int, w: int):
        self.r, self.w = r, w

    @staticmethod
    def pair() -> tuple[_Channel, _Channel]:
        a_reads, b_writes = os.pipe()
        b_reads, a_writes = os.pipe()
        return _Channel(a_reads, a_writes), _Channel(b_reads, b_writes)

    def fileno(self) -> int:
        return self.r

    def sendall(self, data) -> None:
        view = memoryview(data).cast("B")
        try:
            while view:
                view = view[os.write(self.w, view) :]
        except BrokenPipeError:  # not stdout's: the command line would take it for `| head` and end quietly
            raise EOFError("the other process closed its end") from None

    def recv_into(self, view) -> int:
        return os.readv(self.r, [view])

    def close(self) -> None:
        os.close(self.r)
        os.close(self.w)


def _fork(chan: _Channel, others: list[_Channel]) -> int:
    """A worker serving `chan` (`_serve`), forked: its pid. It ends with os._exit, so that nothing of this
    process (exit handlers, buffered output) runs or is written twice there; multiprocessing is not used:
    importing it costs ~6 ms before the workers start."""
    pid = os.fork()
    if pid:
        return pid
    import signal

    code = 1
    # Ctrl-C reaches the whole process group: this process stops the workers; SIGTERM (from it, or the user)
    # ends a worker at once, not through the handler the command line set for its own cleanup.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        for other in others:  # this process's parent's ends: held here, they would hide its exit (no EOF)
            other.close()
        _serve(chan)
        code = 0
    except (EOFError, OSError, KeyboardInterrupt):  # this process ended or was interrupted: nothing to add
        pass
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


def _serve(chan) -> None:
    """A worker's loop: item indices come down `chan`; (i, True, work(item)), (i, False, the AttdecError)
    or (i, None, the traceback of a bug) go back, until None comes. Each result is pickled here, so that
    one that cannot be is reported as such (`_unsendable`) rather than lost; a thread writes the bytes, so
    that the worker decodes its next item while this process is busy decoding one of its own and not
    reading. Should that thread fail, the worker ends at once: this process then reads an end of file
    instead of waiting for ever on a result that will never come."""
    import queue
    import threading
    import traceback

    assert _JOB is not None
    work, items = _JOB
    results: queue.SimpleQueue = queue.SimpleQueue()

    def sender() -> None:
        try:
            while (parts := results.get()) is not None:
                _write(chan, parts)
        except BaseException:  # this process's parent is gone, or a write failed: nothing more can go back
            os._exit(1)

    thread = threading.Thread(target=sender, daemon=True)
    thread.start()
    while (i := _receive(chan)) is not None:
        out: tuple[int, bool | None, Any]
        try:
            out = (i, True, work(items[i]))
        except AttdecError as e:
            out = (i, False, e)
        except Exception:
            out = (i, None, traceback.format_exc())
        try:
            parts = _encode(out)
        except Exception as e:
            parts = _encode((i, False, _unsendable(e)))
        results.put(parts)
    results.put(None)
    thread.join()


def _unsendable(e: Exception) -> WorkerError:
    """A worker's result that does not pickle (an object of a class made at run time, a lock): a bug in
    what the workers return, said in one line, that decoding in one process avoids."""
    first = (str(e).splitlines() or [""])[0]
    why = f"a worker's result cannot be sent back ({type(e).__name__}: {first}); --jobs 1 decodes here alone"
    return WorkerError(why, "--jobs")


def _send(chan, obj) -> None:
    _write(chan, _encode(obj))


def _encode(obj) -> list:
    """`obj` pickled with its arrays' bytes out of band: they go down the pipe as they are, not copied
    into the pickle (and, on the other side, out of it). The parts to write, a header of sizes first."""
    import pickle

    buffers: list[pickle.PickleBuffer] = []
    head = pickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    raws = [b.raw() for b in buffers]
    sizes = [len(head), *(r.nbytes for r in raws)]
    return [struct.pack(f"<{len(sizes) + 1}Q", len(sizes), *sizes), head, *raws]


def _write(chan, parts: list) -> None:
    for part in parts:
        chan.sendall(part)


def _receive(chan):
    import pickle

    (count,) = struct.unpack("<Q", _read(chan, 8))
    sizes = struct.unpack(f"<{count}Q", _read(chan, 8 * count))
    head, *buffers = (_read(chan, n) for n in sizes)
    return pickle.loads(head, buffers=buffers)


def _read(chan, n: int):
    import numpy as np

    out = np.empty(n, np.uint8)  # not zeroed first: the bytes are written once, by the pipe
    view, got = out.data, 0
    while got < n:
        k = chan.recv_into(view[got:])
        if not k:
            raise EOFError("the other process closed its end")
        got += k
    return out


def map_in_order(
    work: Callable[[Any], Any],
    items: Sequence[Any],
    weights: Sequence[int],
    jobs: int | None,
    done: Callable[[int], None] | None = None,
    keys: Sequence[tuple[Hashable, ...] | None] | None = None,
    pack: Callable[[Any], Any] | None = None,
    unpack: Callable[[Any], Any] | None = None,
) -> Iterator[tuple[bool, Any]]:
    """(True, work(item)) or (False, the AttdecError it raised) for each item, in order, computed on up to
    `jobs` processes: this one and `jobs - 1` forked workers; `done(i)` is called (in this thread) as item
    i finishes, in whatever order. A worker sends `pack(work(item))` back, which must pickle cheaply
    (arrays, a few objects), and this process makes it `unpack(...)`: what it decodes itself is used as
    it is.

    A free process takes the heaviest of the next WINDOW items (so that no heavy one starts last and the
    light ones fill the gaps at the end), counting RELOAD less for each of an item's `keys` (what it needs
    loaded: its code objects, its instruction tables) another process met first: it would load it again.
    This process keeps each worker holding PREFETCH items and decodes one itself whenever it has nothing to
    take in. Near the end each worker holds one item at a time. While the items decoded but not yet taken
    by the caller reach IN_FLIGHT weight, only the oldest are handed out (a worker still gets a second one
    while this process decodes: it would wait for this process otherwise), so memory does not grow with
    the input."""
    n = workers_for(weights, jobs)
    if n == 1:
        for i, item in enumerate(items):
            yield _here(work, item)
            if done is not None:
                done(i)
        return
    import select

    _preload()
    global _JOB
    _JOB = (work if pack is None else lambda item: pack(work(item)), items)
    gc.freeze()  # the workers' collector leaves this process's objects alone (no copy-on-write of them all)
    conns: list[_Channel] = []
    pids: list[int] = []
    finished = False
    here = n - 1  # this process's number in the hand-out; the workers are 0 .. n-2
    try:
        for _ in range(n - 1):
            mine, theirs = _Channel.pair()
            pids.append(_fork(theirs, [*conns, mine]))
            theirs.close()
            conns.append(mine)
        order = _Handout(weights, keys, n)
        held = [0] * (n - 1)  # tasks each worker holds
        ready: dict[int, tuple[bool, Any]] = {}

        def take_in(timeout: float | None) -> None:
            for conn in select.select(conns, [], [], timeout)[0]:
                try:
                    k, ok, value = _receive(conn)
                except EOFError:
                    raise _worker_ended() from None
                if ok is None:  # not an input error: a bug, with the worker's traceback
                    raise RuntimeError(f"a worker process failed:\n{value}")
                held[conns.index(conn)] -= 1
                ready[k] = (ok, value if unpack is None or not ok else unpack(value))
                if done is not None:
                    done(k)

        for i in range(len(items)):
            while i not in ready:
                for w in range(n - 1):
                    while order.pending and (held[w] == 0 or (held[w] < PREFETCH and len(order.pending) > n)):
                        try:
                            _send(conns[w], order.pick(w))
                        except EOFError:
                            raise _worker_ended() from None
                        held[w] += 1
                take_in(0)
                if i in ready:
                    break
                if order.pending:  # over IN_FLIGHT, the oldest: like a worker, this process is kept busy
                    k = order.pick(here)
                    ready[k] = _here(work, items[k])
                    if done is not None:
                        done(k)
                else:
                    take_in(None)
            order.flying -= weights[i]
            finished = i == len(items) - 1  # every item decoded: the workers are idle (the caller may stop here)
            yield ready.pop(i)
    finally:
        for conn, pid in zip(conns, pids):
            if finished:  # idle: it ends when told to; a worker still busy (an error, or the caller stopped) is stopped
                with contextlib.suppress(EOFError):  # (or it has ended already)
                    _send(conn, None)
            else:
                import signal

                os.kill(pid, signal.SIGTERM)
            conn.close()
        for pid in pids:
            os.waitpid(pid, 0)
        _JOB = None
        gc.unfreeze()


def _worker_ended() -> WorkerError:
    """Killed (out of memory, a signal): one error line, not a traceback."""
    why = "a worker process ended unexpectedly (killed: out of memory, a signal?); --jobs 1 decodes here alone"
    return WorkerError(why, "--jobs")


def _here(work: Callable[[Any], Any], item: Any) -> tuple[bool, Any]:
    try:
        return True, work(item)
    except AttdecError as e:
        return False, e


class _Handout:
    """Which item a free worker gets next (`map_in_order`); `flying`: the weight handed out and not yet
    taken by the caller."""

    def __init__(self, weights: Sequence[int], keys: Sequence[tuple[Hashable, ...] | None] | None, workers: int):
        self.weights, self.keys = weights, keys
        self.pending = list(range(len(weights)))[::-1]  # not handed out, the oldest last
        self.owner: dict[Hashable, int] = {}  # key -> the worker that met it first
        self.flying = 0

    def pick(self, w: int) -> int:
        pending = self.pending
        at = len(pending) - 1  # the oldest
        if self.flying < IN_FLIGHT:
            best = None
            for j in range(len(pending) - 1, max(-1, len(pending) - 1 - WINDOW), -1):
                i = pending[j]
                keys = self.keys[i] if self.keys is not None else None
                rank = self.weights[i] - RELOAD * sum(self.owner.get(k, w) != w for k in keys or ())
                if best is None or rank > best:
                    best, at = rank, j
        i = pending.pop(at)
        for k in (self.keys[i] if self.keys is not None else None) or ():
            self.owner.setdefault(k, w)
        self.flying += self.weights[i]
        return i


def _preload() -> None:
    """Import what decoding needs before forking, once, rather than in every worker (~0.2 s of CPU each),
    the code-object reader's msgpack too."""
    import numpy  # noqa: F401

    from attdec.decoders import gfx9, rdna  # noqa: F401
    from attdec.isa import codeobj, decoder, render  # noqa: F401
    from attdec.sources import listing, raw  # noqa: F401

    with contextlib.suppress(ImportError):  # what attdec.isa.codeobj imports when it first reads an ELF file
        import msgpack  # noqa: F401


def unwrap(outcome: tuple[bool, Any]) -> Any:
    """The value of a `map_in_order` outcome, or its error raised here."""
    ok, value = outcome
    if not ok:
        raise value
    return value


# ---- what the workers do, and the columns their results travel as ----------------------------------------


def decode_dispatches(
    raws: Sequence[RawDispatch], tracker: Tracker | None = None, options: DecodeOptions = DecodeOptions()
) -> Generator[tuple[bool, Any], None, None]:
    """Each raw dispatch decoded into a `Dispatch` (attdec.sources.raw.decode_dispatch) as `options` say, on
    up to `options.jobs` processes, as `map_in_order` outcomes in order; `tracker` advances as dispatches
    finish. A dispatch is one task here, never split
    by blob: its listing needs all its waves, and making it in this process (a quarter of a big dispatch's
    time: gemm_gfx1200_run0) would cost what the split saves."""
    from attdec.sources.raw import decode_dispatch

    if not options.fold:
        check_whole_decode(raws, together=False)
    weights = [raw_weight(r) for r in raws]
    if workers_for(weights, options.jobs) == 1:  # here, blob by blob: progress as fine as it can be
        tracker = tracker or Tracker()

        def advance(blob: RawBlob, done: int | None = None) -> None:  # also within a big blob, window by window
            n = len(blob.data)
            tracker.blob_bytes(blob.label, n if done is None else done, n)

        for raw in raws:
            try:
                yield True, decode_dispatch(raw, advance, options, on_bytes=advance)
            except AttdecError as e:
                yield False, e
        return

    def done(i: int) -> None:
        if tracker is not None:
            tracker.advance(weights[i], raws[i].name)

    def work(raw: RawDispatch) -> Dispatch:
        return decode_dispatch(raw, options=options)

    keys = [_needs(r) for r in raws]
    yield from map_in_order(work, raws, weights, options.jobs, done, keys, pack_dispatch, unpack_dispatch)


def decode_blob_results(
    raws: Sequence[RawDispatch], options: DecodeOptions = DecodeOptions(), reduce: Callable[[Any], Any] | None = None
) -> Generator[Any, None, None]:
    """Per raw dispatch, an iterable of (blob, BlobResult, seconds) as attdec.sources.raw.decode_blobs
    yields them (decoded as `options` say, on up to `options.jobs` processes), raising a dispatch's error
    when it is iterated; with `reduce`, (blob, reduce(BlobResult), seconds), reduced where the blob was
    decoded (a worker sends back only what the caller reads). Decoded here, the blobs are decoded as they
    are read (one blob's records in memory at a time); in workers, a dispatch's results arrive whole, a big
    one's blobs decoded side by side."""
    from attdec.sources.raw import decode_blobs

    if not options.fold:
        check_whole_decode(raws, together=False)
    tasks, weights = _tasks(raws)
    n = workers_for(weights, options.jobs)
    if n == 1:
        for raw in raws:
            blobs = decode_blobs(raw, options=options)
            yield blobs if reduce is None else ((b, reduce(res), dt) for b, res, dt in blobs)
        return

    tasks, weights = _tasks(raws, sum(weights) / n)
    code = _CodeCache(raws)

    def work(task: tuple[int, int | None]) -> list:
        i, blob = task
        raw = raws[i] if blob is None else _one_blob(raws[i], blob)
        return [(res if reduce is None else reduce(res), dt) for _, res, dt in decode_blobs(raw, code[i], options)]

    def pack(parts: list) -> list:
        return [(pack_blob_result(res), dt) for res, dt in parts]

    def unpack(parts: list) -> list:
        return [(unpack_blob_result(res), dt) for res, dt in parts]

    def replay(raw: RawDispatch, outcomes: list) -> Iterator:
        parts = [part for o in outcomes for part in unwrap(o)]
        for blob, (res, dt) in zip(raw.blobs, parts):
            yield blob, res, dt

    keys = [_needs(raws[i]) if blob is None else None for i, blob in tasks]
    columns = (pack, unpack) if reduce is None else (None, None)  # a reduction pickles as it is
    outcomes = map_in_order(work, tasks, weights, options.jobs, None, keys, *columns)
    for i, _, results in _by_dispatch(tasks, outcomes):
        yield replay(raws[i], results)


# `decode`: a dispatch with this much SQTT in several blobs, and more work than a process's share, is decoded
# blob by blob (one task each), so that one big dispatch does not keep one worker busy while the others
# wait; each process that decodes one of its blobs loads its code map (a dispatch of a share or less goes
# whole to one process: the heaviest are handed out first).
SPLIT_BYTES = 1 << 20


def _tasks(raws: Sequence[RawDispatch], share: float = 0) -> tuple[list[tuple[int, int | None]], list[int]]:
    """(dispatch index, None for the whole dispatch or the index of one of its blobs) and each one's weight;
    split: the dispatches of SPLIT_BYTES or more that weigh more than `share`."""
    from attdec.sources.kind import blob_weight

    tasks: list[tuple[int, int | None]] = []
    weights = []
    for i, raw in enumerate(raws):
        sizes = [len(b.data) for b in raw.blobs]
        if len(sizes) > 1 and sum(sizes) >= SPLIT_BYTES and raw.code_objects and raw_weight(raw) > share:
            tasks += [(i, b) for b in range(len(sizes))]
            weights += [blob_weight(n) for n in sizes]
        else:
            tasks.append((i, None))
            weights.append(raw_weight(raw))
    return tasks, weights


def _by_dispatch(tasks: Sequence[tuple[int, int | None]], outcomes: Iterator) -> Iterator[tuple[int, bool, list]]:
    """(dispatch index, whether it was one task, its tasks' outcomes), as soon as its last task is in."""
    t = 0
    while t < len(tasks):
        i, k = tasks[t][0], 1
        while t + k < len(tasks) and tasks[t + k][0] == i:
            k += 1
        yield i, tasks[t][1] is None, [next(outcomes) for _ in range(k)]
        t += k


def _needs(raw: RawDispatch) -> tuple[Hashable, ...] | None:
    """What a process loads to decode a dispatch: its code objects (their bytes; parsing and disassembling
    one costs 5-15 ms) and its target's instruction tables (~8 ms): a process that loaded them once decodes
    the dispatches that share them."""
    if not raw.code_objects:
        return None
    return (*(hash(co.data) for co in raw.code_objects), ("isa", raw.arch))


def _one_blob(raw: RawDispatch, blob: int) -> RawDispatch:
    import copy

    part = copy.copy(raw)
    part.blobs = [raw.blobs[blob]]
    return part


class _CodeCache(dict):
    """In a worker: each dispatch's code map, loaded when one of its blobs is first decoded there."""

    def __init__(self, raws: Sequence[RawDispatch]):
        super().__init__()
        self.raws = raws

    def __missing__(self, i: int):
        from attdec.sources.raw import load_code

        self[i] = value = load_code(self.raws[i])
        return value


def pack_waves(waves: Sequence[Wave]) -> dict:
    """Waves as columns: their records concatenated, their timelines as two arrays, their other fields one
    array (or list, for non-integers) each."""
    import numpy as np

    from attdec.model import Wave, empty_insts

    cols: dict[str, Any] = {}
    for f in Wave.fields():
        if f not in ("insts", "timeline"):
            vals = [getattr(w, f) for w in waves]
            cols[f] = np.array(vals, np.int64) if all(type(v) is int for v in vals) else vals
    cols["n_insts"] = np.array([len(w.insts) for w in waves], np.int64)
    cols["insts"] = np.concatenate([w.insts for w in waves]) if waves else empty_insts()
    cols["n_timeline"] = np.array([len(w.timeline) for w in waves], np.int64)
    parts = [_timeline_array(w.timeline) for w in waves]
    cols["timeline"] = np.concatenate(parts) if parts else np.zeros((0, 2), np.int64)
    return cols


def _timeline_array(timeline) -> np.ndarray:
    """A wave's timeline as an (n, 2) array: a `Timeline`'s own columns, or a list of pairs read in one pass."""
    import numpy as np

    from attdec.model import Timeline

    if isinstance(timeline, Timeline):
        return np.asarray(timeline)
    return np.fromiter(chain.from_iterable(timeline), np.int64, 2 * len(timeline)).reshape(-1, 2)


def unpack_waves(cols: dict) -> list[Wave]:
    import numpy as np

    from attdec.model import Timeline, Wave

    n_insts, n_timeline = cols.pop("n_insts"), cols.pop("n_timeline")
    insts = np.split(cols.pop("insts"), np.cumsum(n_insts)[:-1]) if len(n_insts) else []
    tl = cols.pop("timeline")
    states, durations = np.ascontiguousarray(tl[:, 0]), np.ascontiguousarray(tl[:, 1])
    bounds = np.concatenate(([0], np.cumsum(n_timeline))).tolist()
    fields = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in cols.items()}
    names = list(fields)
    out = []
    for i, values in enumerate(zip(*fields.values())):
        lo, hi = bounds[i], bounds[i + 1]  # the timeline as views of the columns: no tuple per state change
        w = Wave(**dict(zip(names, values)), insts=insts[i], timeline=Timeline(states[lo:hi], durations[lo:hi]))
        out.append(w)
    return out


_LINE_INTS = ("line", "codeobj", "vaddr", "hit", "latency", "stall", "idle")


def pack_dispatch(d: Dispatch) -> dict:
    """A decoded Dispatch as columns (its waves and listing); its other fields as they are (a few objects)."""
    import numpy as np

    state = dict(vars(d))
    state["waves"] = pack_waves(d.waves)
    state["code"] = (
        np.array([[getattr(c, f) for f in _LINE_INTS] for c in d.code], np.uint64).reshape(-1, len(_LINE_INTS)),
        [c.text for c in d.code],
        [c.source for c in d.code],
    )
    return state


def unpack_dispatch(state: dict) -> Dispatch:
    from attdec.sources.raw import no_gc

    with no_gc():
        return _unpack_dispatch(state)


def _unpack_dispatch(state: dict) -> Dispatch:
    from attdec.model import CodeLine, Dispatch

    ints, texts, sources = state["code"]
    rows = ints.astype("i8").tolist()  # line ids, vaddrs and totals all fit in 63 bits
    d = Dispatch.__new__(Dispatch)
    d.__dict__.update(state)
    d.__dict__["waves"] = unpack_waves(state["waves"])
    d.__dict__["code"] = [CodeLine(r[0], t, s, *r[1:]) for r, t, s in zip(rows, texts, sources)]
    return d


def pack_blob_result(res) -> dict:
    """A BlobResult with its waves as columns (its other records are arrays already)."""
    state = dict(vars(res))
    state["waves"] = pack_waves(res.waves)
    return state


def unpack_blob_result(state: dict):
    from attdec.sources.raw import no_gc

    with no_gc():
        return _unpack_blob_result(state)


def _unpack_blob_result(state: dict):
    from attdec.decoders import BlobResult

    state["waves"] = unpack_waves(state["waves"])
    return BlobResult(**state)
