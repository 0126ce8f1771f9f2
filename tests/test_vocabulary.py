"""One record style and one type per vocabulary (docs/architecture.md, "One name per concept")."""

from __future__ import annotations

import re
from pathlib import Path

from attdec.analysis.classify import STALL_TYPE_OF_CLASS, STALL_TYPE_OF_COUNTER, STALL_TYPES, StallType, classify
from attdec.decoders.stitch import LineKind
from attdec.isa.categories import InstClass, class_of
from attdec.model import Category, target

PACKAGE = Path(__file__).resolve().parents[1] / "attdec"


def test_attdec_has_one_record_style():
    other = re.compile(
        r"^\s*(@dataclass(?!_transform)|from dataclasses import|import dataclasses|class \w+\(.*NamedTuple.*\):)", re.M
    )
    found = [
        f"{p.relative_to(PACKAGE)}: {m.group(1)}" for p in PACKAGE.rglob("*.py") for m in other.finditer(p.read_text())
    ]
    assert not found, found


def test_every_instruction_class_has_a_stall_type():
    assert set(STALL_TYPE_OF_CLASS) == set(InstClass)
    assert set(STALL_TYPE_OF_CLASS.values()) | set(STALL_TYPE_OF_COUNTER.values()) == set(StallType)


def test_stall_types_print_as_the_outputs_name_them():
    assert tuple(StallType) == STALL_TYPES
    assert [f"{t}" for t in STALL_TYPES][:3] == ["VMEM-wait", "LGKM-wait", "EXP-wait"]
    assert str(StallType.LDS) == "LDS" and {StallType.OTHER: 1}["other"] == 1


def test_the_walk_kinds_that_match_records_are_the_trace_categories():
    shared = [k for k in LineKind if k.name in Category.__members__]
    assert len(shared) == 8 and all(k == Category[k.name] for k in shared)


def test_one_lds_instruction_seen_by_each_vocabulary():
    gfx11 = target("gfx1100")
    assert class_of("ds_read_b32 v0, v1", gfx11) is InstClass.LDS
    assert classify("ds_read_b32 v0, v1", gfx11)[0] is StallType.LDS
    assert classify("s_waitcnt lgkmcnt(0)", gfx11)[0] is StallType.LGKM_WAIT  # waiting for LDS results
    assert LineKind.LDS == Category.LDS
