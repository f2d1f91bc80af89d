"""Stage 1: a question → triplet patterns ``(head, relation, tail)``, a target variable, requirements.

The LLM sees the KB's node types and relations (trimmed to a character budget)
and answers with JSON (:data:`TRIPLETS_SCHEMA`).  Users may also paste the
paper's arrow format, which :func:`parse_arrow_triplets` reads::

    >>> t = parse_arrow_triplets("drug 'Alzheimer's cure' -> indication -> disease |?1|")
    >>> t.triplets[0].head
    Term(kind='constant', text="Alzheimer's cure", type='drug')
    >>> t.triplets[0].tail, t.target
    (Term(kind='variable', text='?1', type='disease'), '?1')

Garbage never raises: it yields a :class:`Triplets` with no triplets and a note,
and the pipeline falls back to vector ranking.
"""

from __future__ import annotations

__all__ = ["ANY_RELATION_NAMES", "TRIPLETS_SCHEMA", "VALUE_RULE", "VALUE_RULE_ASKED", "Term", "Triplet", "Triplets",
           "build_prompt", "generate_triplets", "parse_arrow_triplets", "resolve_relation", "sanitize_variable",
           "schema_summary", "triplets_from_data"]

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from sparqlqa.errors import LLMError
from sparqlqa.kb.labels import normalize_label, resolve_type
from sparqlqa.kb.schema import RelationInfo, Schema, humanize, local_name
from sparqlqa.language import prompt_note
from sparqlqa.stages.forms import (
    FORM_EXAMPLE,
    FORM_RULE,
    FORM_SCHEMA,
    TABLE_EXAMPLE,
    TABLE_RULE,
    AnswerForm,
    form_from_data,
    form_from_lines,
)
from sparqlqa.stages.schema_prompt import SCHEMA_PROMPT_TOKENS, schema_prompt

if TYPE_CHECKING:
    from sparqlqa.embed.embedders import Embedder
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.llm import LLM, LLMCall

#: relation names that mean "any edge"
ANY_RELATION_NAMES = frozenset({"", "any", "*", "?", "related", "related to", "any relation", "relation"})
#: arrow text beyond this many characters is ignored (pasted garbage must stay cheap)
MAX_ARROW_CHARS = 20_000

_TERM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "kind": {"type": "string", "enum": ["constant", "variable"]},
        "text": {"type": "string"},
        "type": {"type": ["string", "null"]},
    },
    "required": ["kind", "text"],
}
#: the JSON the LLM is asked for
TRIPLETS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "triplets": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"head": _TERM_SCHEMA, "relation": {"type": "string"}, "tail": _TERM_SCHEMA,
                               "negated": {"type": "boolean"}},
                "required": ["head", "relation", "tail"],
            },
        },
        "target": {"type": ["string", "null"]},
        "requirements": {"type": "array", "items": {"type": "string"}},
        **FORM_SCHEMA,
    },
    "required": ["triplets", "target"],
}


@dataclass
class Term:
    """One end of a triplet: a constant (a name) or a variable (``?x1``)."""

    kind: str  # "constant" | "variable"
    text: str
    type: str | None = None

    @property
    def is_variable(self) -> bool:
        return self.kind == "variable"


@dataclass
class Triplet:
    """``head -relation-> tail``; ``relation_iri`` None means "any predicate"; ``negated``: the pattern must
    not hold ("singers without a concert"; compiled as ``FILTER NOT EXISTS`` by :mod:`sparqlqa.stages.analytic`)."""

    head: Term
    relation: str
    tail: Term
    relation_iri: str | None = None
    flags: list[str] = field(default_factory=list)
    confidence: float = 1.0
    negated: bool = False

    def variables(self) -> list[str]:
        return [t.text for t in (self.head, self.tail) if t.is_variable]

    def constants(self) -> list[Term]:
        return [t for t in (self.head, self.tail) if not t.is_variable]

    def __str__(self) -> str:
        def show(term: Term) -> str:
            text = term.text if term.is_variable else repr(term.text)
            return f"{term.type} {text}" if term.type else text

        text = f"{show(self.head)} -> {self.relation or '*'} -> {show(self.tail)}"
        return f"not {text}" if self.negated else text


@dataclass
class Triplets:
    """What stage 1 produced for one question, with everything that went wrong in ``notes``."""

    question: str
    triplets: list[Triplet]
    target: str | None
    requirements: list[str]
    source: str  # "llm" | "offline" | "parsed"
    notes: list[str]
    llm_calls: list[LLMCall]
    alternatives: list[Triplets] = field(default_factory=list)
    target_type: str | None = None  # the target's node type as written, when stated anywhere
    #: pairs of terms (variable or constant texts) that must be different nodes ("films that share actors
    #: with X" are films other than X)
    distinct: list[tuple[str, str]] = field(default_factory=list)
    #: the answer's form (list / count / boolean, order, filters, limit, choices): :mod:`sparqlqa.stages.forms`
    form: AnswerForm = field(default_factory=AnswerForm)

    def variables(self) -> list[str]:
        """Distinct variables in order of appearance."""
        return list(dict.fromkeys(v for t in self.triplets for v in t.variables()))

    def target_type_iri(self, schema: Schema) -> str | None:
        """The IRI of the target's type (from ``target_type`` or any term of the target variable)."""
        stated = [self.target_type] + [t.type for tr in self.triplets for t in (tr.head, tr.tail)
                                       if t.is_variable and t.text == self.target]
        for name in stated:
            iri = resolve_type(schema, name)
            if iri is not None:
                return iri
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "triplets": [asdict(t) for t in self.triplets],
            "target": self.target,
            "target_type": self.target_type,
            "requirements": list(self.requirements),
            "source": self.source,
            "notes": list(self.notes),
            "llm_calls": [c.to_dict() for c in self.llm_calls],
            "alternatives": [a.to_dict() for a in self.alternatives],
            "distinct": [list(pair) for pair in self.distinct],
            "form": self.form.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Triplets:
        """Rebuild from :meth:`to_dict` (LLM call records are kept as :class:`LLMCall`)."""
        from sparqlqa.llm import LLMCall

        triplets = [Triplet(Term(**t["head"]), t["relation"], Term(**t["tail"]), t.get("relation_iri"),
                            list(t.get("flags", [])), float(t.get("confidence", 1.0)), bool(t.get("negated")))
                    for t in data.get("triplets", [])]
        return cls(question=data.get("question", ""), triplets=triplets, target=data.get("target"),
                   requirements=list(data.get("requirements", [])), source=data.get("source", "parsed"),
                   notes=list(data.get("notes", [])),
                   llm_calls=[LLMCall(**c) for c in data.get("llm_calls", [])],
                   alternatives=[cls.from_dict(a) for a in data.get("alternatives", [])],
                   target_type=data.get("target_type"),
                   distinct=[(str(a), str(b)) for a, b in data.get("distinct", [])],
                   form=AnswerForm.from_dict(data.get("form")))


# -- names -------------------------------------------------------------------------------------


def sanitize_variable(name: str) -> str:
    """A variable name as ``?`` + ``[A-Za-z0-9_]`` characters (``?`` + ``x`` when nothing is left).

    >>> sanitize_variable("|?1|"), sanitize_variable("x 1"), sanitize_variable("?}{")
    ('?1', '?x1', '?x')
    """
    cleaned = re.sub(r"[^A-Za-z0-9_]", "", name)
    return "?" + (cleaned or "x")


def _loose(text: str) -> str:
    return normalize_label(humanize(text)).replace(" ", "")


def resolve_relation(schema: Schema, name: str) -> RelationInfo | None:
    """A relation named by IRI, local name, label or alias, case-insensitively, ``_`` = space.

    >>> from sparqlqa.kb.schema import RelationInfo
    >>> schema = Schema(relations=[RelationInfo("http://x/rel/directed_by", "directed by", 5,
    ...                                         aliases=["director"])])
    >>> [resolve_relation(schema, n).iri for n in ("Directed_By", "DIRECTOR", "directedBy")]
    ['http://x/rel/directed_by', 'http://x/rel/directed_by', 'http://x/rel/directed_by']
    >>> resolve_relation(schema, "invented") is None
    True
    """
    if not name.strip():
        return None
    found = schema.relation(name)
    if found is not None:
        return found
    wanted = _loose(name)
    for rel in schema.relations:
        forms = [rel.iri, local_name(rel.iri), rel.label, *rel.aliases]
        if wanted in {_loose(f) for f in forms}:
            return rel
    return None


def _resolve(triplet: Triplet, schema: Schema | None) -> Triplet:
    """Fill ``relation_iri`` and flags (unknown relation/type, constant-constant)."""
    relation = triplet.relation.strip()
    if normalize_label(relation) in ANY_RELATION_NAMES or relation in ANY_RELATION_NAMES:
        triplet.relation_iri = None
        _flag(triplet, "any-relation")
    elif schema is not None:
        found = resolve_relation(schema, relation)
        if found is None:
            _flag(triplet, "unknown-relation")
        else:
            triplet.relation_iri = found.iri
    if schema is not None and any(t.type and resolve_type(schema, t.type) is None
                                  for t in (triplet.head, triplet.tail)):
        _flag(triplet, "unknown-type")
    if not triplet.head.is_variable and not triplet.tail.is_variable:
        _flag(triplet, "constant-constant")
    return triplet


def _flag(triplet: Triplet, flag: str) -> None:
    if flag not in triplet.flags:
        triplet.flags.append(flag)


# -- from JSON (the LLM's structured answer) ----------------------------------------------------


def _term_from(value: Any) -> Term | None:
    """A term from ``{"kind", "text", "type"}`` or a bare string (``?x1`` → variable)."""
    if isinstance(value, str):
        value = {"kind": "variable" if value.strip().startswith("?") else "constant", "text": value}
    if not isinstance(value, dict):
        return None
    text = str(value.get("text") or value.get("name") or "").strip()
    kind = str(value.get("kind") or "").strip().lower()
    if kind not in ("constant", "variable"):
        kind = "variable" if text.startswith("?") else "constant"
    type_ = value.get("type")
    type_ = str(type_).strip() or None if type_ is not None else None
    if kind == "variable":
        return Term("variable", sanitize_variable(text), type_)
    return Term("constant", text, type_) if text else None


def triplets_from_data(data: Any, question: str, schema: Schema | None, *, source: str = "llm") -> Triplets:
    """Turn a JSON object shaped like :data:`TRIPLETS_SCHEMA` into :class:`Triplets`, leniently.

    >>> t = triplets_from_data({"triplets": [{"head": "?x1", "relation": "any", "tail": "Alien"}],
    ...                         "target": "x1"}, "q", None)
    >>> str(t.triplets[0]), t.target, t.triplets[0].flags
    ("?x1 -> any -> 'Alien'", '?x1', ['any-relation'])
    """
    result = Triplets(question, [], None, [], source, [], [])
    if not isinstance(data, dict):
        result.notes.append(f"the triplet answer is not a JSON object ({type(data).__name__}); no triplets")
        return result
    raw_items = data.get("triplets")
    for number, item in enumerate(raw_items if isinstance(raw_items, list) else [], start=1):
        triplet = _triplet_from(item)
        if triplet is None:
            result.notes.append(f"triplet {number} is malformed and was skipped: {str(item)[:120]!r}")
        else:
            result.triplets.append(_resolve(triplet, schema))
    requirements = data.get("requirements")
    if isinstance(requirements, list):
        result.requirements = [str(r).strip() for r in requirements if str(r).strip()]
    elif isinstance(requirements, str) and requirements.strip():
        result.requirements = [requirements.strip()]
    target = data.get("target")
    _choose_target(result, str(target) if isinstance(target, (str, int)) else None)
    result.form, form_notes = form_from_data(data)
    result.notes.extend(form_notes)
    _note_shape(result)
    return result


def _triplet_from(item: Any) -> Triplet | None:
    if not isinstance(item, dict):
        return None
    head, tail = _term_from(item.get("head")), _term_from(item.get("tail"))
    relation = item.get("relation")
    if head is None or tail is None or not isinstance(relation, (str, type(None))):
        return None
    return Triplet(head, (relation or "").strip(), tail, negated=item.get("negated") is True)


def _choose_target(result: Triplets, stated: str | None) -> None:
    """Set ``target``: the stated variable if it occurs, else ``?1``/``?x1``, else the first variable."""
    variables = result.variables()
    wanted = sanitize_variable(stated) if stated and stated.strip() else None
    if wanted and (wanted in variables or not variables):
        result.target = wanted
    elif variables:
        preferred = [v for v in variables if v in ("?1", "?x1", "?x")]
        result.target = (preferred or variables)[0]
        if wanted or not preferred:  # ?1 / ?x1 is the conventional answer variable: no note
            why = f"the stated target {stated!r} is not a variable of the triplets" if wanted \
                else "no target was given"
            result.notes.append(f"{why}; using {result.target}")
    else:
        result.notes.append("no target variable was given")
    types = [t.type for tr in result.triplets for t in (tr.head, tr.tail)
             if t.is_variable and t.text == result.target and t.type]
    result.target_type = result.target_type or (types[0] if types else None)


def _note_shape(result: Triplets) -> None:
    if not result.triplets:
        result.notes.append("no usable triplets: the answer will come from vector ranking alone")
        return
    unknown = [t.relation for t in result.triplets if "unknown-relation" in t.flags]
    if unknown:
        result.notes.append("relations not in the KB schema (matched as any edge): "
                            + ", ".join(repr(r) for r in dict.fromkeys(unknown)))
    if result.target and result.target not in result.variables():
        result.notes.append(f"the target {result.target} occurs in no triplet")


# -- the arrow format ---------------------------------------------------------------------------

_ARROW = re.compile(r"\s*(?:-+>|=+>|→|⟶|➔|—>|–>)\s*")
_VAR_MARK = re.compile(r"\|\s*\??\s*([^|\s'\"][^|'\"]{0,40}?)\s*\||(?<![\w'])\?([A-Za-z0-9_]+)|(?<![\w'\"])(x\d+)\s*$")
_QUOTES = {"'": "'’", "\"": "\"”", "‘": "’'", "“": "”\"", "«": "»", "`": "`'"}
_META_LINE = re.compile(r"^\s*(target|answer(?: variable)?|requirements?|constraints?|properties)\s*[:=]\s*(.*)$",
                        re.IGNORECASE)
_BULLET = re.compile(r"^\s*(?:\d+[.)]|[-*•]|\(\d+\))\s+")


def _parse_term(segment: str, schema: Schema | None) -> tuple[Term | None, str]:
    """One end of a triplet from arrow text → (term, leftover text after it)."""
    text = segment.strip().strip(",;")
    quote_at = next((i for i, c in enumerate(text) if c in _QUOTES and (i == 0 or not text[i - 1].isalnum())),
                    None)
    var = _VAR_MARK.search(text)
    if var is not None and (quote_at is None or var.start() < quote_at):
        type_ = text[: var.start()].strip(" :") or None
        name = var.group(1) or var.group(2) or var.group(3)
        return Term("variable", sanitize_variable(name), type_), text[var.end():]
    if quote_at is not None:
        closers = _QUOTES[text[quote_at]]
        close_at = max(text.rfind(c) for c in closers)
        end = close_at if close_at > quote_at else len(text)
        name = text[quote_at + 1 : end].strip()
        type_ = text[:quote_at].strip(" :") or None
        return (Term("constant", name, type_) if name else None), text[end + 1 :]
    return _unquoted(text, schema), ""


def _unquoted(text: str, schema: Schema | None) -> Term | None:
    """``movie Alien`` → typed constant when the first words name a schema type, else all text."""
    if not text:
        return None
    if ":" in text:
        head, _, rest = text.partition(":")
        if head.strip() and rest.strip():
            return Term("constant", rest.strip(), head.strip())
    words = text.split()
    if schema is not None:
        for cut in range(len(words) - 1, 0, -1):
            if resolve_type(schema, " ".join(words[:cut])) is not None:
                return Term("constant", " ".join(words[cut:]), " ".join(words[:cut]))
    return Term("constant", text, None)


def _closed(part: str) -> bool:
    """True when ``part`` does not end inside an open quoted name."""
    stripped = part.strip()
    if not stripped:
        return False
    has_quote = any(c in _QUOTES or c in "’”»" for c in stripped)
    return not has_quote or stripped[-1] in "'\"’”»`|" or bool(_VAR_MARK.search(stripped[-12:]))


def _split_boundary(segment: str) -> tuple[str, str] | None:
    """Split the text between two triplets on one line; None when it is one shared node (a path)."""
    for match in reversed(list(re.finditer(r"[;,]|\s\|\s", segment))):
        left, right = segment[: match.start()], segment[match.end():]
        if _closed(left) and right.strip():
            return left, right
    return None


def _line_triplets(line: str) -> list[tuple[str, str, str]]:
    """Arrow text of one line → (head, relation, tail) segments; paths ``a -> r -> b -> s -> c`` chain."""
    parts = _ARROW.split(line)
    if len(parts) < 3:
        return []
    found: list[tuple[str, str, str]] = []
    head = parts[0]
    index = 1
    while index + 1 < len(parts):
        relation, tail = parts[index], parts[index + 1]
        is_last = index + 2 >= len(parts)
        split = None if is_last else _split_boundary(tail)
        found.append((head, relation, split[0] if split else tail))
        head = split[1] if split else tail
        index += 2
    return found


def parse_arrow_triplets(text: str, question: str = "", schema: Schema | None = None) -> Triplets:
    """Parse ``type 'name' -> relation -> type |?1|`` lines (one or more per line, ``;``/``,`` between).

    ``?1`` (or ``x1``, or a ``target: ?2`` line) marks the answer; ``requirements: ...`` lines and
    text after the last term of a line (``... |?1| | published after 2015``) become requirements.

    >>> t = parse_arrow_triplets("movie |?1| -> directed by -> person 'Ridley Scott'; "
    ...                          "|?1| -> has genre -> 'sci-fi'\\nrequirements: released before 1990")
    >>> [str(x) for x in t.triplets], t.requirements
    (["movie ?1 -> directed by -> person 'Ridley Scott'", "?1 -> has genre -> 'sci-fi'"], ['released before 1990'])
    """
    result = Triplets(question, [], None, [], "parsed", [], [])
    if len(text) > MAX_ARROW_CHARS:
        result.notes.append(f"the triplet text was cut to its first {MAX_ARROW_CHARS} characters")
        text = text[:MAX_ARROW_CHARS]
    stated_target: str | None = None
    result.form, lines = form_from_lines([_BULLET.sub("", raw).strip()
                                          for raw in text.replace("\r", "\n").split("\n")])
    for number, line in enumerate(lines, start=1):
        meta = _META_LINE.match(line)
        if meta and not _ARROW.search(line):
            if meta.group(1).lower().startswith(("target", "answer")):
                stated_target = meta.group(2).strip(" |") or None
            else:
                result.requirements.extend(r.strip() for r in meta.group(2).split(";") if r.strip())
            continue
        for head_text, relation, tail_text in _line_triplets(line):
            head, _ = _parse_term(head_text, schema)
            tail, leftover = _parse_term(tail_text, schema)
            if head is None or tail is None:
                result.notes.append(f"line {number}: a triplet without a head or tail was skipped")
                continue
            extra = leftover.strip(" |;,:-.")
            if extra:
                result.requirements.append(extra)
            result.triplets.append(_resolve(Triplet(head, relation.strip(" '\""), tail), schema))
    _choose_target(result, stated_target)
    _note_shape(result)
    return result


# -- the prompt and the LLM call ---------------------------------------------------------------


def schema_summary(schema: Schema, question: str = "", *, budget_tokens: int = SCHEMA_PROMPT_TOKENS,
                   embedder: Embedder | None = None) -> str:
    """Node types and relations for the prompt, within ``budget_tokens``.

    See :func:`~sparqlqa.stages.schema_prompt.schema_prompt`.

    >>> from sparqlqa.kb.schema import TypeInfo, RelationInfo
    >>> s = Schema(types=[TypeInfo("http://x/Movie", "movie", 9), TypeInfo("http://x/Person", "person", 3)],
    ...            relations=[RelationInfo("http://x/d", "directed by", 9, pairs=[("http://x/Movie", None, 9)])])
    >>> print(schema_summary(s))
    Node types: movie, person
    Relations (head type → tail type):
    - directed by: movie → any
    """
    return schema_prompt(schema, question, budget_tokens=budget_tokens, embedder=embedder)


SYSTEM_PROMPT = (
    "You translate questions about a knowledge graph into graph patterns. You never answer the question "
    "yourself; you describe what the answer must be connected to."
)

_EXAMPLE = (
    'Question: "Which novels by an author born in Dublin were published after 1950?"\n'
    '{"triplets": [\n'
    '  {"head": {"kind": "variable", "text": "?x1", "type": "novel"}, "relation": "written by",\n'
    '   "tail": {"kind": "variable", "text": "?x2", "type": "author"}},\n'
    '  {"head": {"kind": "variable", "text": "?x2", "type": "author"}, "relation": "born in",\n'
    '   "tail": {"kind": "constant", "text": "Dublin", "type": "city"}}],\n'
    ' "target": "?x1", "requirements": ["published after 1950"]}'
)


#: the rule on literal relations (the prompt of a KB whose listed relations hold no values keeps this one)
VALUE_RULE = ("Relations whose tail is \"value\" hold literals (dates, numbers, text): express conditions on them "
              "as requirements, not triplets.")
#: ... and when some listed relation holds values: the question may ask for one
VALUE_RULE_ASKED = ("Relations whose tail is \"value\" hold literals (dates, numbers, text). When the question "
                    "asks for such a value, end a triplet with that relation and a variable, and make that "
                    "variable the target (\"when was X born\": X, date of birth, ?x1; target ?x1); conditions "
                    "on values (\"after 2000\") go into requirements, not triplets.")


def build_prompt(question: str, schema: Schema, *, budget_tokens: int = SCHEMA_PROMPT_TOKENS,
                 embedder: Embedder | None = None, tables: bool = False) -> str:
    """The user message for the triplet call: schema (relations relevant to ``question`` when they
    do not all fit ``budget_tokens``), rules, one worked example, the question.  ``tables``: the KB was
    mapped from tables (ingest found names in its data): the analytical rule and examples are added
    (:data:`~sparqlqa.stages.forms.TABLE_RULE`); any other KB's prompt is left as it was."""
    summary = schema_summary(schema, question, budget_tokens=budget_tokens, embedder=embedder)
    values = VALUE_RULE_ASKED + " " + FORM_RULE if "→ value" in summary else FORM_RULE
    return "\n\n".join([
        "The knowledge graph has these node types and relations:\n" + summary,
        "Write the question as triplets (head, relation, tail). Each end is either a constant — one named "
        "entity, spelled as in the question, with its node type if you know it — or a variable ?x1, ?x2, … "
        "standing for an unknown node (reuse the same variable for the same unknown; give its type). "
        "Use relation and type names from the lists above; if no listed relation fits, use the closest "
        f"one or \"any\". {values} Mark the variable the question asks for as "
        "\"target\". Conditions that no relation expresses (dates, numbers, qualities such as "
        "\"safe for kids\") go into \"requirements\" as short phrases. "
        "If the question names no entity, return no triplets but still give the target.",
        *([TABLE_RULE] if tables else []),
        "Example (from a different graph):\n" + _EXAMPLE + "\n" + FORM_EXAMPLE
        + ("\n" + TABLE_EXAMPLE if tables else ""),
        *filter(None, [prompt_note()]),  # another language (issue 37); nothing for English
        f"Question: {question.strip()}\nAnswer with the JSON object only.",
    ])


def generate_triplets(question: str, kb: KnowledgeBase, llm: LLM, *, budget_tokens: int = SCHEMA_PROMPT_TOKENS,
                      embedder: Embedder | None = None) -> Triplets:
    """Ask ``llm`` for the triplets of ``question``; garbage answers give a note, never an exception.

    ``embedder`` (the pipeline passes the KB's) ranks relations by relevance when the schema does not
    fit ``budget_tokens``; without one, word overlap and frequency do.

    LLM transport errors (:class:`~sparqlqa.errors.LLMError` other than parse errors) propagate:
    the caller decides whether to retry or degrade.
    """
    from sparqlqa.errors import LLMParseError
    from sparqlqa.kb.data_names import stored_data_names

    schema = kb.schema
    prompt = build_prompt(question, schema, budget_tokens=budget_tokens, embedder=embedder,
                          tables=bool(stored_data_names(kb)))
    try:
        reply = llm.complete(prompt, system=SYSTEM_PROMPT, schema=TRIPLETS_SCHEMA, schema_name="triplets")
    except LLMParseError as exc:
        return _from_garbage(question, schema, exc, llm, prompt)
    result = triplets_from_data(reply.data, question, schema, source="llm")
    result.llm_calls.append(reply.call)
    return result


def _from_garbage(question: str, schema: Schema, exc: LLMError, llm: LLM, prompt: str) -> Triplets:
    """The reply was not the JSON asked for: try the arrow format on the raw text, else note it."""
    raw = getattr(exc, "raw", "") or ""
    parsed = parse_arrow_triplets(raw, question, schema)
    parsed.source = "llm"
    if parsed.triplets:
        parsed.notes.insert(0, "the LLM answered in arrow format instead of JSON; parsed it")
    else:
        parsed.notes.insert(0, f"the LLM's triplet answer could not be used ({exc}); no triplets")
    parsed.llm_calls.append(_failed_call(llm, prompt, raw, exc))
    return parsed


def _failed_call(llm: LLM, prompt: str, raw: str, exc: LLMError) -> LLMCall:
    """An accounting record for a call whose answer could not be parsed."""
    from sparqlqa.llm import LLMCall

    return LLMCall(backend=getattr(llm, "backend_name", "llm"), model=getattr(llm, "model", ""),
                   system=SYSTEM_PROMPT, messages=[{"role": "user", "content": prompt}], schema=TRIPLETS_SCHEMA,
                   response_text=raw, error=f"{type(exc).__name__}: {exc}")
