"""``clean_text``: any input gives clean NFC text or an ``InvalidText`` that says where and what to do."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sparqlqa.errors import ConfigError, InvalidText
from sparqlqa.text_input import CODE, DATASET, NAME, PROSE, TextKind, clean_json, clean_text

KINDS = [PROSE, CODE, NAME]


def _bad(char: str, kind: TextKind) -> bool:
    code = ord(char)
    return (code < 0x20 and char not in kind.controls) or 0x7F <= code <= 0x9F or 0xD800 <= code <= 0xDFFF


#: characters no kind accepts: NUL, C0 controls but tab/newline/CR, DEL, C1, surrogates
BANNED = st.one_of(st.sampled_from("\x00\x01\x08\x0b\x0c\x1b\x1f\x7f\x85\x9f"),
                   st.integers(0xD800, 0xDFFF).map(chr))
#: text every kind accepts (no control character at all, no surrogate), not starting with a BOM
FINE = st.text(st.characters(blacklist_categories=("Cc", "Cs")), max_size=60).filter(
    lambda t: not t.startswith("\ufeff"))


@given(FINE, st.sampled_from(KINDS))
def test_fine_text_comes_back_nfc(text: str, kind: TextKind) -> None:
    assert clean_text(text, kind=kind, field="f") == unicodedata.normalize("NFC", text)


@given(st.text(max_size=80), st.sampled_from(KINDS))
def test_any_text_is_clean_or_refused_and_cleaning_is_idempotent(text: str, kind: TextKind) -> None:
    try:
        cleaned = clean_text(text, kind=kind, field="f")
    except InvalidText as exc:
        assert exc.field == "f" and exc.hint
        assert exc.position is not None and _bad(text[1:][exc.position - 1] if text.startswith("\ufeff")
                                                 else text[exc.position - 1], kind)
        return
    assert clean_text(cleaned, kind=kind, field="f") == cleaned
    assert not any(_bad(c, kind) for c in cleaned)


@given(FINE, BANNED, st.text(max_size=20), st.sampled_from(KINDS))
def test_the_first_bad_character_is_located(prefix: str, bad: str, suffix: str, kind: TextKind) -> None:
    text = prefix + bad + suffix
    with pytest.raises(InvalidText) as caught:
        clean_text(text, kind=kind, field="the question")
    assert caught.value.position == len(prefix) + 1
    assert f"at character {len(prefix) + 1:,}" in caught.value.message
    assert caught.value.message.startswith("the question holds ")


@given(st.binary(max_size=80), st.sampled_from(KINDS))
def test_any_bytes_are_clean_text_or_invalid_text(data: bytes, kind: TextKind) -> None:
    try:
        assert isinstance(clean_text(data, kind=kind, field="f"), str)
    except InvalidText:
        pass


@pytest.mark.parametrize(("data", "message"), [
    (b"ok \xff", "f is not valid UTF-8: byte 0xFF at byte 4"),
    (b"\xc3(", "byte 0xC3 at byte 1"),
    (b"\xed\xa0\x80", "byte 0xED at byte 1"),  # a surrogate encoded in bytes is not UTF-8 either
])
def test_invalid_utf8_bytes_give_the_byte_offset(data: bytes, message: str) -> None:
    with pytest.raises(InvalidText, match=message) as caught:
        clean_text(data, kind=PROSE, field="f")
    assert "UTF-8" in (caught.value.hint or "")


def test_a_command_line_byte_is_named_as_such() -> None:
    """Python turns an undecodable byte of argv into U+DC80..U+DCFF (surrogateescape)."""
    with pytest.raises(InvalidText, match="lone surrogate \\(U\\+DCFF\\) at character 3, which is how an invalid "
                                          "UTF-8 byte 0xFF reads"):
        clean_text("ab\udcffc", kind=NAME, field="NAME")


@pytest.mark.parametrize(("kind", "allowed"), [(PROSE, True), (CODE, True), (NAME, False)])
@pytest.mark.parametrize("char", ["\t", "\n", "\r"])
def test_tab_and_line_breaks_only_where_the_kind_allows(kind: TextKind, allowed: bool, char: str) -> None:
    text = f"a{char}b"
    if allowed:
        assert clean_text(text, kind=kind, field="f") == text
    else:
        with pytest.raises(InvalidText, match=f"f holds a control character \\(U\\+{ord(char):04X}\\)") as caught:
            clean_text(text, kind=kind, field="f")
        assert caught.value.hint == "remove it: a name holds no control characters"


def test_positions_in_multi_line_text_give_line_and_column() -> None:
    with pytest.raises(InvalidText, match=r"at character 13 \(line 2, column 4\)"):
        clean_text("SELECT *\n{ ?\x00s }", kind=CODE, field="the query")


@pytest.mark.parametrize("kind", KINDS)
def test_size_limits(kind: TextKind) -> None:
    assert len(clean_text("x" * kind.limit, kind=kind, field="f")) == kind.limit
    with pytest.raises(InvalidText, match=f"is {kind.limit + 1:,} characters long; at most {kind.limit:,}"):
        clean_text("x" * (kind.limit + 1), kind=kind, field="f")
    with pytest.raises(InvalidText, match="bytes long"):  # bytes are refused before they are decoded
        clean_text(b"x" * (4 * kind.limit + 1), kind=kind, field="f")


def test_a_megabyte_is_refused_by_its_size() -> None:
    with pytest.raises(InvalidText, match="is 1,048,576 characters long"):
        clean_text("\x00" * 1_048_576, kind=PROSE, field="f")


def test_bom_is_dropped_only_at_the_start_and_text_is_nfc() -> None:
    assert clean_text("\ufeffe\u0301 \ufeff", kind=PROSE, field="f") == "\u00e9 \ufeff"
    assert clean_text(b"\xef\xbb\xbfSELECT", kind=CODE, field="f") == "SELECT"


@pytest.mark.parametrize(("value", "what"), [(None, "null"), (3, "a number"), (["a"], "a list"), ({}, "an object"),
                                             (True, "a boolean")])
def test_non_text_is_refused(value: Any, what: str) -> None:
    with pytest.raises(InvalidText, match=f"kb must be text, not {what}"):
        clean_text(value, kind=NAME, field="kb")


def test_invalid_text_is_a_usage_error_with_a_hint() -> None:
    with pytest.raises(InvalidText) as caught:
        clean_text("a\x1bb", kind=PROSE, field="the question")
    assert isinstance(caught.value, ConfigError) and caught.value.exit_code == 2
    assert "hint: remove it" in caught.value.full_message()


def test_clean_json_checks_every_string_with_the_field_kind() -> None:
    body = {"kb": "movies", "question": "Cafe\u0301?", "k": 3, "extra": [{"deep": "ok"}, None]}
    assert clean_json(body, {"kb": NAME, "question": PROSE}) == {**body, "question": "Caf\u00e9?"}
    with pytest.raises(InvalidText, match=r"body\.extra\[0\]\.deep holds a lone surrogate"):
        clean_json({"extra": [{"deep": "\ud800"}]}, {})
    with pytest.raises(InvalidText, match="a key of body holds a NUL"):
        clean_json({"\x00": 1}, {})
    with pytest.raises(InvalidText, match=r"body\.kb holds a control character"):
        clean_json({"kb": "a\tb"}, {"kb": NAME})
    assert clean_json(["a", 1], {}) == ["a", 1]


def test_dataset_questions_have_stray_controls_blanked_but_not_surrogates() -> None:
    assert clean_text("a\x07b\x08c\x0cd\x00e\tf\n", kind=DATASET, field="q") == "a b c d e\tf\n"
    with pytest.raises(InvalidText, match="q holds a lone surrogate"):
        clean_text("a\x07\ud800", kind=DATASET, field="q")


def test_the_python_api_is_an_edge_too() -> None:
    """``sparqlqa.ask`` refuses bad text before it opens a KB or embeds anything."""
    import sparqlqa
    from sparqlqa.errors import InvalidText

    with pytest.raises(InvalidText, match="lone surrogate"):
        sparqlqa.ask("movies", "who directed \ud800")
    with pytest.raises(InvalidText, match="kb"):
        sparqlqa.ask("mov\x00ies", "who directed Alien")
