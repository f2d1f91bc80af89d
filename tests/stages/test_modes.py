"""Modes and forms are enums defined once (issue 38 item 5a): a member is its string, so JSON, the CLI's choices,
the LLM schemas and the prompts read the words they always did."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import click

from sparqlqa.cli.ask_commands import ask as ask_command
from sparqlqa.cli.eval_commands import eval_ as eval_command
from sparqlqa.stages.answer import AnswerItem
from sparqlqa.stages.forms import FORM_SCHEMA
from sparqlqa.stages.modes import FORMS, ColumnKind, Form, ItemSource, RerankMode, TopicMode, values
from sparqlqa.strategies.text2sparql import prompts

PACKAGE = Path(__file__).resolve().parents[2] / "sparqlqa"


def test_a_member_is_its_string_in_json_and_text() -> None:
    item = AnswerItem.ranked("http://x/a", 0.5, "filtered")
    assert item.source is ItemSource.FILTERED and item.matched
    data = json.loads(json.dumps(item.to_dict()))
    assert data["source"] == "filtered" and f"{item.source}" == "filtered"
    assert AnswerItem("http://x/b", source="model-knowledge").source is ItemSource.MODEL_KNOWLEDGE


def test_the_cli_offers_exactly_the_enums_values() -> None:
    def choices(command: click.Command, name: str) -> list[str]:
        [option] = [p for p in command.params if p.name == name]
        assert isinstance(option.type, click.Choice)
        return list(option.type.choices)

    assert choices(ask_command, "rerank") == ["listwise", "pointwise", "none"] == list(values(RerankMode))
    assert choices(ask_command, "topic") == ["auto", "exclude", "keep"] == list(values(TopicMode))
    assert choices(eval_command, "topic") == list(values(TopicMode))


def test_the_llm_schemas_list_the_forms_as_plain_strings() -> None:
    assert FORM_SCHEMA["form"]["enum"] == ["list", "count", "boolean"] == [f.value for f in FORMS]
    assert prompts.QUERY_SCHEMA["properties"]["form"]["enum"] == ["list", "count", "boolean", "value", "table"]
    assert json.dumps(prompts.QUERY_SCHEMA["properties"]["form"]) == \
        '{"type": "string", "enum": ["list", "count", "boolean", "value", "table"]}'


def test_the_text2sparql_prompt_names_exactly_the_forms() -> None:
    """The prompt's own words stay as written (another order, each with what it means); they name every form."""
    text = prompts.TAIL.split('"form": ', 1)[1].split("}}", 1)[0]
    named = [part.strip().split('"')[1] for part in text.split(" | ")]
    assert sorted(named) == sorted(values(Form)) and len(named) == len(Form)


def test_no_mode_or_form_tuple_is_defined_outside_the_enums() -> None:
    """A tuple of the words of an enum, written out again anywhere in the package, is a second definition."""
    words = {frozenset(values(enum)) for enum in (ColumnKind, Form, ItemSource, RerankMode, TopicMode)}
    words.add(frozenset(f.value for f in FORMS))
    found = []
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            strings = isinstance(node, (ast.Tuple, ast.List)) and node.elts and all(
                isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts)
            if strings and frozenset(e.value for e in node.elts) in words:  # type: ignore[attr-defined]
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert found == []
