"""Bundled ontologies: sparqlqa's core vocabulary and one file per STaRK dataset.

The files live in the repository's ``ontologies/`` folder (and are shipped in
the package as ``sparqlqa/data/ontologies`` when built as a wheel).
"""

from __future__ import annotations

from pathlib import Path

from sparqlqa.errors import ConfigError

CORE = "sparqlqa"


def ontology_dirs() -> list[Path]:
    here = Path(__file__).resolve().parent
    return [here.parent / "ontologies", here / "data" / "ontologies"]


def ontology_path(name: str) -> Path:
    """The Turtle file of the bundled ontology ``name`` (e.g. ``sparqlqa``, ``stark-prime``)."""
    for folder in ontology_dirs():
        path = folder / f"{name}.ttl"
        if path.is_file():
            return path
    raise ConfigError(f"no bundled ontology named {name!r}", hint=f"available: {', '.join(bundled())}")


def bundled() -> list[str]:
    names: set[str] = set()
    for folder in ontology_dirs():
        if folder.is_dir():
            names.update(p.stem for p in folder.glob("*.ttl"))
    return sorted(names)
