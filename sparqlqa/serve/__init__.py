"""Served mode: one warm process answering over HTTP (``sparqlqa serve``) or MCP (``sparqlqa mcp``).

:mod:`sparqlqa.serve.service` holds what both front ends share (validated requests, KBs
opened and warmed once, an LLM object per allowed spec) and imports nothing heavy;
:mod:`sparqlqa.serve.app` is the Starlette app, :mod:`sparqlqa.serve.mcp_server` the MCP
server.  Their third-party packages come with the ``serve`` extra; :func:`require` turns a
missing one into our :class:`~sparqlqa.errors.MissingExtraError`.
"""

from __future__ import annotations

__all__ = ["require"]

import importlib
from types import ModuleType

from sparqlqa.errors import MissingExtraError

INSTALL = "pip install 'sparqlqa[serve]'"


def require(module: str, feature: str) -> ModuleType:
    """Import ``module`` (a package of the ``serve`` extra) or say how to install it.

    >>> require("json", "a test").__name__
    'json'
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(module.split(".")[0], feature, INSTALL) from exc
