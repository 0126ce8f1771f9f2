"""What users see (issue 19): escaped control characters, narrow terminals, pipes, many dispatches, source
paths, option checks, errors on every path, and the raw capture that ships in the package."""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import subprocess
import sys

import pytest
from conftest import (
    FIXTURES,
    ROOT,
    SHARED,
    SYNTHETIC_CAPTURES,
    SYNTHETIC_MORE,
    cli,
    one_line_error,
    real_data,
    run_subprocess,
    shared_path,
)

from attdec.cli import COMMANDS
from attdec.commands.demo import demo_path
from attdec.report.common import printable

TINY = FIXTURES / "tiny" / "ui_output_agent_7_dispatch_3"
DEMO = demo_path()
RAW = demo_path(raw=True)
FIGURE_CUT = re.compile(r"\d…")


def edit_code(folder, edit):
    doc = json.loads((folder / "code.json").read_text())
    edit(doc["code"])
    (folder / "code.json").write_text(json.dumps(doc))


# ---- 3. control characters from inputs never reach the terminal ------------------------------------


def test_printable_escapes_controls_only():
    assert printable("s_waitcnt vmcnt(0)  /a/b.py:3 ✓ é") == "s_waitcnt vmcnt(0)  /a/b.py:3 ✓ é"
    assert printable("a\x1b[2Jb\x07\r\u202e") == "a\\x1b[2Jb\\x07\\x0d\\u202e"


def test_escape_sequences_in_code_json_are_escaped(tmp_path):
    d = tmp_path / "evil" / "ui_output_agent_7_dispatch_3"
    shutil.copytree(TINY, d)

    def edit(rows):
        rows[0][0] = "; evil\x1b[2J\x1b]0;title\x07kernel"
        rows[1][0] = "s_load_dwordx2 \x1b[31mred\x1b[0m"
        rows[1][3] = "/src/\x1b[1Ak.py:5"
        rows[2][3] = "/src/\rk.py:5\u202e"

    edit_code(d, edit)
    outs = [
        cli("hotspots", d).stdout,
        cli("hotspots", d, "--by", "instruction").stdout,
        cli("hotspots", d, "--by", "file").stdout,
        cli("waves", d).stdout,
        cli("prune-empty", d.parent).stdout,
    ]
    others = [["waits", d], ["latency", d, "--by", "instruction"], ["cfg", d], ["loops", d], ["kernel", d]]
    others += [["counters", d], ["noise", d, d], ["diff", d, d, "--by", "instruction"], ["hotspots", d, "--merge"]]
    others += [["info", d]]
    for args in others:
        p = cli(*args)
        # the renamed label is no kernel occupancy.json names: damage (exit 3), warned of with its text escaped
        assert p.returncode in (0, 3), (args, p.stderr)
        assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f\u202e]", p.stderr), p.stderr
        outs.append(p.stdout)
    for out in outs:
        assert not re.search(r"[\x00-\x09\x0b-\x1f\x7f\u202e]", out), out
    assert sum("\\x1b" in out for out in outs) == len(outs)  # each shows some of the text, escaped
    assert "\\x1b[2J" in outs[0] and "\\x1b[31mred" in outs[1] and "\\x1b[1A" in outs[2]
    assert "\\x1b]0;title" in outs[3] and "\\x1b[2J" in outs[4]  # (rich drops BEL itself)
    err = cli("hotspots", tmp_path / "no\x1b[2Jsuch")
    one_line_error(err, "\\x1b[2J")
    assert "\x1b" not in err.stderr


# ---- 5. --top must not be negative ------------------------------------------------------------------


TOP_COMMANDS = [["hotspots", TINY], ["waves", TINY], ["demo"], ["waits", TINY], ["latency", TINY], ["loops", TINY]]


@pytest.mark.parametrize("cmd", [*TOP_COMMANDS, ["diff", TINY, TINY], ["noise", TINY, TINY]])
def test_negative_top_is_refused(cmd):
    p = cli(*cmd, "--top", "-1")
    assert p.returncode == 2 and "-1 is not in the range x>=0" in p.stderr and p.stdout == ""


# ---- 6. a pickle without a tinygrad profile ---------------------------------------------------------


def test_pickle_without_profile_is_one_error_line_everywhere(tmp_path):
    pkl = tmp_path / "profile.pkl"
    pkl.write_bytes(pickle.dumps([1, 2, 3], protocol=4))
    takes_one = [["hotspots"], ["waves"], ["decode"], ["export-ui", "-o", tmp_path / "out"], ["disasm"]]
    takes_one += [["waits"], ["latency"], ["cfg"], ["loops"], ["kernel"], ["counters"], ["info"]]
    for args in takes_one:
        one_line_error(cli(*args, pkl), str(pkl))
    for args in (["diff", pkl, pkl], ["noise", pkl, pkl], ["hotspots", TINY, pkl]):
        one_line_error(cli(*args), str(pkl))
    one_line_error(cli("prune-empty", pkl), "is a file")
    assert not (tmp_path / "out").exists()
    assert "no tinygrad profile" in cli("hotspots", pkl).stderr


# ---- 7. an unknown architecture lists the known ones on every path -------------------------------------


def test_unknown_arch_lists_known_ones_on_every_path(tmp_path):
    co = f"{RAW / 'kern.co'}@0x7fff00000000"
    blob = RAW / "kern_1_se0.att"
    runs = [
        ("decode", "--arch", "banana", "--code", co, blob),
        ("decode", "--arch", "banana", RAW),
        ("hotspots", "--arch", "banana", "--code", co, blob),
        ("hotspots", "--arch", "banana", RAW),
        ("hotspots", "--arch", "banana", TINY),
        ("waves", "--arch", "banana", RAW),
        ("export-ui", "-o", tmp_path / "o", "--arch", "banana", "--code", co, blob),
        ("disasm", "--arch", "banana", RAW / "kern.co"),
        ("waits", "--arch", "banana", RAW),
        ("kernel", "--arch", "banana", RAW),
        ("cfg", "--arch", "banana", "--code", co, blob),
        ("diff", "--arch", "banana", RAW, RAW),
    ]
    for args in runs:
        one_line_error(cli(*args), "unknown architecture 'banana'", "known: ", "gfx942", "gfx1201")


# ---- 8. narrow terminals: every figure whole -------------------------------------------------------


def figures(p_json: dict, by_wave: bool) -> set[str]:
    from attdec.report.common import human

    if by_wave:
        return {str(v) for w in p_json["waves"] for v in (w["begin"], w["end"], w["instructions"])}
    return {human(r[k]) for r in p_json["rows"] for k in ("stall", "latency", "hits", "idle")}


def check_narrow(monkeypatch, width, args, by_wave=False):
    monkeypatch.setenv("COLUMNS", str(width))
    p = cli(*args)
    assert p.returncode == 0, p.stderr
    table = p.stdout
    monkeypatch.delenv("COLUMNS")
    want = figures(json.loads(cli(*args, "--format", "json").stdout), by_wave)
    tokens = set(table.split())
    assert want <= tokens, (want - tokens, table)
    assert not FIGURE_CUT.search(table), table
    assert max(len(ln) for ln in table.splitlines()) <= width, table
    return table


@pytest.mark.parametrize("width", [60, 80])
def test_narrow_terminal_keeps_figures_whole(monkeypatch, width):
    for by in ("line", "instruction", "file"):
        t = check_narrow(monkeypatch, width, ["hotspots", DEMO, "--by", by, "--top", "0"])
        header = next(ln for ln in t.splitlines() if ln.lstrip().startswith("#"))
        assert header.split()[-1] == {"line": "line", "instruction": "source", "file": "file"}[by]
    check_narrow(monkeypatch, width, ["hotspots", RAW, "--by", "instruction", "--top", "0"])
    check_narrow(monkeypatch, width, ["waves", DEMO], by_wave=True)
    check_narrow(monkeypatch, width, ["waves", RAW], by_wave=True)
    monkeypatch.setenv("COLUMNS", str(width))
    for args in (["latency", DEMO, "--by", "instruction"], ["counters", DEMO], ["noise", DEMO, RAW], ["waits", DEMO]):
        out = cli(*args).stdout
        assert out and not FIGURE_CUT.search(out), out
        # waits has 9 figure columns: at 60 columns its rows are wider than the terminal, never cut
        assert (args[0] == "waits" and width == 60) or max(len(x) for x in out.splitlines()) <= width, out


@pytest.mark.parametrize("width", [60, 80])
def test_narrow_terminal_real_samples(monkeypatch, width):
    ex = shared_path("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples")
    t = check_narrow(monkeypatch, width, ["hotspots", ex / "topk_gating_softmax", "--by", "instruction", "--top", "8"])
    assert "source" in t and "py:103" in t  # the source column stays, its path cut from the left
    check_narrow(monkeypatch, width, ["waves", ex / "topk_gating_softmax", "--se", "0"], by_wave=True)
    check_narrow(monkeypatch, width, ["waves", ex / "vec_add", "--sort", "stall", "--top", "20"], by_wave=True)
    monkeypatch.setenv("COLUMNS", str(width))
    prune = cli("prune-empty", ex).stdout
    assert prune.count("\n*") >= 10 and max(len(x) for x in prune.splitlines()) <= width


# ---- 9. piped output -------------------------------------------------------------------------------


def test_piped_output_keeps_marks_and_headers_and_honours_columns(tmp_path, monkeypatch):
    deep = tmp_path / ("a_rather_long_folder_name_" * 6) / "runs"
    for k in ("x", "y"):
        shutil.copytree(FIXTURES / "empty", deep / k)
    monkeypatch.setenv("COLUMNS", "40")
    p = cli("prune-empty", deep)
    assert p.returncode == 0
    assert sum(ln.startswith("*") for ln in p.stdout.splitlines()) == 1  # the best of tiny_kernel, marked
    assert max(len(x) for x in p.stdout.splitlines()) <= 40
    monkeypatch.delenv("COLUMNS")
    whole = cli("prune-empty", deep).stdout  # piped without COLUMNS: nothing folded or cut
    assert f"under {deep}/:" in whole and "…" not in whole
    h = cli("hotspots", deep / "x").stdout
    assert "(paths under /src/)" in h and all(len(ln) < 200 for ln in h.splitlines())


def _pipe_exit(args, stdin_closed_first: bool) -> subprocess.CompletedProcess:
    """`python -m attdec ARGS | head -1` in a real shell, the exit status of attdec (pipefail)."""
    cmd = " ".join(f"'{a}'" for a in map(str, args))
    line = f"set -o pipefail; {sys.executable} -m attdec {cmd} | head -1 > /dev/null"
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env, timeout=300)


def test_closed_pipe_exits_zero_quietly_for_every_format(tmp_path):
    many = tmp_path / "many"
    for i in range(120):  # enough output to fill the pipe head closes
        shutil.copytree(TINY, many / f"run{i}" / TINY.name)
    runs = [["hotspots", many, "--format", f] for f in ("table", "json", "csv")]
    runs += [["waves", many, "--format", f] for f in ("table", "json", "csv")]
    runs += [["prune-empty", many], ["decode", RAW], ["decode", RAW, "--format", "json"]]
    runs += [["disasm", RAW / "kern.co"], ["hotspots", RAW, "--by", "instruction", "--top", "0"]]
    runs += [["waits", many, "--top", "0"], ["cfg", many], ["kernel", many], ["latency", many, "--format", "json"]]
    for args in runs:
        p = _pipe_exit(args, False)
        assert p.returncode == 0 and p.stderr == "", (args, p.returncode, p.stderr)


def test_closed_pipe_before_writing():
    """The reader is gone before the first write: still exit 0, nothing on stderr."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for args in (["hotspots", DEMO], ["waves", DEMO, "--format", "csv"], ["demo"]):
        p = subprocess.Popen(
            [sys.executable, "-m", "attdec", *map(str, args)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        p.stdout.close()
        err = p.stderr.read()
        assert p.wait(timeout=300) == 0 and err == b"", (args, err)


# ---- 10. waves over many dispatches ----------------------------------------------------------------


def test_waves_on_many_dispatches_one_header_and_a_dispatch_column(tmp_path):
    for parent in ("a", "b"):  # same folder name in two parents
        shutil.copytree(TINY, tmp_path / parent / TINY.name)
    shutil.copytree(FIXTURES / "gfx12", tmp_path / "c")
    p = cli("waves", tmp_path)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("7 waves of 3 dispatches of tiny_kernel, rdna4_kernel")
    assert lines[1].split()[:3] == ["dispatch", "kernel", "se"]
    body = "\n".join(lines[2:])
    assert f"a/{TINY.name}" in body and f"b/{TINY.name}" in body and "ui_output_agent_8_dispatch_1" in body
    assert len(lines) == 2 + 7
    one = cli("waves", TINY).stdout.splitlines()
    assert "dispatch" not in one[1]


# ---- 11. source paths normalised before the common prefix -------------------------------------------


def test_source_paths_are_normalised(tmp_path):
    d = tmp_path / TINY.name
    shutil.copytree(TINY, d)

    def edit(rows):
        for r in rows[4:]:
            r[3] = r[3].replace("/src/", "/w/./src/")
        rows[1][3] = "/w/./src//k.py:5"
        rows[2][3] = "/w/src/k.py:5"  # the same line, spelled differently: one row
        rows[3][3] = "/w/lib/../src/k.py:6"

    edit_code(d, edit)
    out = cli("hotspots", d).stdout
    assert "(paths under /w/src/)" in out and "/./" not in out and ".." not in out
    rows = json.loads(cli("hotspots", d, "--format", "json").stdout)["rows"]
    keys = [r["key"] for r in rows]
    assert keys.count("/w/src/k.py:5") == 1 and "/w/src/k.py:6" in keys
    assert next(r for r in rows if r["key"] == "/w/src/k.py:5")["hits"] == 6


# ---- 12. --cu on hotspots, defaults in every --help ----------------------------------------------------


def test_hotspots_cu_filter():
    all_ = json.loads(cli("hotspots", TINY, "--format", "json").stdout)
    cu1 = json.loads(cli("hotspots", TINY, "--cu", "1", "--format", "json").stdout)
    cu5 = json.loads(cli("hotspots", TINY, "--cu", "5", "--format", "json").stdout)
    assert cu1["totals"] == all_["totals"] and cu1["waves"] == 3
    assert cu5["waves"] == 0 and cu5["totals"]["hits"] == 0


def test_every_help_shows_the_defaults():
    import click

    from attdec.cli import attdec

    ctx = click.Context(attdec, info_name="attdec")
    for name in COMMANDS:
        text = " ".join(cli(name, "--help").stdout.split())
        for opt in attdec.get_command(ctx, name).params:
            if not isinstance(opt, click.Option) or opt.is_flag or opt.multiple or opt.required or opt.default is None:
                continue
            assert f"[default: {opt.default}" in text, (name, opt.name)
    assert "[default: 0" in cli("waves", "--help").stdout


# ---- 14. the raw capture that ships -------------------------------------------------------------------


def test_shipped_raw_capture_decodes_cleanly():
    p = cli("decode", RAW, "--format", "json")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    waves = [w for d in json.loads(p.stdout)["dispatches"] for w in d["waves"]]
    insts = [r for w in waves for r in w["instructions"]]
    assert len(waves) == 12 and len(insts) == 184 and all(r[0] for r in insts)  # every record has its PC
    h = json.loads(cli("hotspots", RAW, "--format", "json").stdout)
    assert h["kernel"] == "kern" and h["arch"] == "gfx942" and h["by"] == "line"
    assert h["totals"]["hits"] == 184 and h["rows"][0]["dominant_type"] == "VMEM-wait"
    demo = cli("demo").stdout
    assert f"attdec decode {RAW}" in demo and f"attdec hotspots {RAW}" in demo


def test_demo_raw_tool_reproduces_the_shipped_files(tmp_path):
    p = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "makers" / "make_demo_raw.py"), str(tmp_path / "raw")],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert p.returncode == 0, p.stderr
    for f in RAW.iterdir():
        assert (tmp_path / "raw" / f.name).read_bytes() == f.read_bytes(), f.name


def test_readme_names_the_test_data_and_the_shipped_examples():
    readme = (ROOT / "README.md").read_text()
    for part in ("captures", "tinygrad_profiles", "tools/isa_oracle", "ui_output_samples", "repository root"):
        assert part in readme, part
    assert "attdec/data/demo_raw" in readme
    out = run_subprocess("hotspots", "attdec/data/demo_raw", cwd=ROOT).stdout
    first = out.splitlines()[2]  # the README shows real output: its totals line is this one
    assert first.strip() in readme


# ---- rich tables at 80 columns: words whole, rows under their columns ----------------------------------


def test_waits_at_80_columns_keeps_mnemonics_whole(monkeypatch):
    """The wait's instruction text wraps between words: `s_waitcnt` and its counter are never folded into
    pieces (they were `s_waitc` / `nt`)."""
    monkeypatch.setenv("COLUMNS", "80")
    out = cli("waits", DEMO).stdout
    words = out.split()
    assert "s_waitcnt" in words and "vmcnt(0)" in words and "lgkmcnt(0)" in words
    assert not re.search(r"\bs_wait\w{0,2}\s*$", out, re.M)


def test_cfg_at_80_columns_keeps_rows_under_their_columns(monkeypatch):
    """Every block row's figures sit under their headers (rows used to wrap under the wrong columns)."""
    ex = shared_path("ui_output_samples", "jhinpan__flydsl-kernel-profiling-lib", "examples")
    monkeypatch.setenv("COLUMNS", "80")
    out = cli("cfg", ex / "flash_attn_func").stdout.splitlines()
    head = next(i for i, ln in enumerate(out) if ln.startswith("block"))
    hits_end = out[head].index("hits") + len("hits")
    rows = [ln for ln in out[head + 1 :] if re.match(r"\s*B\d+ ", ln)]
    assert len(rows) > 10 and all(len(ln) <= 80 for ln in out)
    for ln in rows:  # the hits figure ends where its right-aligned header ends
        assert ln[hits_end - 1] != " " and ln[hits_end] == " ", ln


def _rgp_sets() -> list:
    """(how to get .rgp files): the synthetic captures written in each layout tests/support/make_rgp.py
    knows, then every file of ../shared/rgp where this machine has them."""

    def synthetic(tmp):
        from tests.support import make_rgp

        caps = (SYNTHETIC_CAPTURES["gfx1100"], SYNTHETIC_MORE)
        return [
            *(make_rgp.rgptool(c, tmp / f"{c.name}-rgptool.rgp") for c in caps),
            make_rgp.radv(caps[0], tmp / "radv.rgp"),
            make_rgp.rdf(caps[1], tmp / "rdf.rgp"),
        ]

    params = [pytest.param(synthetic, id="synthetic")]
    if real_data("rgp"):
        params.append(pytest.param(lambda _: sorted((SHARED / "rgp").glob("*/*.rgp")), id="real"))
    return params


@pytest.mark.parametrize("make", _rgp_sets())
def test_info_of_an_rgp_at_80_columns_keeps_dispatch_names_whole(monkeypatch, tmp_path, make):
    rgps = make(tmp_path)
    monkeypatch.setenv("COLUMNS", "80")
    for rgp in rgps:
        data = json.loads(cli("info", rgp, "--format", "json").stdout)
        kernels = [d["name"] for i in data["inputs"] for d in i.get("dispatches", [])]
        out = cli("info", rgp).stdout
        assert kernels and all(k in out.split() for k in kernels), (rgp, kernels)


def test_tables_are_plain_when_piped_and_with_no_color(monkeypatch):
    monkeypatch.setenv("NO_COLOR", "1")
    for args in (["hotspots", DEMO], ["waits", DEMO], ["cfg", RAW], ["info", DEMO]):
        assert "\x1b" not in cli(*args).stdout


def _drawn(monkeypatch, plain: bool, cols, rows, width: int, **kw) -> str:
    """draw_table's output on an uncoloured console, through its one-text lines or (plain=False) rich's Table."""
    import io

    from attdec.report import common

    out = io.StringIO()
    with monkeypatch.context() as m:
        if not plain:
            m.setattr(common, "_plain_lines", lambda *a: None)
        common.draw_table(common.Console(out, width), cols, rows, **kw)
    return out.getvalue()


@pytest.mark.parametrize("width", [200, 60, 34])
@pytest.mark.parametrize("indent", [0, 2])
def test_plain_table_lines_are_what_rich_draws(monkeypatch, width, indent):
    from attdec.report import common
    from attdec.report.common import Col, Heading

    cols = [
        Col("#"),
        Col("stall", short="st"),
        Col("share", kind="bar", justify="left"),
        Col("instruction", kind="text", justify="left"),
        Col("source line", kind="path", justify="left"),
    ]
    rows = [
        ["1", "22.8K", 0.496, "s_waitcnt lgkmcnt(0)", "/sgl/python/flydsl/expr/rocdl/universal.py:144"],
        ["2", "0", 0.0, "v_mfma_f32_32x32x8_f16 v[0:15], v[16:17]", "kernels/layernorm_kernel.py:50"],
        Heading("loop 2"),
        ["13", "5.1M", 1.0, "global_load_dwordx4 v[4:7]  \x1b[2J", "k/é中文.py:3"],
        ["4", "1", 0.01, "", ""],
    ]
    used = []
    real = common._plain_lines
    monkeypatch.setattr(common, "_plain_lines", lambda *a: used.append(real(*a)) or used[-1])
    for header in (True, False):
        plain = _drawn(monkeypatch, True, cols, rows, width, indent=indent, header=header)
        assert plain == _drawn(monkeypatch, False, cols, rows, width, indent=indent, header=header)
        assert "\x1b" not in plain and "22.8K" in plain
    assert width < 200 or all(used)  # wide enough: every chunk drawn as plain lines


def test_plain_table_lines_give_way_to_rich_for_a_cell_that_folds(monkeypatch):
    from attdec.report import common

    cols = [common.Col("n"), common.Col("text", kind="text", justify="left", min=4)]
    rows = [["1", "a rather long sentence that has to fold at this width"]]
    assert common._plain_lines(cols, ["n", "text"], [1, 20], 2, rows, [0, 1]) is None
    lines = common._plain_lines(cols, ["n", "text"], [1, 60], 2, rows, [0, 1])
    assert [line.rstrip() for line in lines] == ["n  text", "1  " + rows[0][1]]
    out = _drawn(monkeypatch, True, cols, rows, 24)
    assert out == _drawn(monkeypatch, False, cols, rows, 24)
    assert len(out.splitlines()) > 2  # folded over several lines
