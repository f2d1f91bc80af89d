"""The question's language (issue 37): detection, the override, the answer's record, names in it."""

from __future__ import annotations

from pathlib import Path

import pytest

from sparqlqa.errors import ConfigError
from sparqlqa.language import asked_in, current_language, detect_language, resolve_language

DATA = Path(__file__).resolve().parents[1] / "benchmarks" / "data" / "short_questions_lang.tsv"


def test_detection_on_short_questions() -> None:
    rows = [line.rstrip("\n").split("\t") for line in DATA.read_text(encoding="utf-8").splitlines() if line]
    right = sum(detect_language(text) == lang for lang, text in rows)
    assert len(rows) == 100
    assert right >= 96  # 98 measured (benchmarks/bench_langdetect.py)


@pytest.mark.parametrize(("text", "code"), [
    ("When was Einstein born?", "en"), ("Wie viele Städte gibt es in Deutschland?", "de"),
    ("¿Cuántas ciudades hay en España?", "es"), ("Quelles villes sont en France ?", "fr"), ("42", "en")])
def test_detect(text: str, code: str) -> None:
    assert detect_language(text) == code


def test_given_language_wins_and_is_checked() -> None:
    assert resolve_language("Which cities are in Germany?", "pt-BR").to_dict() == {"code": "pt", "source": "given"}
    assert resolve_language("Welche Städte liegen in Deutschland?", None).to_dict() == {"code": "de",
                                                                                       "source": "detected"}
    with pytest.raises(ConfigError):
        resolve_language("q", "German!")


def test_asked_in_scope() -> None:
    assert current_language() is None
    with asked_in("de"):
        assert current_language() == "de"
    assert current_language() is None
