"""The offline strategy's reading of a graph mapped from tables (issue 35).

``model`` (classes, columns, links, values), ``mentions`` (what a question names), ``reading`` (cues, the
focus, the columns meant), ``forms`` (conditions and the answer form), ``query`` (SPARQL from terms),
``answer`` (the answer through ``build_answer``; the honest note when no reading holds).
"""
