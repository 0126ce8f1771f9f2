"""tinygrad profile pickles: restricted unpickling and grouping into dispatches."""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
import types
from dataclasses import dataclass

import pytest
from conftest import shared_path

from attdec.errors import FormatError
from attdec.model.target import from_version
from attdec.sources import tinygrad


def _captures_by_pickle():
    out = {}
    for cj in shared_path("captures").glob("*/*/capture.json"):
        c = json.loads(cj.read_text())
        out[c["origin"]["path"]] = (cj.parent, c)
    return out


def test_target_version_to_arch():
    assert from_version(120001).name == "gfx1201"
    assert from_version(90500).name == "gfx950"
    assert from_version(110000).name == "gfx1100"
    assert from_version(90010).name == "gfx90a"
    assert from_version(110501).name == "gfx1151"


def test_profiles_agree_with_capture_json():
    """Grouping, kernel names, arch, load bases, SEs and blob bytes equal what capture.json was made of."""
    caps = _captures_by_pickle()
    pkls = sorted(shared_path("tinygrad_profiles").glob("*/*.pkl"))
    assert len(pkls) == 6
    for pkl in pkls:
        cdir, cap = caps[f"extra/sqtt/examples/{pkl.parent.name}/{pkl.name}"]
        got = tinygrad.load(pkl)
        assert [d.kernel for d in got] == [d["kernel"] for d in cap["dispatches"]], pkl
        kernels = {k["name"]: k for k in cap["kernels"]}
        blobs = {b["file"]: b for b in cap["blobs"]}
        for d, cd in zip(got, cap["dispatches"]):
            assert d.arch == cap["gfx_arch"]
            assert d.name == f"{cd['kernel']}#{cd['exec_tag']}"
            (co,) = d.code_objects
            k = kernels[d.kernel]
            assert co.base == k["base"]
            assert hashlib.sha256(co.data).hexdigest() == k["code_object_sha256"]
            assert len(d.blobs) == len(cd["blobs"])
            for b, fname in zip(d.blobs, cd["blobs"]):
                cb = blobs[fname]
                assert (b.se, b.itrace) == (cb["se"], cb["itrace"])
                assert hashlib.sha256(b.data).hexdigest() == cb["sha256"]
                assert b.data == (cdir / fname).read_bytes()


# --- synthesized pickles: tinygrad-like classes under a fake module name -------------------------


@dataclass
class ProfileDeviceEvent:
    device: str
    tdiff: object = 0
    props: dict | None = None


@dataclass
class ProfileProgramEvent:
    device: str
    name: str
    lib: bytes | None
    base: int | None
    tag: int | None = None


@dataclass
class ProfileSQTTEvent:
    device: str
    kern: object
    se: int
    blob: bytes
    itrace: bool
    exec_tag: int | None = None


class ProfileWeirdEvent:
    pass


def _pickle_as_tinygrad(
    obj, module="tinygrad.fake_device", classes=(ProfileDeviceEvent, ProfileProgramEvent, ProfileSQTTEvent)
) -> bytes:
    """Pickle `obj` with our stand-in classes appearing to live in a tinygrad module."""
    mods = {name: types.ModuleType(name) for name in ("tinygrad", module) if name not in sys.modules}
    saved = {cls: cls.__module__ for cls in classes}
    for cls in classes:
        cls.__module__ = module
        setattr(mods.get(module) or sys.modules[module], cls.__name__, cls)
    sys.modules.update(mods)
    try:
        return pickle.dumps(obj, protocol=4)
    finally:
        for name in mods:
            del sys.modules[name]
        for cls, m in saved.items():
            cls.__module__ = m


def test_synthetic_profile_groups_by_kernel_and_tag():
    import decimal

    ev = [
        ProfileDeviceEvent("AMD", decimal.Decimal("1.5"), {"gfx_target_version": 90500}),
        ProfileProgramEvent("AMD", "k0", b"\x7fELFk0", 0x1000, 0),
        ProfileProgramEvent("AMD", "k1", b"\x7fELFk1", 0x2000, 1),
        ProfileSQTTEvent("AMD", 1, 0, b"a", True, 7),
        ProfileSQTTEvent("AMD", 0, 0, b"b", True, 8),
        ProfileSQTTEvent("AMD", 1, 1, b"c", False, 7),
        ProfileSQTTEvent("AMD", 1, 0, b"d", True, 9),
    ]
    ds = tinygrad.dispatches_from_events(tinygrad.load_events(_pickle_as_tinygrad(ev), "x.pkl"), "x.pkl")
    assert [d.name for d in ds] == ["k1#7", "k0#8", "k1#9"]
    assert [(b.se, b.data) for b in ds[0].blobs] == [(0, b"a"), (1, b"c")]
    assert ds[0].code_objects[0].base == 0x2000 and ds[1].code_objects[0].data == b"\x7fELFk0"
    assert all(d.arch == "gfx950" for d in ds)


def test_old_profiles_name_the_kernel_and_have_no_tags():
    ev = [
        ProfileDeviceEvent("AMD", 0, {"gfx_target_version": 110501}),
        ProfileProgramEvent("AMD", "E_3", b"x", 0x7000, None),
        ProfileSQTTEvent("AMD", "E_3", 0, b"a", True, None),
    ]
    (d,) = tinygrad.dispatches_from_events(tinygrad.load_events(_pickle_as_tinygrad(ev), "y"), "y")
    assert (d.name, d.arch, d.code_objects[0].base) == ("E_3", "gfx1151", 0x7000)


def test_blob_without_program_is_one_clear_error():
    ev = [ProfileDeviceEvent("AMD", 0, {"gfx_target_version": 110000}), ProfileSQTTEvent("AMD", 3, 0, b"a", True, 1)]
    with pytest.raises(FormatError, match="no program"):
        tinygrad.dispatches_from_events(tinygrad.load_events(_pickle_as_tinygrad(ev), "z"), "z")


class _Evil:
    def __reduce__(self):
        import os

        return (os.system, ("touch /tmp/attdec_pwned",))


def test_refuses_arbitrary_callables(tmp_path):
    data = pickle.dumps([_Evil()])
    with pytest.raises(FormatError, match=r"unknown class (posix|os)\.system"):
        tinygrad.load_events(data, "evil.pkl")
    # builtins reached through REDUCE are refused too
    data = pickle.dumps([getattr])
    with pytest.raises(FormatError, match=r"builtins\.getattr"):
        tinygrad.load_events(data, "evil2.pkl")


def test_unknown_tinygrad_class_is_named():
    data = _pickle_as_tinygrad([ProfileWeirdEvent()], "tinygrad.newstuff", (ProfileWeirdEvent,))
    with pytest.raises(FormatError) as e:
        tinygrad.load_events(data, "w.pkl")
    assert "tinygrad.newstuff.ProfileWeirdEvent" in str(e.value) and str(e.value).startswith("w.pkl: ")


def test_garbage_is_a_format_error(tmp_path):
    for junk in (b"", b"\x80\x04garbage", pickle.dumps({"not": "a list"})):
        with pytest.raises(FormatError):
            tinygrad.load_events(junk, "g.pkl")


def test_cli_refuses_an_unsafe_pickle_in_one_line(tmp_path):

    from conftest import invoke

    p = tmp_path / "profile.pkl"
    p.write_bytes(pickle.dumps([_Evil()], protocol=4))
    r = invoke(["export-ui", str(p), "-o", str(tmp_path / "o")])
    assert r.exit_code == 1 and len(r.output.strip().splitlines()) == 1
    assert "refusing to unpickle unknown class" in r.output and "system" in r.output
    assert not (tmp_path / "o").exists()
