"""The one table of per-architecture facts: names, versions, ELF machine numbers, families."""

import pytest

from attdec.errors import ArchError
from attdec.model.target import TARGETS, family_target, from_mach, from_version, target


@pytest.mark.parametrize(
    "name,family,gen,wave,tables",
    [
        ("gfx90a", "gfx9", 9, 64, "gfx90a"),
        ("gfx942", "gfx9", 9, 64, "gfx942"),
        ("gfx950", "gfx9", 9, 64, "gfx950"),
        ("gfx940", "gfx9", 9, 64, "gfx942"),
        ("gfx1100", "gfx11", 11, 32, "gfx1100"),
        ("gfx1152", "gfx11", 11, 32, "gfx1151"),
        ("gfx1201", "gfx12", 12, 32, "gfx1201"),
        ("gfx1030", "gfx10", 10, 32, None),
    ],
)
def test_facts(name, family, gen, wave, tables):
    t = target(name)
    assert (t.family, t.generation, t.wave_size, t.isa) == (family, gen, wave, tables)
    assert from_version(t.version) is t and from_mach(t.mach) is t


@pytest.mark.parametrize("spelling", ["GFX942", "gfx942:sramecc+:xnack-", "amdgcn-amd-amdhsa--gfx942", " gfx942 "])
def test_spellings(spelling):
    assert target(spelling) is TARGETS["gfx942"]


def test_family_only_targets_say_the_chip_is_unknown():
    t = family_target(9)
    assert t.display == "gfx9 (chip unknown)" and not t.chip_known and t.family == "gfx9"
    assert target("gfx9 (chip unknown)") is t and target("gfx12").counters[0] == "loadcnt"


def test_unknown_names_list_the_known_ones():
    with pytest.raises(ArchError) as e:
        target("banana")
    assert "banana" in str(e.value) and "gfx950" in str(e.value) and "gfx1201" in str(e.value)
    with pytest.raises(ArchError):
        from_version(123456)
    assert from_mach(0xFE) is None


def test_counters_per_family():
    assert target("gfx950").counters == ("vmcnt", "lgkmcnt", "expcnt")
    assert "vscnt" in target("gfx1100").counters and "kmcnt" in target("gfx1201").counters


def test_pci_device_ids_name_one_chip_each():
    """RGP's ASIC info gives a PCI device id: each known id names exactly one chip; unknown ids name none."""
    from attdec.model.target import from_pci_id

    ids = [i for t in TARGETS.values() for i in t.pci_ids]
    assert len(ids) == len(set(ids)) and len(ids) >= 12
    assert from_pci_id(0x744C) is TARGETS["gfx1100"] and from_pci_id(0x7550) is TARGETS["gfx1201"]
    assert from_pci_id(0x1586) is TARGETS["gfx1151"] and from_pci_id(0) is None
