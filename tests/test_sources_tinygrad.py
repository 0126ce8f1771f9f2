"""tinygrad profile pickles: restricted unpickling and grouping into dispatches."""

from __future__ import annotations

import hashlib
import json
import pickle
import sys
import types
from dataclasses import dataclass

import pytest
from conftest import FIXTURES, SHARED, SYNTHETIC_CAPTURES, SYNTHETIC_MORE, real_data

from attdec.errors import FormatError
from attdec.model.target import from_version
from attdec.sources import tinygrad

# profiles written from the synthetic capture folders (tools/makers/make_tinygrad_profiles.py)
SYNTHETIC_PROFILES = {
    FIXTURES / "tinygrad" / "gfx1100" / "profile_synth_run1.pkl": SYNTHETIC_MORE,
    FIXTURES / "tinygrad" / "gfx942" / "profile_demo_raw.pkl": SYNTHETIC_CAPTURES["gfx942"],
}


def _captures_by_pickle():
    out = {}
    for cj in (SHARED / "captures").glob("*/*/capture.json"):
        c = json.loads(cj.read_text())
        out[c["origin"]["path"]] = cj.parent
    return out


def _profile_sets() -> list:
    """(profile -> the capture folder made of the same bytes, or None, how many have one): the synthetic
    profiles, then the real ones ../shared has (those of newer tinygrad versions have no folder)."""
    sets = [pytest.param(SYNTHETIC_PROFILES, 2, id="synthetic")]
    if real_data("tinygrad_profiles") and real_data("captures"):
        caps = _captures_by_pickle()
        real = {
            p: caps.get(f"extra/sqtt/examples/{p.parent.name}/{p.name}")
            for p in sorted((SHARED / "tinygrad_profiles").glob("*/*.pkl"))
        }
        sets.append(pytest.param(real, 6, id="real"))
    return sets


def test_target_version_to_arch():
    assert from_version(120001).name == "gfx1201"
    assert from_version(90500).name == "gfx950"
    assert from_version(110000).name == "gfx1100"
    assert from_version(90010).name == "gfx90a"
    assert from_version(110501).name == "gfx1151"


@pytest.mark.parametrize("profiles,with_folder", _profile_sets())
def test_profiles_agree_with_capture_json(profiles, with_folder):
    """Grouping, kernel names, arch, load bases, SEs and blob bytes equal what capture.json was made of."""
    pairs = [(p, c) for p, c in profiles.items() if c is not None]
    assert len(pairs) == with_folder
    for pkl, cdir in pairs:
        cap = json.loads((cdir / "capture.json").read_text())
        got = tinygrad.load(pkl)
        assert [d.kernel for d in got] == [d["kernel"] for d in cap["dispatches"]], pkl
        kernels = {k["name"]: k for k in cap["kernels"]}
        blobs = {b["file"]: b for b in cap["blobs"]}
        for d, cd in zip(got, cap["dispatches"]):
            assert d.target.name == cap["gfx_arch"]
            assert d.name == f"{cd['kernel']}#{cd['exec_tag']}"
            (co,) = d.code_objects
            k = kernels[d.kernel]
            assert co.base == k["base"]
            assert co.data == (cdir / k["code_object"]).read_bytes()
            assert hashlib.sha256(co.data).hexdigest() == k.get(
                "code_object_sha256", hashlib.sha256(co.data).hexdigest()
            )
            assert len(d.blobs) == len(cd["blobs"])
            for b, fname in zip(d.blobs, cd["blobs"]):
                cb = blobs[fname]
                assert (b.se, b.itrace) == (cb["se"], cb["itrace"])
                if "sha256" in cb:
                    assert hashlib.sha256(b.data).hexdigest() == cb["sha256"]
                assert b.data == (cdir / fname).read_bytes()


def _unpack_to_capture(pkl, folder):
    """A profile's dispatches written as a capture folder (../shared/captures layout): its code objects,
    one .att per SQTT blob, capture.json."""
    folder.mkdir()
    cap = {"kernels": [], "blobs": [], "dispatches": [], "gfx_arch": None}
    for i, d in enumerate(tinygrad.load(pkl)):
        (co,) = d.code_objects
        cap["gfx_arch"] = d.target.name
        kname = f"k{i}"  # one kernel entry per dispatch: programs of one name may differ between them
        (folder / f"{kname}.co").write_bytes(co.data)
        cap["kernels"].append({"name": kname, "code_object": f"{kname}.co", "base": co.base})
        files = []
        for b in d.blobs:
            f = f"{kname}_se{b.se}_{len(files)}.att"
            (folder / f).write_bytes(b.data)
            cap["blobs"].append({"file": f, "se": b.se, "itrace": b.itrace})
            files.append(f)
        cap["dispatches"].append({"kernel": kname, "exec_tag": None, "blobs": files})
    (folder / "capture.json").write_text(json.dumps(cap))


@pytest.mark.parametrize("profiles,with_folder", _profile_sets())
def test_every_profile_gives_the_totals_of_its_sqtt_unpacked_into_a_capture_folder(tmp_path, profiles, with_folder):
    """Newer tinygrad versions' profiles (data classes the reader has not seen) read too, and every
    profile decodes to the figures of the same blobs read as a capture folder."""
    import attdec

    compared = 0
    if with_folder == 6:  # the real set: profiles of newer tinygrad versions among them
        assert any(p.parent.name == "newer" for p in profiles)
    for i, (pkl, folder) in enumerate(profiles.items()):
        _unpack_to_capture(pkl, tmp_path / f"c{i}")
        got, want = attdec.open(pkl), attdec.open(tmp_path / f"c{i}")
        assert len(got) == len(want) > 0, pkl
        for a, b in zip(got, want):
            assert attdec.hotspots(a).totals == attdec.hotspots(b).totals, (pkl, a.name)
            assert a.wave_count == b.wave_count and a.arch == b.arch, (pkl, a.name)
        if folder is not None:  # the capture folder made of the same pickle
            theirs = attdec.open(folder)
            assert [attdec.hotspots(d).totals for d in theirs] == [attdec.hotspots(d).totals for d in got], pkl
            compared += 1
    assert compared == with_folder


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
    assert all(d.target.name == "gfx950" for d in ds)


def test_old_profiles_name_the_kernel_and_have_no_tags():
    ev = [
        ProfileDeviceEvent("AMD", 0, {"gfx_target_version": 110501}),
        ProfileProgramEvent("AMD", "E_3", b"x", 0x7000, None),
        ProfileSQTTEvent("AMD", "E_3", 0, b"a", True, None),
    ]
    (d,) = tinygrad.dispatches_from_events(tinygrad.load_events(_pickle_as_tinygrad(ev), "y"), "y")
    assert (d.name, d.target.name, d.code_objects[0].base) == ("E_3", "gfx1151", 0x7000)


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


def test_unknown_tinygrad_data_class_loads_as_a_record():
    """A newer tinygrad's data classes (an Opt, a ConstFloat) inside the events: inert records."""
    weird = ProfileWeirdEvent()
    weird.opts = [ProfileWeirdEvent()]
    data = _pickle_as_tinygrad([weird], "tinygrad.newstuff", (ProfileWeirdEvent,))
    (ev,) = tinygrad.load_events(data, "w.pkl")
    assert ev.cls_name == "ProfileWeirdEvent" and ev.opts[0].cls_name == "ProfileWeirdEvent"


def _global(module: str, name: str, *args: str) -> bytes:
    """A protocol-2 pickle of `module.name(*args)` (GLOBAL + REDUCE), whatever module and name say."""
    body = b"".join(b"X" + len(a.encode()).to_bytes(4, "little") + a.encode() for a in args)
    return b"\x80\x02c" + f"{module}\n{name}\n".encode() + b"(" + body + b"tR."


@pytest.mark.parametrize(
    "module,name",
    [
        ("tinygrad.x.os", "system"),  # code reached through a tinygrad-looking module path
        ("tinygrad.x.os", "System"),
        ("tinygrad.subprocess", "Popen"),
        ("tinygrad.builtins", "Eval"),
        ("tinygrad.helpers", "getenv"),  # a tinygrad function, not a class
        ("tinygrad.x", "Opt.__reduce__"),  # a method through a nested name
        ("tinygrad.x", "__builtins__"),
        ("tinygrad._private", "Thing"),
        ("tinygrad..x", "Opt"),
        ("tinygradx", "Opt"),
        ("os", "system"),
        ("builtins", "eval"),
        ("posix", "system"),
    ],
)
def test_refuses_code_behind_tinygrad_like_names(module, name, tmp_path):
    with pytest.raises(FormatError, match="refusing to unpickle"):
        tinygrad.load_events(_global(module, name, f"touch {tmp_path}/pwned"), "evil.pkl")
    assert not (tmp_path / "pwned").exists()


def test_tinygrad_class_called_by_reduce_only_stores_its_arguments(tmp_path):
    """What find_class hands out for a tinygrad name is our record: REDUCE runs nothing."""
    import io

    ev = tinygrad._unpickler()(io.BytesIO(_global("tinygrad.x", "Popen", "touch"))).load()
    assert ev.cls_name == "Popen" and ev.args == ("touch",)


class _ReducesToSystem:
    def __reduce__(self):
        import os

        return (os.system, ("touch /tmp/attdec_pwned_tinygrad",))


class _ReducesThroughRecord:
    def __reduce__(self):
        import os

        return (ProfileWeirdEvent, (os.system,))


class _StateWithCode:
    def __reduce__(self):
        return (ProfileWeirdEvent, (), {"__class__": "x", "__reduce__": "y", "payload": _ReducesToSystem()})


@pytest.mark.parametrize("cls", [_ReducesToSystem, _ReducesThroughRecord, _StateWithCode])
def test_tinygrad_class_whose_reduce_reaches_a_callable_is_refused(cls):
    """A class that lives in a tinygrad module but pickles itself as a call of os.system (or hands it
    to a record, or hides it in its state): the callable's global is refused, nothing runs."""
    data = _pickle_as_tinygrad([cls()], "tinygrad.evil", (cls, ProfileWeirdEvent))
    with pytest.raises(FormatError, match=r"unknown class (posix|os)\.system"):
        tinygrad.load_events(data, "evil.pkl")


def test_record_state_never_sets_dunder_attributes():
    class Plain:
        def __reduce__(self):
            return (ProfileWeirdEvent, (), {"__class__": "x", "__dict__": {}, "payload": 3})

    (ev,) = tinygrad.load_events(_pickle_as_tinygrad([Plain()], "tinygrad.evil", (Plain, ProfileWeirdEvent)), "p")
    assert type(ev).__name__ == "ProfileWeirdEvent" and vars(ev) == {"args": (), "payload": 3}


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


@pytest.mark.parametrize("arch", sorted(SYNTHETIC_CAPTURES))
def test_a_profile_made_of_a_capture_gives_its_waves_and_totals(tmp_path, arch):
    """A profile holding a capture's code objects and SQTT blobs (one program event per kernel, one SQTT event
    per blob) decodes to the capture folder's dispatches, waves and totals."""
    import attdec
    from attdec.model import target

    folder = SYNTHETIC_CAPTURES[arch]
    cap = json.loads((folder / "capture.json").read_text())
    se_of = {b["file"]: b["se"] for b in cap["blobs"]}
    tags = {k["name"]: i for i, k in enumerate(cap["kernels"])}
    ev: list = [ProfileDeviceEvent("AMD", 0, {"gfx_target_version": target(cap["gfx_arch"]).version})]
    for k in cap["kernels"]:
        ev.append(
            ProfileProgramEvent("AMD", k["name"], (folder / k["code_object"]).read_bytes(), k["base"], tags[k["name"]])
        )
    for d in cap["dispatches"]:
        for f in d["blobs"]:
            blob = (folder / f).read_bytes()
            ev.append(ProfileSQTTEvent("AMD", tags[d["kernel"]], se_of[f], blob, True, d["exec_tag"]))
    pkl = tmp_path / "profile.pkl"
    pkl.write_bytes(_pickle_as_tinygrad(ev))
    got, want = attdec.open(pkl), attdec.open(folder)
    assert [d.name for d in got] == [d.name for d in want] and len(got) == len(cap["dispatches"])
    for a, b in zip(got, want):
        assert (a.wave_count, a.arch) == (b.wave_count, b.arch) and a.wave_count > 0
        assert attdec.hotspots(a).totals == attdec.hotspots(b).totals
