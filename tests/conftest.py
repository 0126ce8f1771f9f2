"""Shared test helpers: where the project's real data (../shared) lives, and a skip when it is absent."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"
SHARED = Path(os.environ.get("ATTDEC_SHARED", ROOT.parent / "shared")).resolve()


def shared_path(*parts: str) -> Path:
    """A path under ../shared, or skip the test with the reason when that data is not on this machine."""
    p = SHARED.joinpath(*parts)
    if not p.exists():
        pytest.skip(f"real data not present: {p} (set ATTDEC_SHARED to the shared/ folder)")
    return p
