"""prune-empty removes only empty shells: nothing that ran, nothing rocprofv3 did not write, nothing that
changed since it was judged."""

from __future__ import annotations

import json
import os
import shutil

from conftest import FIXTURES, invoke

from attdec.sources import prune

EMPTY = FIXTURES / "empty"
SHELL = "ui_output_agent_7_dispatch_9"  # code null, wave_filenames null
HEADER = '"CodeObj","Vaddr","Instruction","Hitcount","Latency","Stall","Idle","Source"\n'


def _run(tmp_path):
    root = tmp_path / "run"
    shutil.copytree(EMPTY, root)
    return root, root / SHELL


def _prune(root, code=0) -> str:
    r = invoke(["prune-empty", str(root), "--yes"])
    assert r.exit_code == code and r.exception is None, r.output
    return r.output


def _hits(folder, hits: int) -> None:
    """code.json as the 2026 writer leaves it for a folder without wave files: rows, here with `hits`."""
    rows = [
        ["; kern", 100, 0, "k", 1, 256, 0, 0, 0, 0],
        ["s_nop 0", 0, 1, "", 1, 256, hits, 4 * hits, 0, 0],
        ["s_endpgm", 0, 2, "", 1, 260, 0, 0, 0, 0],
    ]
    (folder / "code.json").write_text(json.dumps({"code": rows, "header": "", "version": "3.0.0"}))


def test_a_folder_with_executed_instructions_in_code_json_is_kept(tmp_path):
    root, shell = _run(tmp_path)
    _hits(shell, 4570)
    out = _prune(root)
    assert shell.is_dir() and "4,570 executed instructions" in out
    _hits(shell, 0)  # the same rows, none executed: an empty shell
    _prune(root)
    assert not shell.exists()


def test_user_files_named_like_source_copies_keep_the_folder(tmp_path):
    root, shell = _run(tmp_path)
    (shell / "source_0_notes.py").write_text("mine\n")
    out = _prune(root)
    assert (shell / "source_0_notes.py").read_text() == "mine\n" and "source_0_notes.py" in out
    assert (shell / "filenames.json").is_file()  # nothing of the folder went


def test_snapshots_json_goes_only_when_empty(tmp_path):
    root, shell = _run(tmp_path)
    (shell / "snapshots.json").write_text(json.dumps({"/": {"w": {"k.py": "source_0_k.py"}}}))
    out = _prune(root)
    assert (shell / "snapshots.json").is_file() and "copies of source files" in out
    (shell / "snapshots.json").write_text("{}")
    _prune(root)
    assert not shell.exists()


def test_a_stats_csv_with_hits_keeps_the_folder_one_without_goes_with_it(tmp_path):
    root, shell = _run(tmp_path)
    stats = root / f"stats_{SHELL}.csv"
    stats.write_text(HEADER + '1,256,"s_nop 0",12,48,0,0,""\n')
    out = _prune(root)
    assert shell.is_dir() and stats.is_file() and "12 executed instructions" in out
    stats.write_text(HEADER + '1,256,"s_nop 0",0,0,0,0,""\n')
    _prune(root)
    assert not shell.exists() and not stats.exists()


def test_a_wave_file_written_after_the_verdict_keeps_the_folder(tmp_path, monkeypatch):
    """The race: verdicts first, deletion later. A wave file that appears in between is not deleted."""
    root, shell = _run(tmp_path)
    real = prune.judge

    def judge_then_a_wave_arrives(path):
        v = real(path)
        if path.name == SHELL:
            (path / "se0_sm0_sl0_wv0.json").write_text('{"instructions": []}')
        return v

    monkeypatch.setattr(prune, "judge", judge_then_a_wave_arrives)
    out = _prune(root)
    assert (shell / "se0_sm0_sl0_wv0.json").is_file() and (shell / "code.json").is_file()
    assert "changed since it was judged" in out
    assert not (root / "ui_output_agent_7_dispatch_10").exists()  # the other shell still goes


def test_remove_rechecks_sizes_and_times_and_never_walks_a_tree(tmp_path, monkeypatch):
    _, shell = _run(tmp_path)
    v = prune.judge(shell)
    assert v.empty and {s[0] for s in v.files} == {"code.json", "filenames.json", "occupancy.json"}
    monkeypatch.setattr(shutil, "rmtree", lambda *a, **k: (_ for _ in ()).throw(AssertionError("rmtree")))
    st = os.stat(shell / "occupancy.json")
    os.utime(shell / "occupancy.json", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # rewritten, same size
    assert "changed since it was judged" in prune.remove(v)
    assert (shell / "occupancy.json").is_file()
    v = prune.judge(shell)
    real_unlink = os.unlink

    def unlink_then_a_file_arrives(path, *a, **k):
        real_unlink(path, *a, **k)
        if not (shell / "late.txt").exists():
            (shell / "late.txt").write_text("late")

    monkeypatch.setattr(os, "unlink", unlink_then_a_file_arrives)
    assert "a file was added" in prune.remove(v)
    assert (shell / "late.txt").read_text() == "late"
    monkeypatch.setattr(os, "unlink", real_unlink)
    (shell / "late.txt").unlink()
    (shell / "filenames.json").write_text('{"wave_filenames": null}')
    v = prune.judge(shell)
    assert v.empty and prune.remove(v) is None and not shell.exists()
