"""STaRK node documents: the text ``get_doc_info`` builds, per dataset, and node names.

Kept apart from :mod:`sparqlqa.ingest.stark` (which reads the files and writes quads) so each stays
small.  Everything here works on :class:`SkbData`, STaRK's processed files in memory.
"""

from __future__ import annotations

__all__ = ["Adjacency", "DocumentBuilder", "Ids", "SkbData", "compact_text", "node_aliases", "node_label"]

import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

Ids = npt.NDArray[np.int64]

#: AmazonSKB's default ``max_entries`` (reviews and Q&A shown per product: up to this + 2)
MAX_ENTRIES = 25
GENE_FIELDS = {
    "name": "gene name", "type_of_gene": "gene types", "alias": "other gene names",
    "other_names": "extended other gene names", "genomic_pos": "genomic position", "generif": "PubMed text",
    "interpro": "protein family and classification information", "summary": "protein summary text",
}


def compact_text(text: str) -> str:
    """STaRK's ``compact=True`` form of a document (what its published doc embeddings saw).

    >>> compact_text("- name: TP53\\n- type: gene/protein\\n")
    'name: TP53. type: gene/protein. '
    """
    text = text.replace("\n", ". ").replace("\r", "").replace("- ", "")
    text = text.replace(": .", ":").replace(":.", ":")
    return re.sub(r"\s{2,}", " ", text).replace(".. ", ". ")


@dataclass
class SkbData:
    """One SKB in memory: ``infos[i]`` is node ``i``'s ``node_info`` dict."""

    dataset: str
    infos: list[dict[str, Any]]
    edge_index: Ids
    edge_types: Ids
    node_types: Ids
    node_type_dict: dict[int, str]
    edge_type_dict: dict[int, str]
    node_type_list: list[int] = field(default_factory=list)

    @property
    def num_nodes(self) -> int:
        return len(self.infos)


# --- STaRK's view of the graph ---------------------------------------------------------------


class Adjacency:
    """Neighbours per node and edge type as STaRK's ``SKB.get_neighbor_nodes`` returns them.

    STaRK makes the graph undirected unless it already is; ``to_undirected(reduce="mean")`` then
    gives a node pair joined by several edge types the floor of their mean type id.
    """

    def __init__(self, edge_index: Ids, edge_types: Ids, num_nodes: int) -> None:
        rows, cols, types = edge_index[0], edge_index[1], edge_types
        if not self._symmetric(rows, cols, num_nodes):
            rows, cols, types = self._to_undirected(rows, cols, types, num_nodes)
        order = np.lexsort((cols, types, rows))
        rows, cols, types = rows[order], cols[order], types[order]
        keep = np.ones(len(rows), dtype=bool)
        keep[1:] = (rows[1:] != rows[:-1]) | (types[1:] != types[:-1]) | (cols[1:] != cols[:-1])
        rows, self._cols, self._types = rows[keep], cols[keep], types[keep]
        self._ptr = np.searchsorted(rows, np.arange(num_nodes + 1))

    @staticmethod
    def _symmetric(rows: Ids, cols: Ids, n: int) -> bool:
        return bool(np.array_equal(np.unique(rows * n + cols), np.unique(cols * n + rows)))

    @staticmethod
    def _to_undirected(rows: Ids, cols: Ids, types: Ids, n: int) -> tuple[Ids, Ids, Ids]:
        keys = np.concatenate([rows * n + cols, cols * n + rows])
        unique, inverse = np.unique(keys, return_inverse=True)
        sums = np.bincount(inverse, weights=np.concatenate([types, types]).astype(np.float64))
        merged = np.floor_divide(sums, np.bincount(inverse)).astype(np.int64)
        return unique // n, unique % n, merged

    def by_type(self, node: int) -> dict[int, list[int]]:
        """``{edge type id: neighbour ids ascending}`` of ``node``."""
        lo, hi = int(self._ptr[node]), int(self._ptr[node + 1])
        pairs = zip(self._types[lo:hi].tolist(), self._cols[lo:hi].tolist())
        return {kind: [c for _, c in group] for kind, group in itertools.groupby(pairs, key=lambda p: p[0])}


# --- documents (STaRK's get_doc_info, per dataset) -------------------------------------------


def _clean(value: dict[str, Any]) -> dict[str, Any]:
    """STaRK's ``clean_dict``: drop values printing as '' or 'nan', recursively."""
    return {k: _clean(v) if isinstance(v, dict) else v for k, v in value.items()
            if isinstance(v, dict) or str(v) not in ("", "nan")}


def _gene_value(key: str, value: Any) -> Any:
    try:
        if key == "interpro":
            return [v["desc"] for v in ([value] if isinstance(value, dict) else value)]
        if key == "generif":
            return " ".join("; ".join(v["text"] for v in value).split(" ")[:50000])
        if key == "genomic_pos" and isinstance(value, list):
            return value[0]
    except (KeyError, TypeError, IndexError):
        pass
    return value


def _vote(value: Any) -> int:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return 0
    try:
        return int(str(value).replace(",", ""))
    except ValueError:
        return 0


def _dimensions(details: Any) -> str:
    """AmazonSKB reads ``details.dictionary.product_dimensions``: only a nested ``dictionary`` has it."""
    inner = details.get("dictionary") if isinstance(details, dict) else None
    value = inner.get("product_dimensions") if isinstance(inner, dict) else None
    parts = value.split(" ; ") if isinstance(value, str) else []
    return f"- dimensions: {parts[0]}\n- weight: {parts[1]}\n" if len(parts) == 2 else ""


def _items(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else ([] if value is None else [value])


class DocumentBuilder:
    """Builds each node's ``sqa:text`` the way STaRK's ``get_doc_info`` does for its dataset."""

    def __init__(self, data: SkbData, *, add_rel: bool = True, compact: bool = False) -> None:
        self.data, self.add_rel, self.compact = data, add_rel, compact
        self.adj = Adjacency(data.edge_index, data.edge_types, data.num_nodes) if add_rel else None
        self.edge_id = {name: key for key, name in reversed(list(data.edge_type_dict.items()))}

    def type_name(self, node: int) -> str:
        return self.data.node_type_dict[self.data.node_type_list[node]]

    def document(self, node: int) -> str:
        dataset = self.data.dataset
        if dataset == "amazon" and self.type_name(node) in ("brand", "category", "color"):
            kind = self.type_name(node)  # returned before relations and compaction, as STaRK does
            return f"{kind} name: {self.data.infos[node].get(kind + '_name')}"
        build = {"prime": self._prime, "mag": self._mag, "amazon": self._amazon}[dataset]
        doc = build(node)
        return compact_text(doc) if self.compact else doc

    def _groups(self, node: int) -> dict[int, list[int]]:
        return self.adj.by_type(node) if self.adj is not None else {}

    # PRIME
    def _prime(self, node: int) -> str:
        info = _clean(self.data.infos[node])
        doc = f"- name: {info.get('name')}\n- type: {info.get('type')}\n- source: {info.get('source')}\n"
        lines = []
        details = info.get("details")
        for key, value in (details.items() if isinstance(details, dict) else ()):
            if str(value) in ("", "nan") or str(key).startswith("_") or "_id" in str(key):
                continue
            if info.get("type") == "gene/protein" and key in GENE_FIELDS:
                lines.append(f"  - {key} ({GENE_FIELDS[key]}): {_gene_value(key, value)}\n")
            else:
                lines.append(f"  - {key}: {value}\n")
        doc += "- details:\n" + "".join(lines) if lines else ""
        return doc + self._prime_relations(node) if self.add_rel else doc

    def _prime_relations(self, node: int) -> str:
        groups, parts = self._groups(node), []
        for type_id, type_name in self.data.edge_type_dict.items():
            neighbours = groups.get(type_id)
            if not neighbours:
                continue
            kinds = [self.data.node_type_list[i] for i in neighbours]
            part = f"\n  {type_name.replace(' ', '_')}: " + "{"
            for kind in set(kinds):  # iterated exactly as STaRK iterates its set of type ids
                names = ", ".join(f"{self.data.infos[i].get('name')}" for i, k in zip(neighbours, kinds) if k == kind)
                part += f"{self.data.node_type_dict[kind]}: ({names}),"
            parts.append(part + "}")
        return "- relations:\n" + "".join(parts) if parts else ""

    # MAG
    def _mag(self, node: int) -> str:
        info = self.data.infos[node]
        kind = info.get("type", self.type_name(node))
        if kind == "paper":
            doc = self._mag_paper(info)
            return doc + self._mag_relations(node) if self.add_rel else doc
        heads = {"author": ("- author name: ", "author"), "field_of_study": (" - field of study: ", "field"),
                 "institution": (" - institution: ", "institution")}
        head, word = heads.get(kind, (f" - {kind}: ", kind))
        doc = f"{head}{info.get('DisplayName')}\n"
        for key, what in (("PaperCount", "paper count"), ("CitationCount", "citation count")):
            if info.get(key, -1) != -1:
                doc += f"- {word} {what}: {info[key]}\n"
        return doc.replace("-1", "Unknown")

    @staticmethod
    def _mag_paper(info: dict[str, Any]) -> str:
        doc = f" - paper title: {info.get('title')}\n"
        doc += " - abstract: " + str(info.get("abstract", "")).replace("\r", "").rstrip("\n") + "\n"
        if str(info.get("Date", -1)) != "-1":
            doc += f" - publication date: {info['Date']}\n"
        for key, word in (("OriginalVenue", "venue"), ("JournalDisplayName", "journal"),
                          ("ConferenceSeriesDisplayName", "conference"),
                          ("ConferenceInstancesDisplayName", "conference")):
            if str(info.get(key, -1)) != "-1":
                return doc + f" - {word}: {info[key]}\n"
        return doc

    def _mag_relations(self, node: int) -> str:
        groups, parts = self._groups(node), []
        for type_id, type_name in self.data.edge_type_dict.items():
            neighbours = groups.get(type_id)
            if neighbours:
                names = [n for n in map(self._mag_neighbour, neighbours) if n is not None]
                parts.append(f"\n{type_name.replace('___', ' ')}: (" + ", ".join(names) + "),")
        return "- relations:\n" + "".join(parts) if parts else ""

    def _mag_neighbour(self, node: int) -> str | None:
        info = self.data.infos[node]
        if info.get("type") == "paper":
            return f"\"{info.get('title')}\""
        name = info.get("DisplayName", -1)
        if str(name) == "-1":
            return None
        if info.get("type") != "author":
            return f"{name}"
        affiliated = self.edge_id.get("author___affiliated_with___institution")
        places = [self.data.infos[j].get("DisplayName", -1) for j in self._groups(node).get(affiliated, [])] \
            if affiliated is not None else []
        places = [f"{p}" for p in places if str(p) != "-1"]
        return f"{name} ({', '.join(places)})" if places else f"{name}"

    # Amazon
    def _amazon(self, node: int) -> str:
        info = self.data.infos[node]
        doc = f"- product: {info.get('title')}\n"
        if "brand" in info:
            doc += f"- brand: {info['brand']}\n"
        doc += _dimensions(info.get("details"))
        description = info.get("description")
        if description:
            text = " ".join(description if isinstance(description, str) else map(str, _items(description)))
            if text.strip(" "):
                doc += f"- description: {text.strip(' ')}\n"
        features = _items(info.get("feature"))
        if features:
            doc += "- features: \n" + "".join(f"#{k + 1}: {f}\n" for k, f in enumerate(features)
                                             if f and "asin" not in str(f).lower())
        doc += self._amazon_reviews(_items(info.get("review"))) + self._amazon_qa(_items(info.get("qa")))
        return doc + self._amazon_relations(node) if self.add_rel else doc

    @staticmethod
    def _amazon_reviews(reviews: list[Any]) -> str:
        if not reviews:
            return ""
        get = [r if isinstance(r, dict) else {} for r in reviews]
        ranks = np.argsort(-np.array([_vote(r.get("vote")) for r in get]))  # numpy's default sort, as STaRK
        text = "- reviews: \n"
        for i, index in enumerate(ranks.tolist()):
            text += f"#{index + 1}:\nsummary: {get[index].get('summary')}\ntext: \"{get[index].get('reviewText')}\"\n"
            if i > MAX_ENTRIES:
                break
        return text

    @staticmethod
    def _amazon_qa(qas: list[Any]) -> str:
        if not qas:
            return ""
        text = "- Q&A: \n"
        for k, qa in enumerate(q if isinstance(q, dict) else {} for q in qas):
            text += f"#{k + 1}:\nquestion: \"{qa.get('question')}\"\nanswer: \"{qa.get('answer')}\"\n"
            if k > MAX_ENTRIES:
                break
        return text

    def _amazon_relations(self, node: int) -> str:
        groups = self._groups(node)

        def around(name: str) -> list[int]:
            key = self.edge_id.get(name)
            return groups.get(key, []) if key is not None else []

        doc = ""
        for name, heading in (("also_buy", "products also purchased"), ("also_view", "products also viewed")):
            titles = "".join(f"#{k + 1}: {self.data.infos[i].get('title')}\n" for k, i in enumerate(around(name)))
            doc += f"  {heading}: \n{titles}" if titles else ""
        brands = around("has_brand")
        if brands:
            doc += f"  brand: {self.data.infos[brands[0]].get('brand_name')}\n"
        return "- relations:\n" + doc if doc else ""


# --- names -----------------------------------------------------------------------------------


def node_label(data: SkbData, node: int, type_name: str) -> str:
    """The node's name: PRIME ``name``; MAG ``title`` / ``DisplayName``; Amazon ``title`` / ``<type>_name``."""
    info = data.infos[node]
    keys = {"prime": ("name",), "mag": ("title", "OriginalTitle") if type_name == "paper" else ("DisplayName",),
            "amazon": ("title",) if type_name == "product" else (f"{type_name}_name",)}[data.dataset]
    for key in keys:
        value = info.get(key)
        if value is not None and str(value).strip() not in ("", "nan", "-1"):
            return str(value).strip()
    return f"{type_name} {node}"


def node_aliases(data: SkbData, node: int, label: str) -> list[str]:
    """Other names: PRIME ``details.alias`` (genes), MAG ``OriginalTitle`` when it differs from the title."""
    info = data.infos[node]
    if data.dataset == "prime":
        details = info.get("details")
        found = _items(details.get("alias")) if isinstance(details, dict) else []
    elif data.dataset == "mag":
        found = _items(info.get("OriginalTitle"))
    else:
        found = []
    names = [str(a).strip() for a in found if isinstance(a, str)]
    return list(dict.fromkeys(a for a in names if a and a != "nan" and a != label))
