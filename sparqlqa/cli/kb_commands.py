"""``sparqlqa ingest``, ``kbs``, ``schema`` and ``sparql``."""

from __future__ import annotations

__all__ = ["ingest", "kbs", "kbs_add", "kbs_annotate", "kbs_group", "kbs_group_add", "kbs_group_remove", "kbs_remove",
           "samples", "schema", "sparql"]

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from sparqlqa.cli.output import (
    KB_NAME,
    CleanText,
    byte_progress,
    cell,
    console,
    count_progress,
    note,
    print_json,
    safe,
    warning,
)
from sparqlqa.cli.remote_options import ADD_HELP, endpoint_timeout_option
from sparqlqa.errors import ConfigError
from sparqlqa.query.limits import DEFAULT_MAX_MEMORY_MB, DEFAULT_MAX_ROWS, DEFAULT_TIMEOUT_S, QueryLimits
from sparqlqa.text_input import CODE

if TYPE_CHECKING:
    from sparqlqa.kb.groups import SavedGroup
    from sparqlqa.kb.knowledge_base import KnowledgeBase
    from sparqlqa.strategies.kb_artifacts import BuiltArtifact


def _parse_options(pairs: tuple[str, ...]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"bad option {pair!r}", hint="write options as KEY=VALUE, e.g. -o dataset=prime")
        options[key.strip()] = value
    return options


def _manifest_summary(manifest: Any) -> dict[str, Any]:
    return {"name": manifest.name, "store": manifest.store.get("kind"), "counts": manifest.counts,
            "created_at": manifest.created_at, "base_iri": manifest.base_iri,
            "sources": [s.get("path") for s in manifest.sources]}


@click.command()
@click.argument("sources", nargs=-1, required=True)
@click.option("--kb", "kb_name", type=KB_NAME, required=True, help="Name of the knowledge base to create.")
@click.option("--format", "fmt", help="rdf, nt, nq, turtle, trig, rdfxml, n3, jsonld, triples or stark "
              "(default: from the file name).")
@click.option("--sep", help="Field separator for --format triples (default: tab or '|', guessed).")
@click.option("--replace", is_flag=True,
              help="Rebuild an existing KB (the old one stays until the new one is complete).")
@click.option("--force", is_flag=True,
              help="With --replace: accept sources holding less than half the KB's data triples.")
@click.option("--base-iri", help="Base IRI for minted nodes and relations.")
@click.option("--ontology", "ontologies", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Extra ontology file (Turtle) with labels/comments for classes and relations. Repeatable.")
@click.option("--profile", "profile_name", help="Naming profile (e.g. wikidata, freebase) for dumps of those stores.")
@click.option("--name-predicate", "name_predicates", multiple=True, type=CleanText(CODE, "--name-predicate"),
              help="IRI of a column that names nodes (after rdfs:label and the other label predicates); "
                   "replaces the search for naming columns in the data. Repeatable.")
@click.option("-o", "--option", "extra", multiple=True, help="Format option KEY=VALUE (e.g. -o dataset=prime).")
@click.option("--json", "as_json", is_flag=True, help="Print the manifest as JSON.")
@click.option("--index", "build_index", is_flag=True, help="Also build the node vector index now, with progress "
              "(else 'sparqlqa index KB' later: questions are answered without it, with no vector fill-in).")
def ingest(sources: tuple[str, ...], kb_name: str, fmt: str | None, sep: str | None, replace: bool, force: bool,
           base_iri: str | None, ontologies: tuple[str, ...], profile_name: str | None,
           name_predicates: tuple[str, ...], extra: tuple[str, ...], as_json: bool, build_index: bool = False) -> None:
    """Build knowledge base KB from SOURCES (RDF files, delimited triples, STaRK SKBs; .gz/.bz2 ok)."""
    from sparqlqa.ingest import ingest as run_ingest
    from sparqlqa.kb.profile import DEFAULT_PROFILE

    options = _parse_options(extra)
    if sep is not None:
        options["sep"] = sep
    profile = DEFAULT_PROFILE
    if profile_name:
        from sparqlqa.remote.profiles import load_profile

        profile = load_profile(profile_name)
    if name_predicates:
        from dataclasses import replace as replaced

        profile = replaced(profile, name_predicates=(*profile.name_predicates, *name_predicates))
    with byte_progress("loading") as progress:
        kb = run_ingest(list(sources), kb=kb_name, format=fmt, replace=replace, options=options,
                        base_iri=base_iri, ontologies=[Path(o) for o in ontologies], progress=progress,
                        profile=profile, force=force)
    built = _build_artifacts(kb)
    if build_index:
        from sparqlqa.cli.ask_commands import ensure_index
        from sparqlqa.embed.embedders import get_embedder

        ensure_index(kb, get_embedder(), ahead=False)
    if as_json:
        print_json({**kb.manifest.to_dict(), "artifacts": [b.to_dict() for b in built]})
        return
    counts = kb.manifest.counts
    console().print(f"[bold green]built[/] KB [bold]{kb.name}[/]: {counts.get('triples', 0):,} triples, "
                    f"{counts.get('nodes', 0):,} nodes, {counts.get('types', 0)} types, "
                    f"{counts.get('relations', 0)} relations")
    _note_names(kb)


def _build_artifacts(kb: KnowledgeBase) -> list[BuiltArtifact]:
    """What the first ask would build (label index, table model, value samples), built now with a progress
    display: the first ask only opens them (issue 36)."""
    from sparqlqa.errors import SparqlqaError
    from sparqlqa.strategies.kb_artifacts import build_kb_artifacts

    try:
        with count_progress("preparing the KB's indexes", verb="prepared", unit="indexes") as progress:
            return build_kb_artifacts(kb, progress)
    except SparqlqaError as exc:  # the KB is built and usable: its first question builds what is missing
        warning(f"KB {kb.name} is built, but preparing its indexes failed ({exc}); its first question builds them")
        return []


def _note_names(kb: Any) -> None:
    """Say which predicates name the KB's nodes."""
    from pyoxigraph import NamedNode

    from sparqlqa.kb.results_format import shorten
    from sparqlqa.kb.vocab import kb_prefixes

    prefixes = kb_prefixes(kb)
    names = ", ".join(shorten(NamedNode(p), prefixes) for p in kb.schema.label_predicates) or "none"
    note(f"node names from {names} (a node without one is named after its IRI)")
    from sparqlqa.kb.data_names import stored_data_names

    for name in stored_data_names(kb):
        if name.type_iri:
            note(name.describe())


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
@click.pass_context
def kbs(ctx: click.Context, as_json: bool) -> None:
    """List knowledge bases (subcommands: remove, add, annotate).

    A damaged KB (unreadable manifest, missing generation or store) is listed after the others
    with its problem and what to do; with --json each has "broken": true, "problem" and "hint".
    """
    if ctx.invoked_subcommand is not None:
        return
    from sparqlqa.kb.knowledge_base import scan_kbs

    scan = scan_kbs()
    from sparqlqa.kb.groups import saved_groups

    groups = saved_groups()
    if as_json:
        print_json([*({**_manifest_summary(m), "broken": False} for m in scan.kbs),
                    *({**b.to_dict(), "broken": True} for b in scan.broken),
                    *(g.to_dict() for g in groups)])
        return
    if not scan.kbs and not scan.broken:
        note("no knowledge bases yet: create one with 'sparqlqa ingest FILE --kb NAME'")
        return
    if scan.kbs:
        from rich.table import Table

        table = Table("name", "store", "triples", "nodes", "relations", "created")
        for m in scan.kbs:
            table.add_row(m.name, m.store.get("kind", "?"), f"{m.counts.get('triples', 0):,}",
                          f"{m.counts.get('nodes', 0):,}", str(m.counts.get("relations", 0)), m.created_at)
        console().print(table)
    for broken in scan.broken:
        click.secho(f"broken KB {broken.name}: {broken.problem}\n  hint: {broken.hint}", fg="red")
    _print_groups(groups)


def _print_groups(groups: list[SavedGroup]) -> None:
    for group in groups:
        line = f"group {group.name}: {' + '.join(group.members)}"
        if group.missing:
            click.secho(f"{line} (broken: no KB {', '.join(group.missing)}; remove the group or "
                        "re-create the KB)", fg="red")
        else:
            click.echo(line)


@kbs.command("remove")
@click.argument("name", type=KB_NAME)
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--force", is_flag=True, help="Remove it even if saved KB groups name it (they break).")
def kbs_remove(name: str, yes: bool, force: bool) -> None:
    """Delete knowledge base NAME and everything derived from it.

    Refused while saved KB groups name it (they would break), unless --force.
    """
    from sparqlqa.errors import GroupError
    from sparqlqa.kb.groups import groups_using
    from sparqlqa.kb.knowledge_base import kb_folder, remove_kb

    kb_folder(name)  # KBNotFound before asking; a broken KB can be removed too
    using = groups_using(name)
    if using and not force:
        raise GroupError(f"knowledge base {name!r} is a member of the KB group(s) {', '.join(using)}, "
                         "which removing it would break",
                         hint="remove those groups first ('sparqlqa kbs group remove NAME'), or pass --force")
    if not yes:
        click.confirm(f"remove knowledge base {name!r}?", abort=True)
    remove_kb(name)
    from sparqlqa.kb.group import forget_group_caches

    forget_group_caches(name)  # the merged stores of groups that included it
    note(f"removed {name}")
    if using:
        click.secho(f"warning: the KB group(s) {', '.join(using)} name {name!r} and are broken now: "
                    "re-create the KB or remove the group(s)", fg="yellow", err=True)


@kbs.group("group")
def kbs_group() -> None:
    """Saved KB groups: several KBs asked as one (also written ad hoc as 'films+people')."""


@kbs_group.command("add")
@click.argument("name", type=KB_NAME)
@click.argument("members", nargs=-1, required=True, type=KB_NAME)
@click.option("--replace", is_flag=True, help="Replace a saved group of that name.")
@click.option("--json", "as_json", is_flag=True)
def kbs_group_add(name: str, members: tuple[str, ...], replace: bool, as_json: bool) -> None:
    """Save KB group NAME of the knowledge bases MEMBERS; ask it like a KB: 'sparqlqa ask NAME "…"'."""
    from sparqlqa.kb.groups import save_group

    saved = save_group(name, list(members), replace=replace)
    if as_json:
        print_json({"name": name, "group": True, "members": saved})
    else:
        note(f"saved KB group {name}: {' + '.join(saved)}")


@kbs_group.command("remove")
@click.argument("name", type=KB_NAME)
def kbs_group_remove(name: str) -> None:
    """Forget saved KB group NAME (its member KBs stay)."""
    from sparqlqa.kb.groups import remove_group

    members = remove_group(name)
    note(f"removed KB group {name} ({' + '.join(members)}); the KBs stay")


@kbs.command("add")
@click.argument("name", type=KB_NAME)
@click.option("--endpoint", required=True, help="URL of a SPARQL 1.1 endpoint.")
@click.option("--profile", "profile_name", default="generic", show_default=True,
              help="wikidata, freebase, generic, or a profile file.")
@click.option("--replace", is_flag=True, help="Replace an existing KB of that name.")
@endpoint_timeout_option(ADD_HELP)
@click.option("--json", "as_json", is_flag=True)
def kbs_add(name: str, endpoint: str, profile_name: str, replace: bool, timeout_s: float | None,
            as_json: bool) -> None:
    """Register a remote SPARQL endpoint as knowledge base NAME (schema sampled, never scanned)."""
    from sparqlqa.remote import add_remote_kb

    kb = add_remote_kb(name, endpoint, profile_name, replace=replace, timeout=timeout_s)
    if as_json:
        print_json(kb.manifest.to_dict())
    else:
        console().print(f"[bold green]added[/] remote KB [bold]{kb.name}[/] → {endpoint}")


@kbs.command("annotate")
@click.argument("name", type=KB_NAME)
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True)
def kbs_annotate(name: str, files: tuple[Path, ...], as_json: bool) -> None:
    """Add the labels, skos:altLabels and comments that ontology FILES (Turtle) give relations and node
    types to knowledge base NAME, without re-ingesting (the store is not written; remote KBs too).

    This is how you teach the offline strategy the words your users say:
    '<…/relation/has_tags> skos:altLabel "keywords" .'
    """
    from sparqlqa.kb.ontologies import annotate_kb

    kb, unknown = annotate_kb(name, files)
    relations = [r for r in kb.schema.relations if r.aliases or r.comment]
    if as_json:
        print_json({"kb": kb.name, "unknown": unknown, "ontologies": kb.manifest.extra.get("ontologies", []),
                    "relations": [{"iri": r.iri, "label": r.label, "aliases": r.aliases} for r in relations]})
        return
    console().print(f"[bold green]annotated[/] KB [bold]{kb.name}[/]: "
                    f"{len(relations)} relations now have aliases or comments")
    for iri in unknown:
        note(f"not a relation or node type of {kb.name}, ignored: {iri}")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print as JSON.")
def samples(as_json: bool) -> None:
    """List the sample knowledge bases shipped with sparqlqa: where each file is and how to ingest it."""
    from sparqlqa.samples import SAMPLES

    rows = [{"name": s.name, "path": str(s.path), "about": s.about, "ingest": s.ingest_command(s.name, str(s.path)),
             "ask": f'sparqlqa ask {s.name} "{s.question}"'} for s in SAMPLES.values()]
    if as_json:
        print_json(rows)
        return
    for row in rows:
        click.echo(f"{row['name']}: {row['about']}\n  file:  {row['path']}\n  build: {row['ingest']}\n"
                   f"  ask:   {row['ask']}")


def _folding_table(*columns: str, title: str | None = None) -> Any:
    """A rich table whose cells wrap onto more lines rather than being cropped with '…'."""
    from rich.table import Table

    table = Table(title=title)
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _render_schema(kb: Any) -> None:
    from pyoxigraph import NamedNode

    from sparqlqa.kb.results_format import shorten
    from sparqlqa.kb.schema import relation_names
    from sparqlqa.kb.vocab import kb_prefixes

    schema = kb.schema
    prefixes = kb_prefixes(kb)
    out = console()
    out.print(f"[bold]{kb.name}[/]: {schema.triple_count:,} triples, {schema.node_count:,} nodes")
    grouped = any(t.kbs for t in schema.types) or any(r.kbs for r in schema.relations)  # a KB group
    member = ("in KB",) if grouped else ()
    types = _folding_table("node type", "label", "nodes", *member, title="Node types")
    for info in schema.types:
        types.add_row(cell(", ".join(shorten(NamedNode(i), prefixes) for i in info.iris)), cell(info.label),
                      f"{info.count:,}", *([cell(", ".join(info.kbs))] if grouped else []))
    out.print(types)
    relations = _folding_table("relation", "label", "count", "kind", "domain → range (count)", *member,
                               title="Relations")
    shown = relation_names(schema)
    for rel in schema.relations:
        relations.add_row(cell(shorten(NamedNode(rel.iri), prefixes)), cell(shown[rel.iri]), f"{rel.count:,}",
                          rel.kind, cell(_pairs_text(schema, rel, 3, "{:,}")),
                          *([cell(", ".join(rel.kbs))] if grouped else []))
    out.print(relations)
    for title, predicates in (("labels", schema.label_predicates), ("aliases", schema.alias_predicates),
                              ("text", schema.text_predicates)):
        names = ", ".join(shorten(NamedNode(p), prefixes) for p in predicates)
        out.print(cell(f"{title}: {names or '(none)'}"), soft_wrap=True, highlight=False)


def _pairs_text(schema: Any, rel: Any, limit: int | None = None, count: str = "{}") -> str:
    """``singer in concert → concert (10)``; a value relation's ``singer → value (6)``."""
    def end(iri: str | None) -> str:
        return "value" if iri is None and rel.kind == "literal" else schema.type_label(iri)

    return ", ".join(f"{schema.type_label(d)} → {end(r)} ({count.format(n)})" for d, r, n in rel.pairs[:limit])


def _schema_tsv(kb: Any) -> str:
    """The schema as tab-separated lines with full IRIs: ``type IRI label count`` and
    ``relation IRI label count kind domain→range pairs`` (the label as shown: ``singer name`` where
    another relation is labelled ``name`` too)."""
    from sparqlqa.kb.schema import relation_names

    schema = kb.schema
    lines = ["what\tiri\tlabel\tcount\tkind\tdomain → range (count)"]
    lines += [f"type\t{t.iri}\t{safe(t.label)}\t{t.count}\t\t" for t in schema.types]
    names = relation_names(schema)
    for rel in schema.relations:
        lines.append(f"relation\t{rel.iri}\t{safe(names[rel.iri])}\t{rel.count}\t{rel.kind}\t"
                     f"{safe(_pairs_text(schema, rel))}")
    return "\n".join(lines)


@click.command()
@click.argument("name", type=KB_NAME)
@click.option("--json", "as_json", is_flag=True, help="Print the schema as JSON.")
@click.option("--plain", is_flag=True, help="Tab-separated lines with full IRIs, for copying.")
def schema(name: str, as_json: bool, plain: bool) -> None:
    """Show the schema of knowledge base NAME: node types, relations, name predicates."""
    from sparqlqa.kb.knowledge_base import open_kb

    kb = open_kb(name)
    if as_json:
        print_json({"kb": kb.name, **kb.schema.to_dict()})
    elif plain:
        click.echo(_schema_tsv(kb))
    else:
        _render_schema(kb)


def _read_query(query: str) -> str:
    """The query text of QUERY (text, ``@file.rq`` or ``-`` for stdin), checked by ``clean_text``."""
    from sparqlqa.text_input import CODE, clean_text

    if query.startswith("@"):
        path = Path(query[1:])
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read query file {path}: {exc.strerror or exc}") from exc
        return clean_text(data, kind=CODE, field=f"the query file {path}")
    if query == "-":
        stdin = getattr(sys.stdin, "buffer", None)
        return clean_text(stdin.read() if stdin is not None else sys.stdin.read(), kind=CODE,
                          field="the query on stdin")
    return clean_text(query, kind=CODE, field="the query (QUERY)")


def _print_table(result: Any, prefixes: dict[str, str]) -> None:
    from sparqlqa.kb.results_format import shorten, to_ntriples

    if result.form == "ASK":
        console().print("yes" if result.boolean else "no")
        return
    if result.form != "SELECT":
        click.echo(to_ntriples(result), nl=False)
        return
    table = _folding_table(*(safe(v) for v in result.variables))
    for row in result.rows:
        table.add_row(*(cell(shorten(term, prefixes)) for term in row))
    console().print(table)
    note(f"{len(result.rows):,} row(s) in {result.elapsed_ms:.1f} ms")


@click.command()
@click.argument("name", type=KB_NAME)
@click.argument("query")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "csv", "tsv", "nt", "turtle", "jsonld"]),
              default="table", show_default=True,
              help="SELECT/ASK: table, json (SPARQL 1.1 JSON results), csv, tsv. CONSTRUCT/DESCRIBE: "
              "nt (also what table, csv and tsv print), turtle (the KB's prefixes), jsonld, or json "
              "({\"triples\": [...]}, terms as in SPARQL JSON results).")
@click.option("--json", "as_json", is_flag=True, help="Same as --format json.")
@click.option("--allow-service", "allow_service", multiple=True, metavar="HOST",
              help="A host (HOST or HOST:PORT) the query's SERVICE may call (repeatable; default: refused).")
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0.1), default=DEFAULT_TIMEOUT_S, show_default=True,
              metavar="SECONDS", help="Stop the query after this many seconds.")
@click.option("--max-rows", "max_rows", type=click.IntRange(min=1), default=DEFAULT_MAX_ROWS, show_default=True,
              metavar="N", help="Stop the query past this many result rows (or triples).")
@click.option("--max-memory", "max_memory_mb", type=click.IntRange(min=16), default=DEFAULT_MAX_MEMORY_MB,
              show_default=True, metavar="MB", help="Stop the query when it needs more memory than this.")
def sparql(name: str, query: str, fmt: str, as_json: bool, allow_service: tuple[str, ...], timeout_s: float,
           max_rows: int, max_memory_mb: int) -> None:
    """Run a SPARQL query (text, @file.rq or - for stdin) on knowledge base NAME.

    Only SELECT, ASK, CONSTRUCT and DESCRIBE run; updates are refused. The usual
    prefixes (rdf, rdfs, owl, xsd, skos, schema, sqa, and kb: for the KB's own
    base IRI) may be used without declaring them. SERVICE calls another endpoint
    only when its host is allowed (--allow-service, or allow_service in the KB's profile).
    The query is stopped at --timeout, --max-rows or --max-memory (its worker process is
    ended), with an error naming the limit. On a remote KB, --timeout bounds the query sent to
    the endpoint (retries included); left at its default, it only caps the KB's own timeout.
    """
    from click.core import ParameterSource

    from sparqlqa.cli.remote_options import endpoint_timeout
    from sparqlqa.kb.knowledge_base import open_kb
    from sparqlqa.kb.results_format import format_result
    from sparqlqa.kb.vocab import kb_prefixes
    from sparqlqa.query.service_guard import allowance
    from sparqlqa.query.sparql_reading import query_with_prefixes

    hosts = allowance(allow_service)
    limits = QueryLimits(timeout_s=timeout_s, max_rows=max_rows, max_memory_mb=max_memory_mb)
    kb = open_kb(name)
    if hosts:
        kb.store.allow_service = kb.store.allow_service | hosts
    prefixes = kb_prefixes(kb)
    # a remote KB: --timeout given is the endpoint query's deadline; the default only caps the KB's own
    explicit = click.get_current_context().get_parameter_source("timeout_s") != ParameterSource.DEFAULT
    with kb, endpoint_timeout(timeout_s, cap=not explicit):
        result = query_with_prefixes(lambda text: kb.query(text, limits=limits), _read_query(query), prefixes)
    fmt = "json" if as_json else fmt
    if fmt == "table":
        _print_table(result, prefixes)
    else:
        click.echo(format_result(result, fmt, prefixes), nl=False)
