"""text2sparql: the LLM writes the whole SPARQL query from the KB's schema (the peer method, made robust).

``prompts`` (the query and repair prompts), ``query`` (read by real parsers, guards, rewriting by terms),
``grounding`` (names and guessed IRIs linked to KB nodes), ``strategy`` (registered as ``text2sparql``).
"""

from __future__ import annotations

__all__: list[str] = []  # the package has no names of its own: its modules are its API
