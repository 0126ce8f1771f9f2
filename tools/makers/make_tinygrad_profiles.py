#!/usr/bin/env python3
"""Write tests/fixtures/tinygrad/*.pkl: tinygrad profile pickles (what a `VIZ=-2` run saves as profile.pkl)
of the synthetic capture folders, so the tests on profiles run in a bare clone.

The layout is tinygrad's (tinygrad/device.py, tinygrad/runtime/ops_amd.py; read, not copied): a pickled
list of event dataclasses, each pickled as its class plus a state dict. `ProfileDeviceEvent` (device,
tdiff, props with gfx_target_version), `ProfileProgramEvent` (device, name, lib = code object bytes, base =
load address, tag), `ProfileSQTTEvent` (device, kern = the program's tag, se, blob, itrace, exec_tag) and
`ProfilePMCEvent` (device, kern, exec_tag, sched = `PMCSample`s, blob). Stand-in classes under tinygrad's
module names are registered for the pickler only; tinygrad itself is not needed.

    python3 tools/makers/make_tinygrad_profiles.py
"""

from __future__ import annotations

import json
import os
import pickle
import sys
import types
from decimal import Decimal

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "tests", "fixtures", "tinygrad")
PROFILES = {  # profile file -> capture folder
    "gfx1100/profile_synth_run1.pkl": "tests/fixtures/captures/gfx1100/synth_run1",
    "gfx942/profile_demo_raw.pkl": "attdec/data/demo_raw",
}
# gfx_target_version as the KFD reports it (major * 10000 + minor * 100 + stepping)
TARGET_VERSIONS = {"gfx1100": 110000, "gfx942": 90402}
CLASSES = {
    "tinygrad.device": ("ProfileDeviceEvent", "ProfileProgramEvent"),
    "tinygrad.runtime.ops_amd": ("ProfileSQTTEvent", "ProfilePMCEvent", "PMCSample"),
}


def stand_ins() -> dict[str, type]:
    """Plain classes that pickle under tinygrad's module and class names."""
    out = {}
    for module, names in CLASSES.items():
        parts = module.split(".")
        for k in range(1, len(parts)):  # the parent packages, so that the pickler's import finds the module
            sys.modules.setdefault(".".join(parts[:k]), types.ModuleType(".".join(parts[:k])))
        mod = sys.modules.setdefault(module, types.ModuleType(module))
        for name in names:
            cls = type(name, (), {"__module__": module, "__qualname__": name})
            setattr(mod, name, cls)
            out[name] = cls
    return out


def event(cls: type, **fields) -> object:
    obj = cls.__new__(cls)
    obj.__dict__.update(fields)
    return obj


def profile(folder: str, c: dict[str, type]) -> list:
    cap = json.load(open(os.path.join(ROOT, folder, "capture.json")))
    props = dict(cap.get("device_props") or {}, gfx_target_version=TARGET_VERSIONS[cap["gfx_arch"]])
    events = [event(c["ProfileDeviceEvent"], device="CPU", tdiff=Decimal(0), props=None)]
    tags = {}
    for tag, k in enumerate(cap["kernels"]):
        tags[k["name"]] = tag
        lib = open(os.path.join(ROOT, folder, k["code_object"]), "rb").read()
        events.append(event(c["ProfileProgramEvent"], device="AMD", name=k["name"], lib=lib, base=k["base"], tag=tag))
    for d in cap["dispatches"]:
        kern = tags[d["kernel"]]
        for p in cap.get("pmc") or []:
            if (p["kernel"], p["exec_tag"]) == (d["kernel"], d["exec_tag"]):
                sched = [event(c["PMCSample"], **s) for s in p["sched"]]
                blob = open(os.path.join(ROOT, folder, p["file"]), "rb").read()
                tag = d["exec_tag"]
                events.append(
                    event(c["ProfilePMCEvent"], device="AMD", kern=kern, sched=sched, blob=blob, exec_tag=tag)
                )
        for b in d["blobs"]:
            entry = next(x for x in cap["blobs"] if x["file"] == b)
            blob = open(os.path.join(ROOT, folder, b), "rb").read()
            events.append(
                event(
                    c["ProfileSQTTEvent"],
                    device="AMD",
                    kern=kern,
                    se=entry["se"],
                    blob=blob,
                    itrace=entry["itrace"],
                    exec_tag=d["exec_tag"],
                )
            )
    events.append(event(c["ProfileDeviceEvent"], device="AMD", tdiff=Decimal("1234.5"), props=props))
    return events


def main() -> None:
    c = stand_ins()
    for name, folder in PROFILES.items():
        out = os.path.join(OUT, name)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            pickle.dump(profile(folder, c), f, protocol=4)
        print(f"wrote {os.path.relpath(out, ROOT)} from {folder}")


if __name__ == "__main__":
    main()
