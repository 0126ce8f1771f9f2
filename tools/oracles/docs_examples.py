#!/usr/bin/env python3
"""Run the examples of docs/commands.md and the README and compare (or, with --write, replace) what they print.

An example is a line `$ COMMAND` inside a ``` block, followed by its output up to the next `$ ` line or the
end of the block. Commands run from the repository root in bash, with S, C and SHARED naming the shared
data (docs/commands.md, "Running the examples"), at COLUMNS=100. A command marked `# not run` (it needs a
tool attdec does not ship) is skipped; one marked `# figures vary` (timings) is only checked to succeed.
Outputs are compared by their figures, not their whitespace.

    python3 tools/oracles/docs_examples.py           # check: one line per example that differs, exit 1 if any
    python3 tools/oracles/docs_examples.py --write   # rewrite the pages with what the commands print now
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOCS = (ROOT / "README.md", ROOT / "docs" / "commands.md")
WIDTH = "100"
FIGURE = re.compile(r"\d[\d,.]*[KMG%]?")


@dataclass
class Example:
    command: str
    expected: list[str]
    start: int  # index of the command's line in the document
    end: int  # index after its last output line

    @property
    def runs(self) -> bool:
        return "# not run" not in self.command

    @property
    def checked(self) -> bool:
        return self.runs and "# figures vary" not in self.command


def shared() -> Path:
    return Path(os.environ.get("ATTDEC_SHARED", ROOT.parent / "shared"))


def examples(lines: list[str]) -> list[Example]:
    """Every `$ ` line of the document's ``` blocks with the output lines after it."""
    out: list[Example] = []
    inside = False
    current: Example | None = None
    for i, line in enumerate(lines):
        if line.startswith("```"):
            if current is not None:
                current.end = i
                out.append(current)
                current = None
            inside = not inside
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            if current is not None:
                current.end = i
                out.append(current)
            current = Example(line[2:], [], i, i + 1)
        elif current is not None:
            current.expected.append(line)
    return out


@functools.cache
def scratch() -> str:
    """This run's own folder standing in for the pages' /tmp/, so that two runs at once do not share files."""
    path = tempfile.mkdtemp(prefix="attdec-docs-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def run(command: str) -> subprocess.CompletedProcess:
    """`command` in bash from the repository root, attdec being this checkout's; what the page writes under
    /tmp/ goes to `scratch()` and is printed back as /tmp/, the checkout's path as the pages show it."""
    data = shared()
    env = dict(
        os.environ,
        COLUMNS=WIDTH,
        PYTHONPATH=str(ROOT),
        SHARED=str(data),
        S=str(data / "ui_output_samples" / "jhinpan__flydsl-kernel-profiling-lib" / "examples"),
        C=str(data / "captures"),
    )
    env.pop("NO_COLOR", None)
    private = scratch() + "/"
    line = command.split("  # ")[0].replace("/tmp/", private)
    script = f'attdec() {{ {sys.executable} -m attdec "$@"; }}\n( {line} ) 2>&1'
    p = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    # The checkout's own path is no figure of the example (a folder name with digits would read as one).
    p.stdout = p.stdout.replace(private, "/tmp/").replace(str(ROOT), "/work/main")
    return p


def figures(lines: list[str]) -> list[str]:
    return [f for ln in lines for f in FIGURE.findall(ln)]


def main(argv: list[str]) -> int:
    differ = 0
    for doc in DOCS:
        lines = doc.read_text().split("\n")
        runs = [(ex, run(ex.command)) for ex in examples(lines) if ex.runs]  # in order: setup lines first
        for ex, p in reversed(runs):  # replaced from the end, so that the earlier indices hold
            got = p.stdout.rstrip("\n").split("\n") if p.stdout else []
            if "--write" in argv:
                if ex.checked:
                    lines[ex.start + 1 : ex.end] = got
            elif p.returncode != 0 or (ex.checked and figures(got) != figures(ex.expected)):
                differ += 1
                print(f"{doc.relative_to(ROOT)}:{ex.start + 1}: {ex.command}: exit {p.returncode}: {got[-3:]}")
        if "--write" in argv:
            doc.write_text("\n".join(lines))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
