"""Fault suite, hostile text on screen: labels, values and questions holding rich markup (``[/bold]``),
terminal escape sequences (colour, window title) and line breaks, shown by every human-facing output.

Each command must exit cleanly, print the text literally (markup is not interpreted, a closing tag
with nothing to close is no crash), and let no control character reach the terminal: ESC, BEL and
line breaks inside a cell are replaced (ESC → ␛), so data cannot recolour, move or retitle it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from faults.helpers import assert_clean_failure, cli

KB_TTL = r"""
@prefix ex: <http://example.org/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:anna rdfs:label "Anna" ; ex:rel ex:b ; ex:code "\u001b]0;pwned\u0007 [/] 42" .
ex:b rdfs:label "[/bold] closing" ; ex:rel ex:c .
ex:c rdfs:label "Line\nbreak \u001b[31mred [link=https://evil.example]click[/link]" .
ex:rel rdfs:label "rel [/red]" .
"""

COMMANDS = [
    ("ask", "hostile", "what is rel of Anna", "--strategy", "offline"),
    ("ask", "hostile", "what is rel of Anna", "--strategy", "offline", "--explain"),
    ("ask", "hostile", "what is rel of Anna", "--strategy", "offline", "--plain"),
    ("ask", "hostile", "what is the code of Anna", "--strategy", "offline"),
    ("ask", "hostile", "[/bold] [link=https://evil.example] who is Anna [red]?", "--strategy", "offline"),
    ("schema", "hostile"),
    ("schema", "hostile", "--plain"),
    ("sparql", "hostile", "SELECT ?s ?l WHERE { ?s ?p ?l FILTER(isLiteral(?l)) }"),
]


@pytest.fixture
def hostile_kb(tmp_path: Path) -> None:
    source = tmp_path / "hostile.ttl"
    source.write_text(KB_TTL, "utf-8")
    code, output = cli("ingest", str(source), "--kb", "hostile")
    assert code == 0, output


@pytest.mark.parametrize("args", COMMANDS, ids=lambda args: " ".join(a[:20] for a in args[2:] or args))
def test_hostile_text_is_shown_literally_and_harmlessly(hostile_kb: None, args: tuple[str, ...]) -> None:
    code, output = cli(*args)
    question = args[2] if args[0] == "ask" else ""
    assert code in (0, 3), output  # 3: a question naming no node (README, exit codes)
    assert_clean_failure(code, output, code)
    assert "\x1b" not in output and "\x07" not in output, output
    if "rel of Anna" in question:
        assert "[/bold] closing" in output  # the label as it is: neither eaten as markup nor a crash


def test_a_question_with_terminal_escapes_is_refused_without_echoing_them(hostile_kb: None) -> None:
    code, output = cli("ask", "hostile", "[/bold] \x1b[2J\x1b]0;title\x07 who is Anna [red]?", "--strategy", "offline")
    assert_clean_failure(code, output, 2, "the question (QUESTION) holds a control character (U+001B) at character 9")
    assert "\x1b" not in output and "\x07" not in output, output


def test_the_schema_shows_a_relation_label_with_markup(hostile_kb: None) -> None:
    code, output = cli("schema", "hostile")
    assert code == 0 and "rel [/red]" in output, output
