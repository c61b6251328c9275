"""Frozen records for the authorizer's cold start: what `@dataclass(frozen=True)` gives, at a
fraction of its import cost.

`@dataclass` writes and compiles an `__init__`, `__eq__`, `__hash__`, `__repr__` and the
frozen `__setattr__` for each class when its module is imported: 1.2-2.6 ms for a class of
twenty fields on the 2-core benchmark machine. The authorizer imports three such classes
(`Settings`, `ApiKey`, `Principal`) before its first decision, and a cold start is measured
against `import boto3` plus a client (docs/performance.md, "Cold start"). A `Record` reads
its fields from the class body instead (40 µs) and shares one generic implementation of each
method; type checkers see a frozen dataclass (`dataclass_transform`, PEP 681).

    class Principal(Record):
        user_id: str
        scopes: frozenset[str]
        workspace_id: str | None = None
        act: dict[str, Any] | None = field(default=None, compare=False, hash=False)

A record is built with keywords or positions, compares and hashes by its compared fields, is
immutable, and is copied with changes by `copy.replace` (which serves dataclasses too).
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any, ClassVar, NamedTuple, Self, dataclass_transform

_MISSING: Any = object()


class Field(NamedTuple):
    default: Any = _MISSING
    compare: bool = True
    hash: bool | None = None  # None: as `compare`


def field(*, default: Any = _MISSING, compare: bool = True, hash: bool | None = None) -> Any:
    """A field with a default that equality (and hashing) may leave out, as dataclasses'."""
    return Field(default, compare, hash)


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
class Record:
    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}
    _compared: ClassVar[tuple[str, ...]] = ()
    _hashed: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields, defaults = list(cls._fields), dict(cls._defaults)
        compared, hashed = list(cls._compared), list(cls._hashed)
        # Annotations are strings here (`from __future__ import annotations`): read, never
        # evaluated, which is what keeps this cheap.
        for name, annotation in vars(cls).get("__annotations__", {}).items():
            if str(annotation).startswith(("ClassVar", "typing.ClassVar")) or name in fields:
                continue
            spec = vars(cls).get(name, _MISSING)
            if not isinstance(spec, Field):
                spec = Field(spec)
            if spec.default is not _MISSING:
                defaults[name] = spec.default
                setattr(cls, name, spec.default)
            elif defaults:
                raise TypeError(f"non-default field {name!r} follows a default one")
            fields.append(name)
            if spec.compare:
                compared.append(name)
            if spec.compare if spec.hash is None else spec.hash:
                hashed.append(name)
        cls._fields, cls._defaults = tuple(fields), defaults
        cls._compared, cls._hashed = tuple(compared), tuple(hashed)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} fields, got {len(args)}")
        values = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name in values or name not in fields:
                problem = "got two values for" if name in values else "has no field"
                raise TypeError(f"{type(self).__name__} {problem} {name!r}")
            values[name] = value
        if len(values) < len(fields):
            for name in fields:
                if name not in values:
                    if name not in self._defaults:
                        raise TypeError(f"{type(self).__name__} needs the field {name!r}")
                    values[name] = self._defaults[name]
        object.__setattr__(self, "__dict__", values)

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self._compared)

    def __hash__(self) -> int:
        return hash(tuple(getattr(self, n) for n in self._hashed))

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__name__}({shown})"

    def __replace__(self, **changes: Any) -> Self:
        return type(self)(**{**vars(self), **changes})
