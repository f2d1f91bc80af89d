"""Stage 4: LLM rerank of the top ``k`` candidates, listwise (default) or pointwise.

**Listwise** (RankGPT-style): the LLM sees numbered passages and answers with
a permutation ``[3] > [1] > [2]``.  A sliding window of 20 passages moves
from the bottom of the list to the top in strides of 10, so ``k = 20`` is one
call and ``k = 100`` is nine.  Permutations are repaired: repeated and
unknown ids are dropped and missing ones appended in their previous order; a
reply with no ids leaves that window unchanged.

**Pointwise** (STaRK's): one call per candidate returning a score in [0, 1];
final score = LLM score + 0.1 × (n − VSS rank) / n.  A candidate whose reply
cannot be parsed keeps its vector-search position.

Any LLM failure other than one unparseable reply keeps the vector order and
adds a note (``NotInCache`` included: its key is listed in ``pending``).

The prompts say which candidates **matched** (satisfied the knowledge-base query) and show each matched
candidate's evidence path with labels, since a candidate's own text often does not mention what the
question asked through ("films directed by people born in X": the film's text never names X).  Every
candidate's text is cut to a stated per-candidate budget (:data:`PASSAGE_CHARS`), never the list of
candidates.  A listwise reply may put a fill-in (unmatched) candidate above a matched one only with a
reason line, ``reason [n]: …`` (:func:`parse_reasons`); without one the pipeline puts matched answers first.

>>> parse_permutation("[2] > [3] > [2] > [9]", 3)
[1, 2, 0]
>>> parse_score("Score: 0.75")
0.75
"""

from __future__ import annotations

__all__ = ["PASSAGE_CHARS", "Marks", "RerankResult", "cap_passage", "fit_passages", "listwise_prompt",
           "parse_permutation", "parse_reasons", "parse_score", "pointwise_prompt", "rerank", "truncate_words"]

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sparqlqa.errors import ConfigError, LLMError, LLMParseError, NotInCache
from sparqlqa.language import prompt_note
from sparqlqa.stages.modes import RerankMode, values

if TYPE_CHECKING:
    from sparqlqa.llm import LLM, LLMCall

WINDOW = 20
STRIDE = 10
MAX_WORDS = 300
#: characters of passage text allowed in one listwise prompt / one pointwise prompt
LISTWISE_BUDGET = 24_000
POINTWISE_BUDGET = 6_000
SIM_WEIGHT = 0.1
#: characters of text shown per candidate in a listwise window (the budget the prompt states)
PASSAGE_CHARS = LISTWISE_BUDGET // WINDOW
#: evidence paths shown per matched candidate, and their characters in all
EVIDENCE_PATHS = 3
EVIDENCE_CHARS = 400

LISTWISE_SYSTEM = (
    "You are a careful search assistant. You order candidate answers to a question from the most to the "
    "least likely correct answer, judging only from the text given for each candidate."
)
POINTWISE_SYSTEM = (
    "You are a careful search assistant. You judge whether one candidate answers a question, judging "
    "only from the text given for it, and reply with a single number."
)


@dataclass
class RerankResult:
    """The new order of the input (indexes into it) and how it was obtained."""

    mode: str
    order: list[int]
    applied: bool = False
    scores: dict[int, float] = field(default_factory=dict)  # final score by input index (pointwise)
    #: listwise: why a fill-in candidate was put above a matched one, by input index
    reasons: dict[int, str] = field(default_factory=dict)
    llm_scores: dict[int, float] = field(default_factory=dict)
    llm_calls: list[LLMCall] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)
    elapsed_ms: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"mode": self.mode, "order": list(self.order), "applied": self.applied,
                "scores": {str(k): round(v, 6) for k, v in self.scores.items()},
                "llm_scores": {str(k): v for k, v in self.llm_scores.items()},
                "reasons": {str(k): v for k, v in self.reasons.items()},
                "notes": list(self.notes), "pending": list(self.pending),
                "elapsed_ms": round(self.elapsed_ms, 3), "calls": len(self.llm_calls)}


# --- passages --------------------------------------------------------------------------------


def truncate_words(text: str, max_words: int = MAX_WORDS) -> str:
    """The first ``max_words`` words of ``text`` (whitespace squeezed)."""
    words = text.split()
    return " ".join(words) if len(words) <= max_words else " ".join(words[:max_words]) + " …"


def fit_passages(texts: Sequence[str], *, max_words: int = MAX_WORDS, budget_chars: int = LISTWISE_BUDGET,
                 ) -> list[str]:
    """Truncate each passage to ``max_words``, then shrink them evenly to fit ``budget_chars`` in all.

    >>> fit_passages(["a b c d", "e f"], max_words=3, budget_chars=100)
    ['a b c …', 'e f']
    """
    passages = [truncate_words(t, max_words) for t in texts]
    total = sum(len(p) for p in passages)
    if total <= budget_chars or not passages:
        return passages
    cap = max(40, budget_chars // len(passages))
    return [p if len(p) <= cap else p[: cap - 2].rsplit(" ", 1)[0] + " …" for p in passages]


def cap_passage(text: str, chars: int = PASSAGE_CHARS) -> str:
    """``text`` cut at a word boundary to at most ``chars`` characters, ``…`` marking the cut.

    >>> cap_passage("alpha beta gamma", 12)
    'alpha beta …'
    """
    text = " ".join(text.split())
    if len(text) <= chars:
        return text
    cut = text[: max(1, chars - 1)]  # a space at its end means the word before it is whole
    return (cut.rsplit(" ", 1)[0] if " " in cut else cut[: max(1, chars - 2)]) + " …"


def evidence_line(paths: Sequence[str]) -> str:
    """A matched candidate's evidence paths as one line within :data:`EVIDENCE_CHARS`.

    >>> evidence_line(["Alien —directed by→ Ridley Scott"])
    'Alien —directed by→ Ridley Scott'
    """
    shown = "; ".join(paths[:EVIDENCE_PATHS])
    more = f" (+{len(paths) - EVIDENCE_PATHS} more paths)" if len(paths) > EVIDENCE_PATHS else ""
    return cap_passage(shown, EVIDENCE_CHARS - len(more)) + more


# --- parsing -----------------------------------------------------------------------------------


def parse_permutation(text: str, size: int) -> list[int] | None:
    """0-based order from an answer like ``[3] > [1] > [2]``; ``None`` when it names no valid id.

    Bracketed numbers are used when present, else every number.  Out-of-range
    and repeated ids are dropped; missing ids are appended in their prior order.
    """
    numbers = re.findall(r"\[(\d+)\]", text) or re.findall(r"\d+", text)
    seen: list[int] = []
    for number in numbers:
        index = int(number) - 1
        if 0 <= index < size and index not in seen:
            seen.append(index)
    if not seen:
        return None
    return seen + [i for i in range(size) if i not in seen]


def parse_reasons(text: str, size: int) -> dict[int, str]:
    """0-based id → reason, from ``reason [n]: …`` lines of a listwise reply (ids out of range dropped).

    >>> parse_reasons("[2] > [1]\\nreason [2]: its text names the award", 2)
    {1: 'its text names the award'}
    """
    found: dict[int, str] = {}
    for number, why in re.findall(r"(?im)^\s*reason\s*\[(\d+)\]\s*[:\-–—]\s*(.+?)\s*$", text):
        index = int(number) - 1
        if 0 <= index < size and why and index not in found:
            found[index] = why
    return found


def _parse_permutation_only(text: str, size: int) -> list[int] | None:
    """:func:`parse_permutation` of the reply without its reason lines (their ids are no ranking)."""
    kept = "\n".join(line for line in text.splitlines() if not re.match(r"(?i)^\s*reason\b", line))
    return parse_permutation(kept, size)


def parse_score(text: str) -> float | None:
    """The first number in ``text`` if it lies in [0, 1]; else ``None``.

    >>> parse_score("1"), parse_score("7/10"), parse_score("no idea")
    (1.0, None, None)
    """
    found = re.search(r"(?<![\d.])(\d+(?:\.\d+)?|\.\d+)(?![\d.]*/)", text)
    if found is None:
        return None
    value = float(found.group(1))
    return value if 0.0 <= value <= 1.0 else None


# --- prompts ----------------------------------------------------------------------------------


def listwise_prompt(question: str, passages: Sequence[str], matched: Sequence[bool] | None = None,
                    evidence: Sequence[Sequence[str]] | None = None, *, budget: int = PASSAGE_CHARS) -> str:
    """The user message for one listwise window (passages numbered from 1).

    ``matched[i]``: candidate ``i`` satisfied the knowledge-base query (``evidence[i]``: its paths, as
    labels); without ``matched`` the prompt says nothing about matching (vector search only)."""
    note = prompt_note(texts=True)  # cross-lingual (issue 37): nothing for English
    lines = [f"Question: {question}", *([note] if note else []), "",
             f"Here are {len(passages)} candidate answers, each with its text "
             f"(at most {budget} characters per candidate; '…' marks where a text was cut):"]
    for i, passage in enumerate(passages):
        lines.append(f"[{i + 1}] {passage}")
        if matched is not None and matched[i]:
            paths = list(evidence[i]) if evidence is not None and i < len(evidence) else []
            shown = f"; evidence: {evidence_line(paths)}" if paths else ""
            lines.append(f"    MATCHED the knowledge-base query{shown}")
    lines.append("")
    if matched is not None:
        lines += [f"{sum(bool(m) for m in matched)} of the {len(passages)} candidates are marked MATCHED: the "
                  "knowledge-base query found them. The others are only similar in text (fill-in). Prefer "
                  "matched candidates; put an unmatched candidate above a matched one only when its text "
                  "shows it answers the question better, and then add one line per such candidate after the "
                  "order: reason [n]: why.", ""]
    lines.append(f"Order all {len(passages)} candidates from the one that best answers the question to the "
                 "one that answers it worst. Reply with the identifiers, separated by '>', for example "
                 "[2] > [1] > [3]." + (" Explain nothing else." if matched is not None else " Do not explain."))
    return "\n".join(lines)


def pointwise_prompt(question: str, passage: str, matched: bool | None = None,
                     evidence: Sequence[str] = ()) -> str:
    """The user message scoring one candidate (``matched``: whether it satisfied the knowledge-base query,
    ``evidence``: its paths as labels; ``None``: nothing said about matching)."""
    mark = ""
    if matched is not None:
        shown = f"; evidence: {evidence_line(evidence)}" if matched and evidence else ""
        mark = ("It MATCHED the knowledge-base query" + shown if matched else
                "It did not match the knowledge-base query: it is only similar in text (fill-in)") + ".\n\n"
    note = prompt_note(texts=True)
    said = f"Question: {question}\n" + (f"{note}\n" if note else "")
    return (f"{said}\nCandidate answer (its name, description and relations):\n{passage}\n\n"
            f"{mark}How likely is it that this candidate is a correct answer to the question? Reply with one "
            "number between 0 and 1 (0 = certainly not, 1 = certainly), and nothing else.")


# --- the two modes ----------------------------------------------------------------------------


def rerank(question: str, texts: Sequence[str], llm: LLM, *, mode: str = RerankMode.LISTWISE, window: int = WINDOW,
           stride: int = STRIDE, max_words: int = MAX_WORDS, matched: Sequence[bool] | None = None,
           evidence: Sequence[Sequence[str]] | None = None) -> RerankResult:
    """Rerank candidates given by their ``texts`` (in vector order) with ``llm``.

    ``matched`` / ``evidence`` (listwise): which candidates satisfied the query and their evidence paths."""
    if mode not in values(RerankMode):
        raise ConfigError(f"unknown rerank mode {mode!r}", hint=f"use one of: {', '.join(values(RerankMode))}")
    started = time.perf_counter()
    if mode == RerankMode.NONE or len(texts) < 2:
        result = RerankResult(mode, list(range(len(texts))))
    elif mode == RerankMode.LISTWISE:
        marks = Marks(matched, evidence)
        result = _listwise(question, texts, llm, window=window, stride=stride, max_words=max_words, marks=marks)
    else:
        result = _pointwise(question, texts, llm, max_words=max_words, marks=Marks(matched, evidence))
    result.elapsed_ms = (time.perf_counter() - started) * 1000
    return result


def _failure_note(mode: str, exc: LLMError) -> str:
    if isinstance(exc, NotInCache):
        return f"{mode} rerank skipped: LLM answer not cached yet (--llm-cache only); kept the vector order"
    return f"{mode} rerank failed ({type(exc).__name__}: {exc}); kept the vector order"


@dataclass
class Marks:
    """Which candidates matched the query and their evidence paths (both optional)."""

    matched: Sequence[bool] | None = None
    evidence: Sequence[Sequence[str]] | None = None

    def window(self, ids: Sequence[int]) -> tuple[list[bool] | None, list[list[str]] | None]:
        matched = [bool(self.matched[i]) for i in ids] if self.matched is not None else None
        evidence = [list(self.evidence[i]) for i in ids] if self.evidence is not None else None
        return matched, evidence


def _listwise(question: str, texts: Sequence[str], llm: LLM, *, window: int, stride: int,
              max_words: int, marks: Marks | None = None) -> RerankResult:
    size = len(texts)
    result = RerankResult(RerankMode.LISTWISE, list(range(size)))
    order = list(range(size))
    end = size
    while True:
        start = max(0, end - window)
        ids = order[start:end]
        passages = [cap_passage(truncate_words(texts[i], max_words)) for i in ids]
        matched, evidence = (marks or Marks()).window(ids)
        try:
            reply = llm.complete(listwise_prompt(question, passages, matched, evidence), system=LISTWISE_SYSTEM)
        except LLMError as exc:
            result.notes.append(_failure_note(RerankMode.LISTWISE, exc))
            if isinstance(exc, NotInCache):
                result.pending.append(exc.key)
            return result
        result.llm_calls.append(reply.call)
        permutation = _parse_permutation_only(reply.text, len(ids))
        result.reasons.update({ids[i]: why for i, why in parse_reasons(reply.text, len(ids)).items()})
        if permutation is None:
            result.notes.append(f"listwise window {start + 1}-{end}: no candidate ids in the reply "
                                f"{reply.text[:60]!r}; window kept in vector order")
        else:
            order[start:end] = [ids[i] for i in permutation]
        if start == 0:
            break
        end -= stride
    result.order, result.applied = order, True
    return result


def _pointwise(question: str, texts: Sequence[str], llm: LLM, *, max_words: int,
               marks: Marks | None = None) -> RerankResult:
    size = len(texts)
    result = RerankResult(RerankMode.POINTWISE, list(range(size)))
    failed: list[int] = []
    for rank, text in enumerate(texts):
        passage = fit_passages([text], max_words=max_words, budget_chars=POINTWISE_BUDGET)[0]
        matched, evidence = (marks or Marks()).window([rank])
        prompt = pointwise_prompt(question, passage, matched[0] if matched else None, evidence[0] if evidence else ())
        try:
            reply = llm.complete(prompt, system=POINTWISE_SYSTEM)
        except NotInCache as exc:
            result.pending.append(exc.key)  # keep going: every missing prompt gets recorded
            continue
        except LLMParseError:
            failed.append(rank)
            continue
        except LLMError as exc:
            result.notes.append(_failure_note(RerankMode.POINTWISE, exc))
            return result
        result.llm_calls.append(reply.call)
        score = parse_score(reply.text)
        if score is None:
            failed.append(rank)
        else:
            result.llm_scores[rank] = score
            result.scores[rank] = score + SIM_WEIGHT * (size - rank) / size
    if result.pending:
        result.notes.append(f"pointwise rerank skipped: {len(result.pending)} LLM answer(s) not cached yet "
                            "(--llm-cache only); kept the vector order")
        result.scores.clear()
        return result
    result.order, result.applied = _pinned_order(size, result.scores, failed), True
    if failed:
        result.notes.append(f"pointwise rerank: {len(failed)} of {size} replies had no score in [0, 1]; "
                            "those candidates kept their vector positions")
    return result


def _pinned_order(size: int, scores: dict[int, float], failed: Sequence[int]) -> list[int]:
    """Scored candidates sorted by score (ties: vector order) in the slots failed ones do not hold."""
    scored = iter(sorted(scores, key=lambda i: (-scores[i], i)))
    pinned = set(failed)
    return [i if i in pinned else next(scored) for i in range(size)]
