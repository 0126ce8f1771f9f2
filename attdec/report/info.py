"""Print `attdec info`: what each input is (kind, container, chunks, dispatches, repairs), as text or JSON."""

from __future__ import annotations

from rich.table import Table

from attdec.report.common import console, write_json


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
            t = Table(box=None, pad_edge=False, header_style="bold")
            for col in ("  chunk", "index", "byte", "size", "version", "what attdec read"):
                t.add_column(col, justify="right" if col in ("index", "byte", "size") else "left")
            for c in info["chunks"]:
                kind = c["kind"] + (" (zstd)" if c["compressed"] else "")
                t.add_row(f"  {kind}", str(c["index"]), f"{c['offset']:,}", f"{c['size']:,}", c["version"], c["note"])
            con.print(t)
        ds = info.get("dispatches", [])
        if ds:
            t = Table(box=None, pad_edge=False, header_style="bold")
            for col in ("  dispatch", "kernel", "arch", "SEs", "SQTT bytes", "code objects (load base)"):
                t.add_column(col, justify="right" if col == "SQTT bytes" else "left")
            for d in ds:
                ses = d.get("shader_engines")
                cos = ", ".join(
                    f"{c['name']} @ {'?' if c['base'] is None else hex(c['base'])}" for c in d.get("code_objects", [])
                )
                t.add_row(
                    f"  {d['name']}",
                    d["kernel"] or "-",
                    d["arch"],
                    _ranges(ses) if ses is not None else f"{d.get('waves', 0)} waves",
                    f"{d['sqtt_bytes']:,}" if "sqtt_bytes" in d else "",
                    cos,
                )
            con.print(t)
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
