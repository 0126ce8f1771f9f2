"""Print `attdec info`: what each input is (kind, container, chunks, dispatches, repairs), as text or JSON."""

from __future__ import annotations

from attdec.report.base import Reporters, Writer
from attdec.report.common import Col, console, draw_table, write_json


def print_json(infos: list[dict], out) -> None:
    write_json({"inputs": infos}, out)


def print_table(infos: list[dict], out) -> None:
    con = console(out)
    for info in infos:
        head = f"{info['path']}: {info['what']}"
        if "container" in info:
            head += f"\n  {info['container']}, {info['bytes']:,} bytes"
        con.print(head)
        if info.get("chunks"):
            cols = [Col("chunk", "text", "left", min=10), Col("index"), Col("byte"), Col("size")]
            cols += [Col("version", justify="left"), Col("what attdec read", "text", "left", min=16)]
            rows = []
            for c in info["chunks"]:
                kind = c["kind"] + (" (zstd)" if c["compressed"] else "")
                rows.append([kind, str(c["index"]), f"{c['offset']:,}", f"{c['size']:,}", c["version"], c["note"]])
            draw_table(con, cols, rows, indent=2)
        ds = info.get("dispatches", [])
        if ds:
            # a dispatch named after its kernel (kernel#N) says the kernel already: at 80 columns the two
            # long names would not fit side by side whole
            named = all(d["kernel"] and d["name"].startswith(d["kernel"]) for d in ds)
            cols = [Col("dispatch", "text", "left", min=12), Col("kernel", "text", "left", min=12)]
            cols += [Col("arch", justify="left"), Col("SEs", justify="left"), Col("SQTT bytes")]
            cols.append(Col("code objects (load base)", "text", "left", min=16))
            rows = []
            for d in ds:
                ses = d.get("shader_engines")
                cos = ", ".join(
                    f"{c['name']} @ {'?' if c['base'] is None else hex(c['base'])}" for c in d.get("code_objects", [])
                )
                rows.append(
                    [
                        d["name"],
                        d["kernel"] or "-",
                        d["arch"],
                        _ranges(ses) if ses is not None else f"{d.get('waves', 0)} waves",
                        f"{d['sqtt_bytes']:,}" if "sqtt_bytes" in d else "",
                        cos,
                    ]
                )
            if named:
                cols, rows = cols[:1] + cols[2:], [r[:1] + r[2:] for r in rows]
            draw_table(con, cols, rows, indent=2)
        for p in info.get("problems", []):
            con.print(f"  note: {p}")


def _ranges(ns: list[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5'."""
    out, start = [], None
    for i, n in enumerate(ns):
        if start is None:
            start = n
        if i + 1 == len(ns) or ns[i + 1] != n + 1:
            out.append(str(start) if start == n else f"{start}-{n}")
            start = None
    return ",".join(out)


def reporters() -> Reporters:
    """`attdec info`'s formats (the result: what `sources.pipeline.describe` found per input)."""
    return {"table": Writer(print_table), "json": Writer(print_json)}
