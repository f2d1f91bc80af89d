"""Backends by name: one registry per kind (LLMs, embedders, stores, strategies, ...).

Built-ins register exactly the way a plugin would: with :meth:`Registry.register`
at import time of their module.  A registry may know a built-in's name and module
path before importing it (``lazy={"name": "module.path"}``): asking whether a name
is there costs no import, and getting one imports that module only.  Third-party
packages can also expose an entry point in the group ``sparqlqa.<kind>`` pointing
at a module to import.  A registry made with ``name_attribute`` gives each class it registers its name
in that class attribute (``LLM.backend_name``, ``Strategy.name``): a backend states its name once, in
its ``register`` line.

>>> from sparqlqa.registry import Registry
>>> colours = Registry("colour", name_attribute="name")
>>> @colours.register("red")
... class Red:
...     pass
>>> colours.get("red") is Red, Red.name
(True, 'red')
>>> colours.names()
['red']
>>> shapes = Registry("shape", lazy={"square": "no.such.module"})
>>> "square" in shapes, "circle" in shapes  # nothing imported to answer
(True, False)
"""

from __future__ import annotations

__all__ = ["Registry", "lazy_attribute"]

import importlib
from collections.abc import Callable, Mapping
from typing import Any, Generic, TypeVar

from sparqlqa.errors import ConfigError, UnknownNameError

T = TypeVar("T")


class Registry(Generic[T]):
    """A name → object mapping for one kind of backend.

    ``builtin_modules`` are imported on first lookup so that registering a
    built-in costs nothing until it is needed (heavy backends stay lazy);
    ``lazy`` names built-ins by module path: each module is imported when its
    own name is first got, never to answer ``name in registry``.  ``name_attribute``: the class
    attribute a registered class is given its name in, unless the class sets that attribute itself.
    """

    def __init__(self, kind: str, builtin_modules: tuple[str, ...] = (),
                 lazy: Mapping[str, str] | None = None, *, name_attribute: str | None = None) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._builtin_modules = builtin_modules
        self._lazy = dict(lazy or {})
        self._loaded = False
        self._name_attribute = name_attribute

    def register(self, name: str, *, replace: bool = False) -> Callable[[T], T]:
        """Decorator registering ``obj`` under ``name``."""

        def decorate(obj: T) -> T:
            if name in self._entries and not replace and self._entries[name] is not obj:
                raise ConfigError(f"{self.kind} {name!r} is registered twice")
            self._entries[name] = obj
            if self._name_attribute is not None and isinstance(obj, type) and self._name_attribute not in vars(obj):
                setattr(obj, self._name_attribute, name)
            return obj

        return decorate

    def add(self, name: str, obj: T, *, replace: bool = False) -> T:
        """Register ``obj`` under ``name`` (non-decorator form)."""
        return self.register(name, replace=replace)(obj)

    def _load_builtins(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        for module in self._builtin_modules:
            importlib.import_module(module)
        from importlib.metadata import entry_points  # 0.01-0.02 s: only when a name is not a built-in's

        for ep in entry_points(group=f"sparqlqa.{self.kind}"):
            try:
                ep.load()
            except Exception as exc:  # a broken plugin must not break the tool
                raise ConfigError(f"plugin {ep.name!r} for {self.kind} failed to load: {exc}") from exc

    def get(self, name: str) -> T:
        """The object registered under ``name``; :class:`UnknownNameError` otherwise."""
        if name not in self._entries and name in self._lazy:
            importlib.import_module(self._lazy[name])
        if name not in self._entries:
            self._load_builtins()
        try:
            return self._entries[name]
        except KeyError:
            raise UnknownNameError(self.kind, name, self.names()) from None

    def names(self) -> list[str]:
        self._load_builtins()
        return sorted(set(self._entries) | set(self._lazy))

    def __contains__(self, name: object) -> bool:
        if name in self._entries or name in self._lazy:
            return True
        self._load_builtins()
        return name in self._entries


def lazy_attribute(package: str, homes: Mapping[str, str], name: str) -> Any:
    """A package's public ``name``, imported from its module (``homes[name]``) on first use (PEP 562).

    A package face is a ``__getattr__`` calling this, so ``import sparqlqa`` (or ``sparqlqa.kb``) imports
    none of the modules its names live in:

    >>> lazy_attribute("pkg", {"dedent": "textwrap"}, "dedent").__name__
    'dedent'
    >>> lazy_attribute("pkg", {}, "nothing")
    Traceback (most recent call last):
    AttributeError: module 'pkg' has no attribute 'nothing'
    """
    home = homes.get(name)
    if home is None:
        raise AttributeError(f"module {package!r} has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)
