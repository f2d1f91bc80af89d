"""sparqlqa: answer natural-language questions over RDF knowledge graphs with text."""

from __future__ import annotations

__version__ = "0.1.0"
