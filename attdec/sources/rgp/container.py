"""The two .rgp containers, read into one `RgpFile`: ASIC facts, SQTT streams, code objects, load events.

* SQTT file (RGP 1.x, Mesa RADV, tinygrad's rgptool): a 56-byte header, then chunks, each with a 16-byte
  header giving its type, index and size. Unknown chunk types are skipped by their size. A chunk header
  that is not where the previous chunk's size says is searched for nearby and then forward (tinygrad's
  rgptool declares CODE_OBJECT_DATABASE records 4-aligned but writes them unpadded, so the chunks after
  it start 1-3 bytes early); every such repair is a problem line with byte offsets.
* RDF (RGP 2.x driver captures): a 32-byte header pointing at an index of 64-byte entries, each naming a
  chunk ("SqttData", "CodeObject", "COLoadEvent", ...) with its own header and data, the data optionally
  zstd-compressed (decompressed only when read, through the optional `zstandard` package).

Nothing here raises on damaged input except when not even the container header can be read: everything
else becomes a problem (one line each) and what could be read is kept. Payloads are sliced, and RDF data
decompressed, only when asked for (`attdec info` lists chunks without touching them).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any, ClassVar

from attdec.errors import AttdecError, FormatError
from attdec.model.record import Record, field
from attdec.model.target import RGP_GFXIP_LEVELS
from attdec.sources.limits import MEMBER
from attdec.sources.rgp import layouts as L
from attdec.sources.rgp.magic import sniff


class Chunk(Record):
    """One chunk as `attdec info` lists it."""

    kind: str  # "SQTT_DATA" (SQTT file) or the RDF identifier ("SqttData")
    index: int  # SQTT file: the header's chunk index; RDF: n-th chunk of that identifier
    offset: int  # byte where the chunk starts
    size: int  # bytes it takes in the file
    version: str
    compressed: bool = False
    note: str = ""  # what attdec read from it, in a few words


class Asic(Record):
    device_id: int | None
    gfxip: tuple[int, ...]  # (major, minor[, stepping]); () when the file does not say
    gpu_name: str = ""
    shader_engines: int | None = None


class Stream(Record):
    """One SQTT_DATA / SqttData chunk: one shader engine's trace (possibly several sessions back to back)."""

    se: int
    sqtt_version: int | None  # the SQTT file's enum (SQTT_DESC / SqttData header), None if not given
    where: str  # "SQTT_DATA 3 (byte 1528)"
    data: Callable[[], bytes]  # read (RDF: decompressed) on first call, then kept


class CodeObject(Record):
    where: str
    data: Callable[[], bytes]
    hash: tuple[int, int] | None = None  # the container's hash of it (RDF CodeObject header), if any


class LoadEvent(Record):
    base: int
    hash: tuple[int, int]
    unload: bool = False


class RgpFile(Record):
    path: str
    container: str  # "SQTT file 1.5", "RDF 3"
    chunks: list[Chunk] = field(default_factory=list)
    asic: Asic | None = None
    streams: list[Stream] = field(default_factory=list)
    code_objects: list[CodeObject] = field(default_factory=list)
    loads: list[LoadEvent] = field(default_factory=list)
    pso: dict[int, tuple[int, int]] = field(default_factory=dict)  # API PSO hash -> pipeline hash
    problems: list[str] = field(default_factory=list)


def read_rgp(data: bytes, path: str) -> RgpFile:
    """Parse an .rgp held in `data`. FormatError only when neither container header is readable."""
    kind = sniff(data[:8])
    if kind == "sqtt":
        return _SqttFile(data, path).read()
    if kind == "rdf":
        return _read_rdf(data, path)
    raise FormatError(
        f"not an RGP file (first bytes {data[:8].hex(' ')}; expected the SQTT file magic 0x{L.SQTT_MAGIC:08x} "
        "or 'AMD_RDF ')",
        path,
    )


def _cstr(b: bytes) -> str:
    return b.split(b"\0", 1)[0].decode("latin-1")


# ------------------------------------------------------------------------------------------ SQTT file
class _SqttFile:
    def __init__(self, data: bytes, path: str):
        self.data, self.n = data, len(data)
        self.view = memoryview(data)  # bounded reads without copying the file
        self.f = RgpFile(path, "SQTT file")
        self.desc: dict[int, tuple[int, int]] = {}  # chunk index -> (SE, sqtt version)
        self.data_chunks: list[tuple[int, int, Callable[[], bytes]]] = []  # (chunk index, byte, payload)
        self.padding_bug: tuple[int, int, int] | None = None  # (database byte, declared next chunk, real one)
        self.short_records = 0  # code-object records written shorter than declared

    def problem(self, msg: str) -> None:
        self.f.problems.append(msg)

    def read(self) -> RgpFile:
        try:
            h = L.FILE_HEADER.read(self.data)
        except EOFError:
            raise FormatError(f"truncated: {self.n} bytes, the SQTT file header alone is 56", self.f.path) from None
        self.f.container = f"SQTT file {h.version_major}.{h.version_minor}"
        if h.version_major != 1:
            raise FormatError(f"SQTT file version {h.version_major}.{h.version_minor}: attdec reads 1.x", self.f.path)
        if h.version_minor not in (5, 6):
            self.problem(f"SQTT file version 1.{h.version_minor} (attdec knows 1.5 and 1.6): read as 1.6")
        start = h.chunk_offset
        if not L.FILE_HEADER.size <= start <= self.n:
            self.problem(f"header: chunk offset {start} is outside the file; chunks read from byte 56")
            start = L.FILE_HEADER.size
        placed = self._walk(start)
        for i, (pos, hdr) in enumerate(placed):
            limit = placed[i + 1][0] if i + 1 < len(placed) else self.n
            self._body(pos, hdr, min(pos + hdr.size, limit))
        self._pair_streams()
        if self.padding_bug or self.short_records:
            db, declared, real = self.padding_bug or (None, None, None)
            self.problem(
                "tinygrad rgptool's padding bug: CODE_OBJECT_DATABASE records declared 4-aligned but written "
                "unpadded; re-synchronised on the next header"
                + (f" ({self.short_records} record(s) inside)" if self.short_records else "")
                + (f"; the chunk after it starts at byte {real}, not {declared}" if db is not None else "")
            )
        return self.f

    # -- the chunk list
    def _header(self, pos: int):
        try:
            return L.CHUNK_HEADER.read(self.data, pos)
        except EOFError:
            return None

    def _plausible(self, pos: int, strict: bool, fits: bool = True) -> bool:
        """A chunk header could start at `pos` (and, with `fits`, its fixed part lies in the file). `strict`
        (re-synchronising): a known type that fits the file and, for chunks that store their own offset,
        stores this one."""
        h = self._header(pos)
        if h is None or h.chunk_id >> 16 or h.padding or h.size < 16 or h.major > 0xFF or h.minor > 0xFF:
            return False
        typ = h.chunk_id & 0xFF
        if h.size < L.MIN_CHUNK_SIZE.get(typ, 16):
            return False
        if not strict:
            return not fits or pos + min(h.size, L.MIN_CHUNK_SIZE.get(typ, 16)) <= self.n
        if typ not in L.CHUNK_NAMES or pos + h.size > self.n:
            return False
        if typ in L.SELF_OFFSET:
            return int.from_bytes(self.data[pos + 16 : pos + 20], "little") == pos
        if typ == L.SQTT_DATA:
            return int.from_bytes(self.data[pos + 16 : pos + 20], "little") == pos + 24
        return True

    def _walk(self, pos: int) -> list[tuple[int, Any]]:
        placed: list[tuple[int, Any]] = []
        prev, prev_pos = None, 0
        while pos < self.n:
            if not self._plausible(pos, strict=False) and self._plausible(pos, strict=False, fits=False):
                h = self._header(pos)
                name = L.CHUNK_NAMES.get(h.chunk_id & 0xFF, f"type {h.chunk_id & 0xFF}")
                self.problem(f"truncated: {name} at byte {pos} declares {h.size} bytes, {self.n - pos} are left")
                break
            if not self._plausible(pos, strict=False):
                floor = prev_pos + L.MIN_CHUNK_SIZE.get(prev.chunk_id & 0xFF, 16) if prev else L.FILE_HEADER.size
                q = self._resync(pos, floor)
                what = self._describe_bad(pos)
                if q is None:
                    self.problem(f"byte {pos}: {what}; the last {self.n - pos} bytes were skipped")
                    break
                if prev is not None and prev.chunk_id & 0xFF == L.CODE_OBJECT_DATABASE and pos - 16 < q < pos:
                    self.padding_bug = (prev_pos, pos, q)  # reported once, with the records it also shifted
                else:
                    self.problem(f"byte {pos}: {what}; re-synchronised on the chunk header at byte {q}")
                pos = q
            h = self._header(pos)
            if pos + h.size > self.n:
                name = L.CHUNK_NAMES.get(h.chunk_id & 0xFF, f"type {h.chunk_id & 0xFF}")
                self.problem(f"truncated: {name} at byte {pos} declares {h.size} bytes, {self.n - pos} are left")
            placed.append((pos, h))
            prev, prev_pos = h, pos
            pos += h.size
        return placed

    def _describe_bad(self, pos: int) -> str:
        h = self._header(pos)
        if h is None:
            return f"{self.n - pos} trailing bytes, too few for a chunk header"
        return f"no chunk header here (type {h.chunk_id & 0xFF}, size {h.size})"

    RESYNC_WINDOW = 16

    def _resync(self, pos: int, floor: int) -> int | None:
        """The chunk header nearest to `pos` (within a few bytes), else the first one after `floor` (the end of
        the previous chunk's fixed part) that stores its own offset."""
        for d in range(1, self.RESYNC_WINDOW + 1):
            for q in (pos - d, pos + d):
                if q >= floor and self._plausible(q, strict=True):
                    return q
        m = self.n - 20 - floor  # candidates: every byte from `floor` that leaves room for a body offset
        if m <= 0:
            return None
        import numpy as np

        buf = np.frombuffer(self.data, np.uint8)
        word = np.ndarray((m,), "<u4", buf, floor + 16, (1,))  # the 32-bit word 16 bytes after each candidate
        at = np.arange(floor, floor + m, dtype=np.uint32)
        typ = buf[floor : floor + m]
        own = (np.isin(typ, list(L.SELF_OFFSET)) & (word == at)) | ((typ == L.SQTT_DATA) & (word == at + 24))
        for q in (floor + np.flatnonzero(own)).tolist():
            if q != pos and self._plausible(q, strict=True):
                return q
        return None

    # -- chunk bodies
    def _body(self, pos: int, h, end: int) -> None:
        typ, index = h.chunk_id & 0xFF, (h.chunk_id >> 8) & 0xFF
        name = L.CHUNK_NAMES.get(typ, f"unknown type {typ}")
        chunk = Chunk(name, index, pos, end - pos, f"{h.major}.{h.minor}")
        self.f.chunks.append(chunk)
        body = pos + 16
        self.declared_end = pos + h.size  # past `end` when the file (already noted) or a repair cut the chunk
        try:
            reader = self.READERS.get(typ)
            if reader is not None:
                chunk.note = reader(self, body, end, index, pos) or ""
        except EOFError as e:
            self.problem(f"{name} at byte {pos}: truncated ({e})")
            chunk.note = "truncated"

    def _asic(self, body, end, index, pos):
        a = L.ASIC_INFO_BODY.read(self.view[:end], body)
        gfxip = RGP_GFXIP_LEVELS.get(a.gfxip_level, ())
        self.f.asic = Asic(a.device_id or None, gfxip, _cstr(a.gpu_name), a.shader_engines)
        level = ".".join(map(str, gfxip)) if gfxip else f"unknown level {a.gfxip_level}"
        return f"device 0x{a.device_id:04x}, gfxip {level}, '{_cstr(a.gpu_name)}', {a.shader_engines} SEs"

    def _desc(self, body, end, index, pos):
        d = L.SQTT_DESC_BODY.read(self.view[:end], body)
        self.desc[index] = (d.shader_engine_index, d.sqtt_version)
        return f"SE {d.shader_engine_index}, SQTT version 0x{d.sqtt_version:x}, CU {d.compute_unit_index}"

    def _sqtt_data(self, body, end, index, pos):
        d = L.SQTT_DATA_BODY.read(self.view[:end], body)
        start = body + L.SQTT_DATA_BODY.size
        if d.offset != start:
            self.problem(f"SQTT_DATA {index} at byte {pos}: offset field {d.offset}, data read from byte {start}")
        stop = min(start + max(d.size, 0), end)
        if start + d.size > self.declared_end:
            self.problem(f"SQTT_DATA {index} at byte {pos}: {d.size} bytes of data in a chunk of {end - pos}")
        data = self.data
        self.data_chunks.append((index, pos, lambda a=start, b=stop: data[a:b]))
        return f"{stop - start:,} bytes"

    def _code_objects(self, body, end, index, pos):
        h = L.CODE_OBJECT_DATABASE_BODY.read(self.view[:end], body)
        r, found, resynced = body + L.CODE_OBJECT_DATABASE_BODY.size, 0, []
        data = self.data
        while found < h.record_count and r + 4 <= end:
            size = L.CODE_OBJECT_RECORD.read(data, r).size
            a, b = r + 4, min(r + 4 + size, end)
            nxt = None
            if found + 1 < h.record_count:  # where the next record really starts (rgptool: up to 3 bytes early)
                nxt = next((b - k for k in range(4) if self._record_at(b - k, end)), None)
                if nxt is None:
                    self.problem(
                        f"CODE_OBJECT_DATABASE at byte {pos}: no record after the one at byte {r}; "
                        f"{h.record_count - found - 1} record(s) not read"
                    )
                elif nxt < b:
                    resynced.append(b - nxt)
                b = nxt or b
            self.f.code_objects.append(CodeObject(f"code object {found} (byte {a})", lambda a=a, b=b: data[a:b]))
            found += 1
            if nxt is None:
                break
            r = nxt
        self.short_records += len(resynced)
        return f"{found} of {h.record_count} code object(s)"

    def _record_at(self, q: int, end: int) -> bool:
        """A code-object record (size, then an ELF or tinygrad minimal container) could start at `q`."""
        from attdec.isa import load_code_object

        if q + 8 > end:
            return False
        size = int.from_bytes(self.data[q : q + 4], "little")
        blob = self.data[q + 4 : q + 4 + size]
        if not 64 <= size <= end - q - 4:
            return False
        if blob[:4] == b"\x7fELF":
            return True
        try:
            load_code_object(blob, "probe")
            return True
        except AttdecError:
            return False

    def _record_table(self, body, end, record, what):
        h = L.RECORD_TABLE_BODY.read(self.view[:end], body)
        first = body + L.RECORD_TABLE_BODY.size
        step = h.record_size
        if step < record.size:
            raise EOFError(f"{what} records of {step} bytes, attdec needs {record.size}")
        n = min(h.record_count, (end - first) // step)
        if n < h.record_count:
            self.problem(f"{what}: {h.record_count} records declared, {n} present")
        return [record.read(self.data, first + i * step) for i in range(n)]

    def _loads(self, body, end, index, pos):
        recs = self._record_table(body, end, L.LOADER_EVENT, f"CODE_OBJECT_LOADER_EVENTS at byte {pos}")
        for e in recs:
            self.f.loads.append(LoadEvent(e.base_address, e.code_object_hash, e.loader_event_type == 1))
        return ", ".join(f"0x{e.base_address:x}" for e in recs[:4]) + (" ..." if len(recs) > 4 else "")

    def _pso(self, body, end, index, pos):
        recs = self._record_table(body, end, L.PSO_RECORD, f"PSO_CORRELATION at byte {pos}")
        for p in recs:
            self.f.pso[p.api_pso_hash] = p.pipeline_hash
        return f"{len(recs)} pipeline(s)"

    def _api(self, body, end, index, pos):
        a = L.API_INFO_BODY.read(self.view[:end], body)
        return f"API {a.api_type} {a.major_version}.{a.minor_version}, instruction trace {a.instruction_trace_mode}"

    def _cpu(self, body, end, index, pos):
        c = L.CPU_INFO_BODY.read(self.view[:end], body)
        return f"'{_cstr(c.processor_brand).strip()}', {c.num_logical_cores} threads"

    def _clock(self, body, end, index, pos):
        c = L.CLOCK_CALIBRATION_BODY.read(self.view[:end], body)
        return f"CPU {c.cpu_timestamp} = GPU {c.gpu_timestamp}"

    def _queue(self, body, end, index, pos):
        q = L.QUEUE_EVENT_TIMINGS_BODY.read(self.view[:end], body)
        return f"{q.queue_info_table_record_count} queue(s), {q.queue_event_table_record_count} event(s)"

    READERS: ClassVar[dict] = {
        L.ASIC_INFO: _asic,
        L.SQTT_DESC: _desc,
        L.SQTT_DATA: _sqtt_data,
        L.API_INFO: _api,
        L.CPU_INFO: _cpu,
        L.CLOCK_CALIBRATION: _clock,
        L.QUEUE_EVENT_TIMINGS: _queue,
        L.CODE_OBJECT_DATABASE: _code_objects,
        L.CODE_OBJECT_LOADER_EVENTS: _loads,
        L.PSO_CORRELATION: _pso,
    }

    def _pair_streams(self) -> None:
        """SQTT_DATA chunk i belongs to SQTT_DESC chunk i (Mesa and rgptool number both by trace)."""
        for index, pos, load in self.data_chunks:
            se, version = self.desc.get(index, (index, None))
            if index not in self.desc:
                self.problem(f"SQTT_DATA {index} at byte {pos}: no SQTT_DESC {index}; taken as SE {index}")
            self.f.streams.append(Stream(se, version, f"SQTT_DATA {index} (byte {pos})", load))


# ------------------------------------------------------------------------------------------ RDF
def _zstd(raw: bytes, size: int, where: str) -> bytes:
    try:
        import zstandard
    except ImportError:
        raise AttdecError(
            "zstd-compressed chunk: reading it needs the zstandard package (pip install 'attdec[rgp]')", where
        ) from None
    MEMBER.check(size, "decompressed size", where)  # a small chunk may claim (or hold) terabytes
    try:
        framed = zstandard.frame_content_size(raw)  # -1 when the frame does not say
        if size < 0 or (framed >= 0 and framed != size):
            raise FormatError(f"the zstd frame holds {framed} bytes, the index says {size}", where)
        out = zstandard.ZstdDecompressor().decompress(raw, max_output_size=size)
    except zstandard.ZstdError as e:
        raise FormatError(f"zstd data does not decompress ({e})", where) from None
    except MemoryError:
        raise FormatError(
            f"the index says it decompresses to {size} bytes: more than this machine holds", where
        ) from None
    if len(out) != size:
        raise FormatError(f"decompressed to {len(out)} bytes, the index says {size}", where)
    return out


def _read_rdf(data: bytes, path: str) -> RgpFile:
    n = len(data)
    try:
        h = L.RDF_HEADER.read(data)
    except EOFError:
        raise FormatError(f"truncated: {n} bytes, the RDF header alone is 32", path) from None
    f = RgpFile(path, f"RDF {h.version}")
    if h.version != L.RDF_VERSION:
        f.problems.append(f"RDF version {h.version} (attdec knows {L.RDF_VERSION}): read as {L.RDF_VERSION}")
    count = h.index_size // L.RDF_INDEX_ENTRY.size if h.index_size > 0 else 0
    if h.index_offset < L.RDF_HEADER.size or h.index_offset + count * L.RDF_INDEX_ENTRY.size > n:
        raise FormatError(
            f"the chunk index ({h.index_size} bytes at byte {h.index_offset}) lies outside the file "
            f"({n} bytes): truncated?",
            path,
        )
    seen: dict[str, int] = {}
    for i in range(count):
        e = L.RDF_INDEX_ENTRY.read(data, h.index_offset + i * L.RDF_INDEX_ENTRY.size)
        kind = _cstr(e.chunk_id)
        k = seen[kind] = seen.get(kind, -1) + 1
        where = f"{path}: {kind} {k}"
        start = e.header_offset if e.header_size else e.data_offset
        chunk = Chunk(kind, k, start, e.header_size + e.data_size, str(e.version), e.compression != 0)
        f.chunks.append(chunk)
        bad = [
            what
            for what, off, size in (("header", e.header_offset, e.header_size), ("data", e.data_offset, e.data_size))
            if size < 0 or (size and (off < 0 or off + size > n))
        ]
        if bad:
            f.problems.append(f"{kind} {k}: its {' and '.join(bad)} lie(s) outside the file; chunk skipped")
            chunk.note = "outside the file"
            continue
        if e.compression not in (0, 1):
            f.problems.append(f"{kind} {k}: unknown compression {e.compression}; chunk skipped")
            continue
        header = data[e.header_offset : e.header_offset + e.header_size]
        load = _rdf_loader(data, e, where)
        try:
            chunk.note = _rdf_chunk(f, kind, k, header, load, e) or ""
        except EOFError as err:
            f.problems.append(f"{kind} {k}: truncated ({err})")
            chunk.note = "truncated"
        except AttdecError as err:  # a compressed small chunk without zstandard, or bad zstd data
            f.problems.append(f"{kind} {k}: {err.message}")
            chunk.note = "unreadable"
    return f


def _rdf_loader(data: bytes, e, where: str) -> Callable[[], bytes]:
    raw = lambda: data[e.data_offset : e.data_offset + e.data_size]
    if e.compression == 1:
        return cache(lambda: _zstd(raw(), e.uncompressed_size, where))
    return raw


def _rdf_chunk(f: RgpFile, kind: str, k: int, header: bytes, load, e) -> str | None:
    if kind == "SqttData":
        h = L.RDF_SQTT_DATA_HEADER.read(header)
        size = e.uncompressed_size if e.compression else e.data_size
        f.streams.append(Stream(h.shader_engine, h.sqtt_version, f"SqttData {k}", load))
        return f"SE {h.shader_engine}, SQTT version 0x{h.sqtt_version:x}, {size:,} bytes"
    if kind == "CodeObject":
        h = L.RDF_CODE_OBJECT_HEADER.read(header)
        f.code_objects.append(CodeObject(f"CodeObject {k}", load, h.code_object_hash))
        return f"hash {h.code_object_hash[0]:016x}{h.code_object_hash[1]:016x}"
    if kind == "COLoadEvent":
        recs = _rdf_records(header, load(), L.RDF_LOAD_EVENT)
        f.loads += [LoadEvent(r.base_address, r.code_object_hash, r.loader_event_type == 1) for r in recs]
        return ", ".join(f"0x{r.base_address:x}" for r in recs[:4]) + (" ..." if len(recs) > 4 else "")
    if kind == "PsoCorrelation":
        recs = _rdf_records(header, load(), L.RDF_PSO_RECORD)
        f.pso.update((r.api_pso_hash, r.pipeline_hash) for r in recs)
        return f"{len(recs)} pipeline(s)"
    if kind == "AsicInfo":
        a = L.RDF_ASIC_INFO.read(load())
        f.asic = Asic(a.device_id or a.pci_id or None, tuple(a.gfxip_level), _cstr(a.gpu_name), a.shader_engines)
        return f"device 0x{a.device_id:04x}, gfxip {'.'.join(map(str, a.gfxip_level))}, '{_cstr(a.gpu_name)}'"
    return None


def _rdf_records(header: bytes, data: bytes, record) -> list:
    count = L.RDF_COUNT_HEADER.read(header).count if len(header) >= 4 else len(data) // record.size
    if count and len(data) >= count * record.size:
        step = len(data) // count  # newer chunk versions may append fields to each record
        return [record.read(data, i * step) for i in range(count)]
    return [record.read(data, i * record.size) for i in range(len(data) // record.size)]
