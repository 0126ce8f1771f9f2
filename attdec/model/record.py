"""`Record`: the base of attdec's data classes, what `@dataclass` gives them without its start-up cost.

A subclass lists its fields as annotations (inherited ones first); a class attribute is that field's
default, `field(default_factory=make)` a default made per instance, as with dataclasses. `Record` supplies
`__init__` (positional or keyword arguments, then `__post_init__` if the class has one), `__repr__`,
`__eq__` (same class, equal fields; unhashable, as dataclasses make them) and `fields()`; `Frozen` adds
immutability, a hash and `replace`.

Why not dataclasses: importing `dataclasses` imports `inspect`, and each class costs more at import (its
methods are generated as source and compiled): for the classes a plain `attdec hotspots` run touches, more
than reading a small ui_output folder and printing its report (benchmarks/RESULTS.md). A class created
by the thousand (`CodeLine`) writes its own `__init__`; one created by the ten thousand (`Instruction`) also
lists its fields in `__slots__` (their defaults then live in that `__init__` alone).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attdec.model.version_shims import dataclass_transform


class _Factory:
    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]):
        self.make = make


def field(*, default_factory: Callable[[], Any]) -> Any:
    """A field default made anew for each instance: `waves: list[Wave] = field(default_factory=list)`, as in
    dataclasses."""
    return _Factory(default_factory)


@dataclass_transform(field_specifiers=(field,))
class Record:
    """Fields from annotations, defaults from class attributes; __init__, __repr__, __eq__ from here."""

    __slots__ = ()  # a subclass may name its fields in __slots__ (and then writes its own __init__)
    _fields: tuple[str, ...] = ()
    _defaults: dict[str, Any] = {}  # noqa: RUF012 (replaced per class, never mutated)
    _post_init: Callable | None = None

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        fields, defaults = list(cls._fields), dict(cls._defaults)
        for name, ann in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063 (no inspect import)
            if str(ann).startswith(("ClassVar", "typing.ClassVar")):
                continue
            if name not in fields:
                fields.append(name)
            if name in cls.__dict__:
                defaults[name] = cls.__dict__[name]
                if isinstance(defaults[name], _Factory):
                    delattr(cls, name)  # the instance always has its own value
        cls._fields, cls._defaults = tuple(fields), defaults
        cls._post_init = getattr(cls, "__post_init__", None)

    def __init__(self, *args, **kw):
        d, fields = self.__dict__, self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__}() takes {len(fields)} arguments, {len(args)} were given")
        for name, value in zip(fields, args):
            d[name] = value
        defaults = self._defaults
        for name in fields[len(args) :]:
            if name in kw:
                d[name] = kw.pop(name)
            elif name in defaults:
                v = defaults[name]
                d[name] = v.make() if type(v) is _Factory else v
            else:
                raise TypeError(f"{type(self).__name__}() missing argument {name!r}")
        if kw:
            raise TypeError(f"{type(self).__name__}() got unexpected or repeated arguments {', '.join(kw)}")
        if self._post_init is not None:
            self._post_init()

    @classmethod
    def fields(cls) -> tuple[str, ...]:
        return cls._fields

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{f}={getattr(self, f)!r}' for f in self._fields)})"

    def __eq__(self, other) -> bool:
        if other is self:  # (shared constants are compared with themselves once per decoded blob)
            return True
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, f) == getattr(other, f) for f in self._fields)

    # defining __eq__ leaves a Record unhashable (it is mutable), as dataclasses do


class Frozen(Record):
    """A Record that cannot be changed once made, and so can be hashed (a dict key, a set member)."""

    # the hash, made once (a cache key hashed for every decoded blob): in a slot, so that `vars` and a pickle
    # leave it out (another process hashes strings differently)
    __slots__ = ("_hash",)

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r} of a frozen {type(self).__name__}")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r} of a frozen {type(self).__name__}")

    def __hash__(self) -> int:
        try:
            return self._hash  # type: ignore[attr-defined]  # (a slot: an annotation would make it a field)
        except AttributeError:
            h = hash(tuple(getattr(self, f) for f in self._fields))
            object.__setattr__(self, "_hash", h)
            return h

    def __getstate__(self) -> dict:
        return self.__dict__

    def replace(self, **changes):
        """A copy with the fields named changed (an unknown name is a TypeError), as dataclasses.replace."""
        return type(self)(**{**{f: getattr(self, f) for f in self._fields}, **changes})
