"""A source's ingest report is typed; its manifest entry keeps the keys it had (path, size, the format's own)."""

from __future__ import annotations

from pathlib import Path

from sparqlqa.ingest.base import SourceReport


def test_a_formats_report_is_split_into_what_ingest_uses_and_what_the_manifest_keeps() -> None:
    report = SourceReport.of("/data/a.ttl", 12, {"format": "rdf/Turtle", "prefixes": {"ex": "http://x/"},
                                                 "quads_added": 2, "ontologies": ["stark-prime"]})
    assert report.prefixes == {"ex": "http://x/"} and report.ontologies == ["stark-prime"]
    assert report.to_dict() == {"path": "/data/a.ttl", "size": 12, "format": "rdf/Turtle", "quads_added": 2}
    assert list(report.to_dict()) == ["path", "size", "format", "quads_added"]
    assert SourceReport.of("b.nt", 0, {"format": "triples", "lines": 0}).prefixes == {}


def test_the_manifest_lists_each_source_without_its_prefixes(movies_ttl: Path) -> None:
    from sparqlqa.ingest import ingest

    kb = ingest([movies_ttl], kb="movies")
    [source] = kb.manifest.sources
    assert list(source) == ["path", "size", "format", "quads_added"] and source["size"] == movies_ttl.stat().st_size
