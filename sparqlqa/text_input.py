"""Text from outside, checked once at the edge: a clean ``str`` or :class:`~sparqlqa.errors.InvalidText`.

Every front end (command-line arguments, stdin and files, HTTP JSON bodies, MCP tool arguments)
passes the questions, queries and names it receives through :func:`clean_text` before anything
else sees them, so no stage, store or embedder ever gets text it cannot handle (the ONNX
tokenizer raises ``TypeError`` on a lone surrogate).  The checks, in order:

* bytes must be UTF-8 (the error gives the byte offset);
* a leading byte-order mark is dropped;
* the text may not be longer than its kind's limit (checked before scanning, so a megabyte
  costs nothing);
* no lone surrogate (``"\\ud800"`` in JSON, or an undecodable byte on a command line, which
  Python turns into U+DC80..U+DCFF), no NUL, no control character (C0, DEL, C1) except tab,
  newline and carriage return where the kind allows them;
* the result is NFC-normalised, so the same question typed two ways is the same text.

>>> clean_text("\\ufeffWho directed Alien?", kind=PROSE, field="question")
'Who directed Alien?'
>>> clean_text("Cafe\\u0301", kind=PROSE, field="question") == "Caf\\u00e9"
True
>>> clean_text("a\\x00b", kind=PROSE, field="question")
Traceback (most recent call last):
...
sparqlqa.errors.InvalidText: question holds a NUL character (U+0000) at character 2
"""

from __future__ import annotations

__all__ = ["CODE", "DATASET", "NAME", "PROSE", "TextKind", "clean_json", "clean_text", "decode_utf8"]

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from typing import Any

from sparqlqa.errors import InvalidText

#: the byte-order mark some editors put first in a file
BOM = "\ufeff"
#: control characters but tab, newline and carriage return (C0, DEL, C1)
_CONTROLS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


@dataclass(frozen=True)
class TextKind:
    """What a piece of text is: its size limit (characters) and the control characters it may hold."""

    name: str
    #: most characters accepted
    limit: int
    #: control characters allowed (tab, newline, carriage return at most)
    controls: str = ""
    #: what to do when the text is too long
    shorten: str = "shorten it"
    #: control characters (tab, newline, CR kept) become spaces instead of an error; surrogates stay errors
    blank_controls: bool = False
    pattern: re.Pattern[str] = dataclass_field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        banned = "".join(f"\\x{code:02x}" for code in range(0x20) if chr(code) not in self.controls)
        object.__setattr__(self, "pattern", re.compile(f"[{banned}\\x7f-\\x9f\\ud800-\\udfff]"))


#: natural-language text: questions (tab and line breaks allowed)
PROSE = TextKind("prose", 16_384, "\t\n\r", shorten="ask a shorter question (at most 16,384 characters)")
#: code: SPARQL queries (tab and line breaks allowed)
CODE = TextKind("code", 262_144, "\t\n\r", shorten="send a shorter query (at most 262,144 characters)")
#: questions read from a benchmark's files: real ones hold stray control characters (STaRK-MAG has BEL,
#: backspace and form feed in its questions), which become spaces rather than fail a whole evaluation
DATASET = TextKind("dataset", PROSE.limit, PROSE.controls, shorten=PROSE.shorten, blank_controls=True)
#: names: KB names, strategy and LLM names, JSON keys (one line, no control characters at all)
NAME = TextKind("name", 256, shorten="use a name of at most 256 characters")


def clean_text(value: Any, *, kind: TextKind, field: str) -> str:
    """``value`` (``str`` or UTF-8 ``bytes``) as clean NFC text, or :class:`InvalidText` naming ``field``,
    the position of the first bad character and what to do."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = _decode(bytes(value), kind, field)
    if not isinstance(value, str):
        raise InvalidText(field, f"must be text, not {_json_type(value)}", hint=f"send {field} as a string")
    text = value[1:] if value.startswith(BOM) else value
    _check_size(text, kind, field)
    bad = kind.pattern.search(text)
    if bad is not None and kind.blank_controls:
        text = _CONTROLS.sub(" ", text)
        bad = kind.pattern.search(text)
    if bad is not None:
        raise _bad_character(text, bad.start(), kind, field)
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text)
    _check_size(text, kind, field)
    return text


def clean_json(value: Any, kinds: Mapping[str, TextKind], *, field: str = "body", default: TextKind = PROSE) -> Any:
    """A parsed JSON document with every string (keys included) passed through :func:`clean_text`.

    A top-level object's members get the kind ``kinds`` names for their key (``default`` otherwise);
    anything nested gets ``default``.  Field names in errors read ``body.question``, ``body.items[2]``.
    """
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            name = clean_text(key, kind=NAME, field=f"a key of {field}")
            out[name] = _clean_member(item, kinds.get(name, default), f"{field}.{name}", default)
        return out
    return _clean_member(value, default, field, default)


def _clean_member(value: Any, kind: TextKind, field: str, default: TextKind) -> Any:
    if isinstance(value, str):
        return clean_text(value, kind=kind, field=field)
    if isinstance(value, list):
        return [_clean_member(item, default, f"{field}[{i}]", default) for i, item in enumerate(value)]
    if isinstance(value, dict):
        return clean_json(value, {}, field=field, default=default)
    return value


def _decode(data: bytes, kind: TextKind, field: str) -> str:
    if len(data) > 4 * kind.limit:  # more bytes than the longest allowed text can take
        raise InvalidText(field, f"is {len(data):,} bytes long; at most {kind.limit:,} characters are accepted",
                          hint=kind.shorten)
    return decode_utf8(data, field)


def decode_utf8(data: bytes, field: str) -> str:
    """``data`` decoded as UTF-8, or :class:`InvalidText` giving the first bad byte and its offset."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidText(field, f"is not valid UTF-8: byte 0x{data[exc.start]:02X} at byte {exc.start + 1:,} "
                          f"({exc.reason})", position=exc.start + 1,
                          hint="save or send the text as UTF-8") from None


def _check_size(text: str, kind: TextKind, field: str) -> None:
    if len(text) > kind.limit:
        raise InvalidText(field, f"is {len(text):,} characters long; at most {kind.limit:,} are accepted",
                          hint=kind.shorten)


def _bad_character(text: str, index: int, kind: TextKind, field: str) -> InvalidText:
    """The error for the bad character at ``index`` (0-based) of ``text``."""
    char = text[index]
    code = ord(char)
    where = f" at character {index + 1:,}"
    if "\n" in text:
        line = text.count("\n", 0, index) + 1
        where += f" (line {line}, column {index - (text.rfind(chr(10), 0, index) + 1) + 1})"
    if 0xD800 <= code <= 0xDFFF:
        what = f"a lone surrogate (U+{code:04X}){where}"
        hint = "send valid Unicode: a JSON \\uD8xx escape must be followed by its \\uDCxx partner"
        if 0xDC80 <= code <= 0xDCFF:  # how Python keeps an undecodable byte of a command line or file name
            what += f", which is how an invalid UTF-8 byte 0x{code - 0xDC00:02X} reads in Python"
            hint = "pass the text as UTF-8 (check the terminal's or the file's encoding), or send valid Unicode"
        return InvalidText(field, f"holds {what}", position=index + 1, hint=hint)
    what = "a NUL character (U+0000)" if code == 0 else f"a control character (U+{code:04X})"
    allowed = {"\t": "tab", "\n": "newline", "\r": "carriage return"}
    kept = [allowed[c] for c in kind.controls]
    hint = ("remove it: " + (f"only {', '.join(kept)} are allowed among control characters" if kept
                             else "a name holds no control characters"))
    return InvalidText(field, f"holds {what}{where}", position=index + 1, hint=hint)


def _json_type(value: Any) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", list: "a list", dict: "an object"}
    return "null" if value is None else names.get(type(value), type(value).__name__)
