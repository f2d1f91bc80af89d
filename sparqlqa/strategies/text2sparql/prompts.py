"""The text2sparql prompts: the question, the KB's schema (the budgeted text 4step's triplet prompt
uses, :func:`sparqlqa.stages.schema_prompt.schema_prompt`), how its relations, types and names are
written in SPARQL, and the prefixes; the LLM answers with one query and the answer's columns as JSON
(:data:`QUERY_SCHEMA`).  How entities are named and selected depends on the data (:func:`rules`): through
the name predicate where one names the KB's nodes (select things, they will be named), through the KB's
own value relations where none does (a graph mapped from tables: select the name and value columns).
The repair prompt adds the failing query and what went wrong.

>>> from sparqlqa.kb.schema import RelationInfo, Schema
>>> schema = Schema(relations=[RelationInfo("http://x.org/rel/directed_by", "directed by", 9)])
>>> print(vocabulary(schema, "- directed by", {"rel": "http://x.org/rel/"}, "http://x.org/label")[0])
Written in SPARQL:
- directed by: rel:directed_by
- a node's name: <http://x.org/label>
"""

from __future__ import annotations

__all__ = ["CAST_LINE", "QUERY_SCHEMA", "SYSTEM_PROMPT", "VALUE_NAMES", "build_prompt", "name_predicate",
           "repair_prompt", "rules", "value_example", "vocabulary"]

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pyoxigraph import Literal, NamedNode

from sparqlqa.kb.data_names import stored_data_names
from sparqlqa.kb.node_text import label_predicates
from sparqlqa.kb.schema import relation_names
from sparqlqa.kb.vocab import TEXT_DATATYPES, XSD, kb_prefixes, prefixed_name
from sparqlqa.language import prompt_note
from sparqlqa.query.built_query import BuiltQuery
from sparqlqa.stages.modes import Form, values
from sparqlqa.stages.schema_prompt import SCHEMA_PROMPT_TOKENS, schema_prompt

if TYPE_CHECKING:
    from sparqlqa.embed.embedders import Embedder
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.kb.schema import Schema

#: the JSON the LLM answers with (an older answer's ``answer_variable`` is still read, as one column)
QUERY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sparql": {"type": "string", "minLength": 1},
        "columns": {"type": "array", "items": {"type": "string"}},
        "form": {"type": "string", "enum": list(values(Form))},
    },
    "required": ["sparql"],
}
SYSTEM_PROMPT = ("You write SPARQL 1.1 queries that answer questions from a knowledge graph, tables of figures "
                 "included. You never answer from your own knowledge: the query, run on the graph, finds the answer.")
HEAD = (
    "Write ONE SPARQL query (SELECT, or ASK for a yes/no question) that answers the question.\n"
    "- Use only the relations and types listed, each in its listed direction: a line \"r: A → B\" means "
    "?a r ?b with ?a an A and ?b a B.\n"
)
#: how entities are named and selected where a name predicate names the KB's nodes
NAMED_NODES = (
    "- Name an entity of the question through its name, spelled as in the question: ?e {name} \"Ridley Scott\". "
    "Do not make up IRIs for entities.\n"
    "- When the question asks for things, select the node (with DISTINCT), not its name: it will be named; "
    "when it asks for values (a date, a figure), select the value.\n"
)
#: … and where no name predicate names them: names are values of their own relations (a name column)
VALUE_NAMES = (
    "- Nodes are named by their value relations (a name, a title): match an entity through them, spelled as in "
    "the question: ?e <its name relation> \"Ridley Scott\". Do not make up IRIs for entities.\n"
    "- Select the names and values the question asks for, as the data stores them, not the nodes.\n"
)
TAIL = (
    "- Select one variable per column the question asks for, in its order (\"names and ages\" → ?name ?age), "
    "and no other but a ranking's figure (below).\n"
    "- How many → (COUNT(DISTINCT ?x) AS ?count); average, total, largest, smallest → (AVG(?v) AS ?avg), SUM, MAX, "
    "MIN, each with AS; for each, per → GROUP BY the group's columns, HAVING to keep some groups; most, least, "
    "first, latest, top k → ORDER BY … LIMIT 1 or k (a subquery where a figure depends on another), and when "
    "the order is a computed figure (a count, a total, an average) select it too, with AS, as the last column "
    "(\"the director with the most films\" → ?name (COUNT(?film) AS ?films)), listed in \"columns\"; "
    "none, never, without → FILTER NOT EXISTS {{ … }} or MINUS; comparisons, dates and numbers → FILTER.\n"
    "- The prefixes above are declared already; write no SERVICE and no update.\n"
    'Answer with one JSON object: {{"sparql": "<the query>", "columns": ["?x", …] (the selected variables that '
    'answer, in order), "form": "list" (one column) | "count" (one COUNT) | "value" (one figure) | '
    '"table" (several columns) | "boolean" (ASK)}}.'
)


def rules(name: str | None) -> str:
    """The rules of the query call; ``name``: the predicate naming the KB's nodes, as written (``None``: none does)."""
    naming = NAMED_NODES.format(name=name) if name is not None else VALUE_NAMES
    return HEAD + naming + TAIL.format()


#: the line added under the value relations' examples: stored text compares and sorts as text
CAST_LINE = ("- a value stored as plain text compares and sorts as text: cast a number first, "
             "xsd:decimal(STR(?v)), before comparing or ordering it")
#: the longest example value shown (longer ones are cut)
EXAMPLE_CHARS = 40
_NUMERIC = frozenset(XSD[name].value for name in (
    "decimal", "double", "float", "integer", "int", "long", "short", "byte", "nonNegativeInteger",
    "positiveInteger", "negativeInteger", "nonPositiveInteger", "unsignedInt", "unsignedLong"))



def vocabulary(schema: Schema, schema_text: str, prefixes: dict[str, str], name_predicate: str | None,
               example: Callable[[str], Literal | None] | None = None) -> tuple[str, set[str]]:
    """How the relations and types ``schema_text`` shows are written in SPARQL, and the prefixes used;
    a value relation shown gets the stored value ``example`` gives for its IRI, with its datatype (and a
    line on casting text to numbers follows).  ``name_predicate``: the one naming nodes (``None``: none does).

    >>> from pyoxigraph import Literal
    >>> from sparqlqa.kb.schema import RelationInfo, Schema
    >>> schema = Schema(relations=[RelationInfo("http://x.org/sales", "sales", 3, kind="literal")])
    >>> print(vocabulary(schema, "- sales", {"m": "http://x.org/"}, "http://x.org/name",
    ...                  lambda iri: Literal("1200000"))[0].splitlines()[1])
    - sales: m:sales (a value such as "1200000", plain text)
    """
    used: set[str] = set()

    def written(iri: str) -> str:
        short = prefixed_name(iri, prefixes)
        if short is None:
            return f"<{iri}>"
        used.add(short.split(":", 1)[0])
        return short

    shown = schema_text.splitlines()
    lines = ["Written in SPARQL:"]
    values = 0
    names = relation_names(schema)  # as the schema text names them ("singer name" beside "stadium name")
    for rel in schema.relations:
        name = names[rel.iri]
        if any(line == f"- {name}" or line.startswith((f"- {name}:", f"- {name} ")) for line in shown):
            stored = example(rel.iri) if example is not None and rel.kind == "literal" else None
            values += stored is not None
            shown_as = f" ({_example_text(stored, written)})" if stored is not None else ""
            lines.append(f"- {name}: {written(rel.iri)}{shown_as}")
    types_line = next((line for line in shown if line.startswith("Node types:")), "")
    kinds = [f"{info.label} {written(info.iri)}" for info in schema.types
             if len(schema.types) > 1 and info.label in types_line]
    if kinds:
        lines.append(f"- node types (?x {written(schema.type_predicate)} T): {', '.join(kinds)}")
    if name_predicate is not None:
        lines.append(f"- a node's name: {written(name_predicate)}")
    if values:
        lines.append(CAST_LINE)
        written(XSD.decimal.value)
    return "\n".join(lines), used


def _example_text(value: Literal, written: Callable[[str], str]) -> str:
    """``a value such as "1200000", plain text`` / ``a value such as 25.5, xsd:decimal``."""
    lexical = value.value if len(value.value) <= EXAMPLE_CHARS else value.value[:EXAMPLE_CHARS] + "…"
    datatype = value.datatype.value
    if value.language:
        kind = f"text @{value.language}"
    elif datatype in TEXT_DATATYPES:
        kind = "plain text"
    else:
        kind = written(datatype)
    shown = lexical if datatype in _NUMERIC and not value.language else json.dumps(lexical, ensure_ascii=False)
    return f"a value such as {shown}, {kind}"


def value_example(kb: KnowledgeBase, relation: str) -> Literal | None:
    """One value ``relation`` holds, as stored (None when it holds no literal): one bounded read
    (``LIMIT 1``), remembered by the opened KB."""
    def build() -> Literal | None:
        rows = kb.query(BuiltQuery.select(f"SELECT ?v WHERE {{ ?s {NamedNode(relation)} ?v FILTER(isLiteral(?v)) }} "
                                          "LIMIT 1")).rows
        return rows[0][0] if rows and isinstance(rows[0][0], Literal) else None

    return kb.remember(("text2sparql-value-example", relation), build)


#: the relations whose subjects show which label predicate names the KB's nodes
NAME_PROBE_RELATIONS = 20


def name_predicate(kb: KnowledgeBase) -> str | None:
    """The name predicate the prompt names: the first of the KB's label predicates that names the subjects
    of its relations (one bounded ``ASK`` each, remembered), so a schema.org file is asked by
    ``schema:name``, not by the ``rdfs:label`` only its vocabulary nodes carry.  ``None`` when none does
    (a graph mapped from tables: its nodes are named by their own value relations, a name column — the
    naming columns ingest found in such data are each one class's, never the graph's name predicate)."""
    def build() -> str | None:
        per_class = {found.predicate for found in stored_data_names(kb)}
        candidates = [p for p in label_predicates(kb) if p not in per_class]
        if not candidates:
            return None
        relations = " ".join(str(NamedNode(rel.iri)) for rel in kb.schema.relations[:NAME_PROBE_RELATIONS])
        if not relations:
            return candidates[0]
        used = (p for p in candidates
                if kb.query(BuiltQuery.ask(f"ASK {{ VALUES ?r {{ {relations} }} ?s ?r ?x . "
                                           f"?s {NamedNode(p)} ?o }}")).boolean)
        return next(used, None)

    found: str | None = kb.remember("text2sparql-name-predicate", build)
    return found


def _context(question: str, kb: KnowledgeBase, embedder: Embedder | None) -> tuple[str, str | None]:
    """The schema, vocabulary and prefix sections, and the name predicate as written (``None``: none names nodes)."""
    prefixes = kb_prefixes(kb)
    schema_text = schema_prompt(kb.schema, question, budget_tokens=SCHEMA_PROMPT_TOKENS, embedder=embedder)
    name_p = name_predicate(kb)
    words, used = vocabulary(kb.schema, schema_text, prefixes, name_p, lambda iri: value_example(kb, iri))
    declared = "\n".join(f"PREFIX {name}: <{prefixes[name]}>" for name in sorted(used))
    name = None if name_p is None else prefixed_name(name_p, prefixes) or f"<{name_p}>"
    sections = ["The knowledge graph has these node types and relations:\n" + schema_text, words]
    if declared:
        sections.append("Prefixes:\n" + declared)
    return "\n\n".join(sections), name


def build_prompt(question: str, kb: KnowledgeBase, *, embedder: Embedder | None = None) -> str:
    """The user message of the query call."""
    context, name = _context(question, kb, embedder)
    return "\n\n".join([context, rules(name), *filter(None, [prompt_note()]), f"Question: {question.strip()}"])


def repair_prompt(question: str, kb: KnowledgeBase, query: str, problem: str, *,
                  embedder: Embedder | None = None) -> str:
    """The user message of the one repair call: the same context, the failing query and what went wrong."""
    context, name = _context(question, kb, embedder)
    return "\n\n".join([
        context, rules(name), *filter(None, [prompt_note()]), f"Question: {question.strip()}",
        f"This query was written for the question:\n{query.strip()}",
        f"It failed: {problem.strip()}",
        "Write a corrected query (check the relation names, their direction and the entity names).",
    ])
