"""Every report writer is a `Reporter` (report.base): each command's --format choices resolve, through the
reporter table its report module names, to objects with `write(result, out)`; and no command module picks a
writer for a format itself (commands.common.emit is the one place that does)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import click
import pytest

from attdec.cli import COMMANDS
from attdec.report.base import Reporter, Writer

COMMANDS_DIR = Path(__file__).resolve().parent.parent / "attdec" / "commands"


def _table(command: str):
    """The reporter table `command` uses, made with its default view options."""
    from attdec.report import advise, cfg, compare, counters, disasm, hotspots, info, kernel, records, waits, waves

    return {
        "hotspots": lambda: hotspots.reporters(top=20, dispatches=[]),
        "demo": lambda: hotspots.reporters(top=10, dispatches=[]),  # demo runs hotspots
        "diff": lambda: compare.diff_reporters(top=20),
        "noise": lambda: compare.noise_reporters(top=20),
        "waves": lambda: waves.reporters(dispatches=[], matched=None),
        "decode": records.reporters,
        "disasm": disasm.reporters,
        "info": info.reporters,
        "waits": lambda: waits.wait_reporters(top=20, producers=4),
        "latency": lambda: {
            **waits.latency_reporters(by="line", top=20, definition="issue-to-wait"),
            **waits.latency_reporters(by="line", top=20, definition="amd"),
        },
        "cfg": cfg.cfg_reporters,
        "loops": lambda: cfg.loop_reporters(top=16),
        "kernel": kernel.reporters,
        "counters": lambda: counters.reporters(by="total"),
        "advise": advise.reporters,
    }.get(command)


def _command(name: str) -> click.Command:
    module, attr = COMMANDS[name][0].split(":")
    return getattr(importlib.import_module(module), attr)


def _formats(cmd: click.Command) -> list[str]:
    for p in cmd.params:
        if p.name == "fmt":
            assert isinstance(p.type, click.Choice)
            return list(p.type.choices)
    return []


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_format_resolves_to_a_reporter(name):
    formats = _formats(_command(name))
    if not formats:
        assert _table(name) is None, f"{name} has no --format, yet a reporter table"
        return
    make = _table(name)
    assert make is not None, f"`attdec {name}` has --format {formats} but no reporter table"
    table = make()
    for fmt in formats:
        assert fmt in table, f"`attdec {name} --format {fmt}` has no reporter"
        assert isinstance(table[fmt], Reporter), f"`attdec {name} --format {fmt}`: {table[fmt]!r}"


def test_the_protocol_checks_the_method():
    assert isinstance(Writer(print), Reporter)
    assert not isinstance(print, Reporter)  # a bare writer function is not a Reporter


# A writer called by name (print_table, write_json, print_cfg_dot, ...), a json.dump, or a literal
# {"table": ...} / {"json": ...} mapping: a command choosing how a format is written.
WRITER_CALL = re.compile(
    r"\b(?:print|write)_(?:table|json|csv|md|text|npz|summary|folded|diff|noise|cfg_\w+|loops_\w+|waits_\w+"
    r"|latency_\w+|amd_latency_\w+)\s*[,)(]|\bjson\.dumps?\(|\{\s*\"(?:table|json|csv|md|text|dot)\"\s*:"
)


def format_dispatch_in(folder: Path) -> list[str]:
    """`file:line: text` of every place a command module maps a format to a writer itself."""
    found = []
    for path in sorted(folder.glob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if WRITER_CALL.search(line):
                found.append(f"{path.name}:{n}: {line.strip()}")
    return found


def test_no_command_maps_formats_itself():
    assert format_dispatch_in(COMMANDS_DIR) == []
