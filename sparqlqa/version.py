"""The installed sparqlqa version (a module of its own, so any layer can read it without importing the package root)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
