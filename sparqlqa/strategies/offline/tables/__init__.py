"""The offline strategy's reading of a graph mapped from tables (issue 35).

``model`` (classes, columns, links, values), ``mentions`` (what a question names), ``reading`` (cues, the
focus, the columns meant), ``forms`` (conditions and the answer form), ``query`` (SPARQL from terms),
``answer`` (the answer through ``build_answer``; the honest note when no reading holds).
"""

from __future__ import annotations

__all__: list[str] = []  # the package has no names of its own: its modules are its API
