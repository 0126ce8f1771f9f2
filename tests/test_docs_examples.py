"""The examples of the README and docs/commands.md still print what the pages show (their figures, not
their whitespace), run from the repository root as a reader would (tools/oracles/docs_examples.py)."""

from __future__ import annotations

import pytest
from conftest import shared_path

from tools.oracles import docs_examples


def test_readme_is_a_front_page():
    readme = (docs_examples.ROOT / "README.md").read_text()
    assert len(readme.splitlines()) <= 250
    for what in ("pip install", "python3 -m pytest -q", "attdec demo", "docs/commands.md", "_ATTDEC_COMPLETE"):
        assert what in readme, what
    from attdec.errors import ExitCode

    assert all(f"| {int(c)} | {c.meaning} |" in readme for c in ExitCode)


def test_examples_write_nothing_into_the_shared_data():
    for doc in docs_examples.DOCS:
        for ex in docs_examples.examples(doc.read_text().split("\n")):
            if "-o " in ex.command or ">" in ex.command:
                out = ex.command.split("-o ")[-1] if "-o " in ex.command else ex.command.split(">")[-1]
                assert not out.strip().startswith(("$S", "$C", "$SHARED", "../shared")), ex.command


@pytest.mark.parametrize("doc", docs_examples.DOCS, ids=lambda p: p.name)
def test_examples_print_what_the_page_shows(doc):
    shared_path("ui_output_samples")  # skips, saying why, without the shared data
    failed = []
    for ex in docs_examples.examples(doc.read_text().split("\n")):
        if not ex.runs:
            continue
        p = docs_examples.run(ex.command)  # in order: an example's setup lines come before it
        got = p.stdout.rstrip("\n").split("\n") if p.stdout else []
        if p.returncode != 0 or (ex.checked and docs_examples.figures(got) != docs_examples.figures(ex.expected)):
            failed.append((ex.start + 1, ex.command, p.returncode, got[:5]))
    assert not failed, failed
