"""The registries: a backend states its name once, in its ``register`` line, and the registry gives it."""

from __future__ import annotations

from typing import Any

import pytest

from sparqlqa.embed.embedders import embedders
from sparqlqa.evaluation.datasets import datasets
from sparqlqa.ingest.base import ingest_formats
from sparqlqa.kb.store import stores
from sparqlqa.llm.base import llms
from sparqlqa.registry import Registry
from sparqlqa.strategies.base import strategies

#: each registry and the class attribute its backends are named in
NAMED: dict[str, tuple[Registry[Any], str]] = {
    "llms": (llms, "backend_name"), "datasets": (datasets, "name"), "stores": (stores, "kind"),
    "strategies": (strategies, "name"), "ingest_formats": (ingest_formats, "name"), "embedders": (embedders, "name"),
}


@pytest.mark.parametrize("registry", sorted(NAMED))
def test_every_builtin_is_named_as_registered(registry: str) -> None:
    kinds, attribute = NAMED[registry]
    names = [name for name in kinds.names() if name in kinds]  # an optional strategy not installed drops out
    assert names
    assert {name: getattr(kinds.get(name), attribute) for name in names} == {name: name for name in names}


def test_the_registry_gives_a_class_its_name_unless_it_has_its_own() -> None:
    shapes: Registry[type[Any]] = Registry("shape", name_attribute="name")

    class Shape:
        name = ""

    @shapes.register("square")
    class Square(Shape):
        pass

    @shapes.register("box")
    class Box(Square):
        pass

    @shapes.register("round")
    class Circle:
        name = "circle"  # stated by the class itself: kept

    assert (Shape.name, Square.name, Box.name, Circle.name) == ("", "square", "box", "circle")
    plain: Registry[type[Any]] = Registry("plain")
    plain.add("square", type("Plain", (), {}))
    assert not hasattr(plain.get("square"), "name")
