"""`Record`: a small immutable value class for the code a cold start imports.

A `typing.NamedTuple` class costs about 0.9 M instructions to create, 0.0014x of `import boto3`, because each
class compiles its own `__new__` from source; a `Record` subclass costs about a tenth of that (measured with
callgrind, docs/measurements.md, "Cold imports back under 1.6x"). Where a turn function imports a dozen such
classes, that is the difference between its cold import being within budget or not.

A subclass declares its fields as annotations with optional defaults, as a NamedTuple does, and gets what
the core uses of a NamedTuple: construction by position or name, attributes, equality and hashing by value,
`repr`, unpacking, `_replace` and `_asdict`. Instances cannot be changed. Type checkers read the fields as a
frozen dataclass's (`dataclass_transform`). It is not a tuple: `json.dumps` does not take one.
"""

from __future__ import annotations

from inspect import get_annotations
from typing import Any, ClassVar, Self, dataclass_transform

_MISSING = object()


@dataclass_transform(frozen_default=True)
class Record:
    """Base of the core's small value records; see the module's docstring."""

    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # Annotations are strings here (`from __future__ import annotations` in the subclass's module, or
        # not): only their names are read, never evaluated, which is what keeps a subclass cheap.
        own = [
            name
            for name, annotation in get_annotations(cls).items()
            if not str(annotation).startswith(("ClassVar", "typing.ClassVar"))
        ]
        cls._fields = (*cls._fields, *(name for name in own if name not in cls._fields))
        defaults = dict(cls._defaults)
        for name in own:
            value = cls.__dict__.get(name, _MISSING)
            if value is not _MISSING:
                defaults[name] = value
        cls._defaults = defaults

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        fields = self._fields
        if len(args) > len(fields):
            raise TypeError(f"{type(self).__name__} takes {len(fields)} fields, got {len(args)}")
        values = dict(zip(fields, args, strict=False))
        for name, value in kwargs.items():
            if name not in fields:
                raise TypeError(f"{type(self).__name__} has no field {name!r}")
            if name in values:
                raise TypeError(f"{type(self).__name__} got {name!r} twice")
            values[name] = value
        for name in fields:
            if name not in values:
                if name not in self._defaults:
                    raise TypeError(f"{type(self).__name__} needs {name!r}")
                values[name] = self._defaults[name]
            object.__setattr__(self, name, values[name])

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable: use _replace")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in self._fields)

    def __iter__(self) -> Any:
        return iter(self._values())

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self._values()))

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{type(self).__name__}({fields})"

    def _replace(self, **changes: Any) -> Self:
        """A copy with `changes` (NamedTuple's name for it)."""
        return type(self)(**{**self._asdict(), **changes})

    def _asdict(self) -> dict[str, Any]:
        """The fields by name, in order."""
        return {name: getattr(self, name) for name in self._fields}
