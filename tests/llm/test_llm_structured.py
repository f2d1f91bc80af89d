"""parse_structured: recovering JSON from LLM replies, and never crashing on garbage."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sparqlqa.errors import ConfigError, LLMParseError
from sparqlqa.llm import FakeLLM, parse_structured

SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "string"}, "score": {"type": "number"}},
    "required": ["answer"],
}


@pytest.mark.parametrize(
    "text",
    [
        '{"answer": "Paris"}',
        '```json\n{"answer": "Paris"}\n```',
        "```\n{\"answer\": \"Paris\"}\n```",
        'Sure! Here it is: {"answer": "Paris"} Hope that helps.',
        '{"answer": "Paris",}',
        '{"answer": "Paris", "score": 0.5,\n}',
        'Thinking {not json} ... final: {"answer": "Paris"}',
        '[1, 2] and then {"answer": "Paris"}',
    ],
)
def test_recovers_json(text: str) -> None:
    assert parse_structured(text, SCHEMA)["answer"] == "Paris"


def test_arrays_at_top_level() -> None:
    assert parse_structured("Ranking: [3, 1, 2].", {"type": "array", "items": {"type": "integer"}}) == [3, 1, 2]


@pytest.mark.parametrize("text", ["", "   ", "no json here", '{"answer": ', "{'answer': 'single quotes'}"])
def test_no_json_is_a_parse_error_with_raw(text: str) -> None:
    with pytest.raises(LLMParseError) as info:
        parse_structured(text, SCHEMA)
    assert info.value.raw == text
    assert info.value.hint


def test_schema_mismatch_says_where() -> None:
    with pytest.raises(LLMParseError) as info:
        parse_structured('{"answer": 42}', SCHEMA)
    assert "answer" in str(info.value) and "not of type 'string'" in str(info.value)
    assert info.value.raw == '{"answer": 42}'


def test_deeply_nested_json_does_not_crash() -> None:
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(LLMParseError):
        parse_structured(text, SCHEMA)


def test_huge_numbers_do_not_crash() -> None:
    with pytest.raises(LLMParseError):
        parse_structured('{"answer": "x", "score": ' + "9" * 10_000 + "}", SCHEMA)


def test_an_invalid_schema_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="invalid JSON schema"):
        parse_structured("{}", {"type": "no-such-type"})


def _json_values() -> st.SearchStrategy[Any]:
    scalars = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20)
    return st.recursive(scalars, lambda children: st.lists(children, max_size=4)
                        | st.dictionaries(st.text(max_size=8), children, max_size=4), max_leaves=12)


GARBAGE = st.one_of(
    st.text(max_size=300),
    st.text(alphabet='{}[]",:`\n abc0123456789.-truefalsn\\', max_size=300),
    _json_values().map(json.dumps),
    st.tuples(st.text(max_size=40), _json_values(), st.text(max_size=40)).map(
        lambda t: f"{t[0]}```json\n{json.dumps(t[1])}\n```{t[2]}"),
)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(GARBAGE)
def test_fuzzed_replies_never_crash(text: str) -> None:
    try:
        value = parse_structured(text, SCHEMA)
    except LLMParseError as exc:
        assert exc.raw == text
        assert str(exc)
    else:
        assert isinstance(value, dict) and isinstance(value["answer"], str)


@settings(max_examples=100, deadline=None)
@given(GARBAGE)
def test_fuzzed_replies_through_an_llm_never_crash(text: str) -> None:
    llm = FakeLLM([text])
    try:
        reply = llm.complete("q", schema=SCHEMA)
    except LLMParseError as exc:
        assert exc.raw == text
    else:
        assert isinstance(reply.data["answer"], str)
        assert reply.call.response_data == reply.data
