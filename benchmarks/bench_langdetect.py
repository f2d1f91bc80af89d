"""Language detection on short questions (issue 37): accuracy, import time and memory of the candidates.

Reads ``benchmarks/data/short_questions_lang.tsv`` (100 short questions, written for this benchmark: 12 each
in en/de/fr/es/it/pt/nl, 4 each in pl/sv/tr/ru) and, for each detector, in a fresh process: the import
time, the first detection (models load lazily), the resident memory after it, and the accuracy (ISO 639-1).

Usage::

    .venv/bin/python benchmarks/bench_langdetect.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "short_questions_lang.tsv"

PROBE = r'''
import json, resource, sys, time
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[2], encoding="utf-8") if line.strip()]
SET = sys.argv[3].split(",")
started = time.perf_counter()
kind = sys.argv[1]
if kind == "py3langid":
    import py3langid
    imported = time.perf_counter()
    detect = lambda text: py3langid.classify(text)[0]
elif kind == "lingua":
    from lingua import LanguageDetectorBuilder
    imported = time.perf_counter()
    detector = LanguageDetectorBuilder.from_all_languages().with_preloaded_language_models().build()
    def detect(text):
        found = detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found else "?"
elif kind == "lingua-lazy":
    from lingua import LanguageDetectorBuilder
    imported = time.perf_counter()
    detector = LanguageDetectorBuilder.from_all_languages().build()
    def detect(text):
        found = detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found else "?"
elif kind == "py3langid-set":
    from py3langid.langid import LanguageIdentifier, MODEL_FILE
    imported = time.perf_counter()
    ident = LanguageIdentifier.from_model_file(MODEL_FILE)
    ident.set_languages([{"nb": "no"}.get(c, c) for c in SET])
    detect = lambda text: {"no": "nb"}.get(ident.classify(text)[0], ident.classify(text)[0])
elif kind in ("lingua-set", "lingua-set-low"):
    from lingua import IsoCode639_1, LanguageDetectorBuilder
    imported = time.perf_counter()
    builder = LanguageDetectorBuilder.from_iso_codes_639_1(*[getattr(IsoCode639_1, c.upper()) for c in SET])
    if kind == "lingua-set-low":
        builder = builder.with_low_accuracy_mode()
    detector = builder.build()
    def detect(text):
        found = detector.detect_language_of(text)
        return found.iso_code_639_1.name.lower() if found else "?"
first = None
right, wrong = 0, []
t0 = time.perf_counter()
for lang, text in rows:
    got = detect(text)
    if first is None:
        first = time.perf_counter() - started
    if got == lang:
        right += 1
    else:
        wrong.append(f"{lang}->{got}: {text}")
per = (time.perf_counter() - t0) / len(rows)
by = {}
for lang, text in rows:
    by.setdefault(lang, [0, 0])[1] += 1
for item in wrong:
    by[item.split("->")[0]][0] += 1
print(json.dumps({"detector": kind, "import_s": round(imported - started, 3), "first_s": round(first, 3),
                  "per_question_ms": round(per * 1000, 2),
                  "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
                  "right": right, "total": len(rows),
                  "wrong_by_lang": {k: v[0] for k, v in by.items() if v[0]}, "wrong": wrong}, ensure_ascii=False))
'''


#: the languages the restricted variants choose among: the major languages of Wikidata labels and of the
#: KBs people build (Europe's large languages, the big Asian ones, Arabic, Hindi, Swahili...)
LANGUAGES = "en,de,fr,es,it,pt,nl,pl,sv,da,nb,fi,cs,ro,hu,el,tr,ru,uk,ar,he,hi,zh,ja,ko,id,vi,sw,ca"


def main() -> None:
    for kind in sys.argv[1:] or ["py3langid", "py3langid-set", "lingua-set", "lingua-set-low", "lingua-lazy"]:
        out = subprocess.run([sys.executable, "-c", PROBE, kind, str(DATA), LANGUAGES], capture_output=True, text=True,
                             check=False)
        print(out.stdout.strip() or out.stderr.strip()[-500:])


if __name__ == "__main__":
    main()
