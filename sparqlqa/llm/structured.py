"""Turning an LLM's reply into a JSON object that matches a JSON schema.

Models wrap JSON in prose and code fences, leave trailing commas and stop
mid-object.  :func:`parse_structured` recovers what can be recovered and
otherwise raises :class:`~sparqlqa.errors.LLMParseError` carrying the raw text.

>>> parse_structured('Sure! ```json\\n{"answer": 42,}\\n``` Hope that helps.',
...                  {"type": "object", "properties": {"answer": {"type": "integer"}}})
{'answer': 42}
"""

from __future__ import annotations

__all__ = ["parse_structured", "validate_structured"]

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

from sparqlqa.errors import ConfigError, LLMParseError

#: how many opening brackets are tried as the start of a JSON value
_MAX_START_POSITIONS = 64
#: replies longer than this are not scanned bracket by bracket
_MAX_SCAN_CHARS = 200_000
_FENCE = re.compile(r"```[ \t]*(?:json|JSON|javascript|js)?[ \t]*\n?(.*?)```", re.DOTALL)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")
_RAW_PREVIEW = 200
_HINT = "ask for JSON only, raise max_tokens if the reply was cut off, or use a stronger model"


@lru_cache(maxsize=256)
def _validator_for(schema_json: str) -> Any:
    """A jsonschema validator for a schema (given as canonical JSON so it is hashable)."""
    import jsonschema

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ConfigError(f"invalid JSON schema for an LLM answer: {exc.message}") from None
    return cls(schema)


def _schema_errors(value: Any, schema: dict[str, Any]) -> list[str]:
    """Human-readable reasons why ``value`` does not match ``schema`` (empty if it does)."""
    validator = _validator_for(json.dumps(schema, sort_keys=True))
    errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    messages = []
    for error in errors[:5]:
        where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
        messages.append(f"at {where}: {_shorten(error.message, 160)}")
    return messages


def validate_structured(value: Any, schema: dict[str, Any], *, raw: str) -> Any:
    """Return ``value`` if it matches ``schema``; else :class:`LLMParseError` with ``raw``."""
    try:
        errors = _schema_errors(value, schema)
    except RecursionError:
        errors = ["the value is nested too deeply to check"]
    if errors:
        raise LLMParseError(
            "LLM answer does not match the expected JSON schema: " + "; ".join(errors),
            raw=raw,
            hint=_HINT,
        )
    return value


def parse_structured(text: str, schema: dict[str, Any]) -> Any:
    """Extract the first JSON value in ``text`` that matches ``schema``.

    Tolerates code fences, prose before and after the JSON, and trailing
    commas.  Raises :class:`LLMParseError` (``raw=text``) saying what was wrong.
    """
    if not isinstance(text, str) or not text.strip():
        raise LLMParseError("LLM answer is empty; expected JSON", raw=str(text or ""), hint=_HINT)
    first_mismatch: list[str] | None = None
    for value in _json_candidates(text):
        try:
            errors = _schema_errors(value, schema)
        except RecursionError:
            continue
        if not errors:
            return value
        if first_mismatch is None:
            first_mismatch = errors
    if first_mismatch is not None:
        message = "LLM answer does not match the expected JSON schema: " + "; ".join(first_mismatch)
    else:
        message = f"LLM answer contains no JSON value: {_shorten(text, _RAW_PREVIEW)!r}"
    raise LLMParseError(message, raw=text, hint=_HINT)


def _json_candidates(text: str) -> Iterator[Any]:
    """JSON values found in ``text``, most likely first (whole text, fences, embedded)."""
    seen: set[str] = set()
    chunks = [text.strip(), *(m.group(1).strip() for m in _FENCE.finditer(text))]
    for chunk in chunks:
        for variant in (chunk, _TRAILING_COMMA.sub(r"\1", chunk)):
            if variant in seen:
                continue
            seen.add(variant)
            ok, value = _loads(variant)
            if ok:
                yield value
    yield from _embedded_values(text)
    repaired = _TRAILING_COMMA.sub(r"\1", text)
    if repaired != text:
        yield from _embedded_values(repaired)


def _embedded_values(text: str) -> Iterator[Any]:
    """Values decoded starting at the first few ``{`` / ``[`` in ``text``."""
    decoder = json.JSONDecoder()
    scanned = text[:_MAX_SCAN_CHARS]
    starts = [i for i, ch in enumerate(scanned) if ch in "{["][:_MAX_START_POSITIONS]
    for start in starts:
        try:
            value, _end = decoder.raw_decode(scanned, start)
        except (ValueError, RecursionError):
            continue
        yield value


def _loads(text: str) -> tuple[bool, Any]:
    try:
        return True, json.loads(text)
    except (ValueError, RecursionError):
        return False, None


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
