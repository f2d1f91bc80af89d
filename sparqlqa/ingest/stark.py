"""STaRK semi-structured knowledge bases (PRIME, MAG, Amazon) as RDF.

Reads STaRK's published ``processed`` layout, unpacked or as the ``processed.zip`` from the
Hugging Face dataset ``snap-stanford/stark``::

    processed/node_info.pkl       {node id: {field: value}}
    processed/edge_index.pt       LongTensor [2, E] (head row, tail row)
    processed/edge_types.pt       LongTensor [E], keys of edge_type_dict
    processed/node_types.pt       LongTensor [N], keys of node_type_dict
    processed/edge_type_dict.pkl  {type id: name}   (MAG's zip may omit both dicts: STaRK's
    processed/node_type_dict.pkl  {type id: name}    built-in MAG dicts are used then)

Amazon's full graph (with brand/category/color nodes) lives in
``processed/cache/brand-category-color/`` and is preferred over the product-only ``processed/``.
Ingest a folder holding the files (or a ``processed/`` folder), the zip, or ``hf:prime`` /
``hf:mag`` / ``hf:amazon`` to download ``skb/{primekg,mag,amazon}/processed.zip`` first into
``$SPARQLQA_HOME/downloads/stark`` (needs ``pip install 'sparqlqa[stark]'``).

Every node ``i`` becomes ``{base}node/{i}`` (evaluation maps STaRK answer ids this way) with
``rdf:type`` (the class in ``sparqlqa/data/ontologies/stark-{dataset}.ttl``), ``sqa:sourceId`` (``i``),
``sqa:nodeType`` (the type as STaRK spells it), ``rdfs:label`` (name / title / DisplayName /
brand_name ...), ``skos:altLabel`` (PRIME gene aliases, MAG original titles) and ``sqa:text``.
Each stored edge becomes one triple in its stored direction, with the ontology's property.

``sqa:text`` is the text STaRK's ``get_doc_info(i, add_rel=True, compact=False)`` returns: exactly
what its LLM reranker puts in prompts (``LLMReranker`` calls ``get_doc_info(node_id, add_rel=True)``).
STaRK's published ada-002 document embeddings live in an ``emb/<dataset>/<model>/doc`` folder, which
its generator script names ``doc`` only when run with ``--add_rel --compact`` (otherwise ``doc_no_rel``
/ ``_no_compact``), and MultiVSS uses the same flags: embed ``compact_text(sqa:text)`` to see the
text those embeddings saw.  Options ``add_rel`` / ``compact`` change what is stored.  Relation lines
use STaRK's view of the graph: undirected, with PyG's ``to_undirected(reduce="mean")`` merge of edge
types when the stored edges are not already symmetric (PRIME's are: PrimeKG's kg.csv lists both
directions; MAG's and Amazon's are not).  Amazon brand/category/color documents are returned before
compaction, as STaRK does; review order follows numpy's default (unstable) argsort of votes, as STaRK's.

Pickles are read with an allow-list of classes (builtins, numpy, pandas data types): a
``node_info.pkl`` that needs anything else is refused rather than run.
"""

from __future__ import annotations

__all__ = ["Adjacency", "DocumentBuilder", "SkbData", "StarkSKB", "compact_text", "dataset_namespace", "download_skb",
           "guess_dataset", "node_aliases", "node_iri", "node_label", "open_layout", "read_skb", "resolve_source"]

import itertools
import pickle
import re
import shutil
import tempfile
import zipfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pyoxigraph import Literal, NamedNode, Quad, RdfFormat, parse

from sparqlqa.errors import IngestError, MissingExtraError
from sparqlqa.ingest.base import IngestFormat, IngestTarget, ingest_formats
from sparqlqa.ingest.stark_docs import (
    Adjacency,
    DocumentBuilder,
    Ids,
    SkbData,
    compact_text,
    node_aliases,
    node_label,
)
from sparqlqa.kb.vocab import OWL, RDF, RDFS, SKOS, SQA

DATASETS = ("prime", "mag", "amazon")
DATASET_ALIASES = {"primekg": "prime", "stark-prime": "prime", "stark-mag": "mag", "stark-amazon": "amazon"}
HF_REPO = "snap-stanford/stark"
HF_FOLDERS = {"prime": "primekg", "mag": "mag", "amazon": "amazon"}
HF_PREFIX = "hf:"
LAYOUT_DIRS = ("processed/cache/brand-category-color", "processed", "cache/brand-category-color", "")
BATCH = 50_000
LAYOUT_FILES = ("node_info.pkl", "edge_index.pt", "edge_types.pt", "node_types.pt", "edge_type_dict.pkl",
                "node_type_dict.pkl")
#: STaRK's built-in dicts, used when the files lack them (MagSKB always uses its own)
DEFAULT_DICTS: dict[str, tuple[dict[int, str], dict[int, str]]] = {
    "mag": ({0: "author", 1: "institution", 2: "field_of_study", 3: "paper"},
            {0: "author___affiliated_with___institution", 1: "paper___cites___paper",
             2: "paper___has_topic___field_of_study", 3: "author___writes___paper"}),
    "amazon": ({0: "product"}, {0: "also_buy", 1: "also_view"}),
}


def dataset_namespace(dataset: str) -> str:
    """The IRI namespace of a dataset's ontology, e.g. ``https://sparqlqa.dev/stark/prime#``."""
    return f"https://sparqlqa.dev/stark/{dataset}#"


def _term_local_name(name: str) -> str:
    """``gene/protein`` → ``gene_protein``; ``author___writes___paper`` → ``author_writes_paper``."""
    return re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_") or "unnamed"


def node_iri(base_iri: str, node_id: int) -> str:
    """The IRI of STaRK node ``node_id`` in a KB with ``base_iri``.

    >>> node_iri("https://sparqlqa.dev/kb/prime/", 42)
    'https://sparqlqa.dev/kb/prime/node/42'
    """
    return f"{base_iri}node/{int(node_id)}"


def _normalise_dataset(name: str) -> str:
    key = name.strip().lower()
    key = DATASET_ALIASES.get(key, key)
    if key not in DATASETS:
        raise IngestError(f"unknown STaRK dataset {name!r}", hint="use one of: prime, mag, amazon")
    return key


# --- reading the published layout ------------------------------------------------------------

_PICKLE_PREFIXES = ("collections", "datetime", "decimal", "copyreg", "numpy.core.multiarray",
                    "numpy._core.multiarray", "numpy.core.numeric", "numpy._core.numeric", "numpy.dtypes",
                    "pandas._libs", "pandas.core.series", "pandas.core.frame", "pandas.core.indexes",
                    "pandas.core.internals", "pandas.core.arrays", "pandas.core.dtypes")
_PICKLE_EXACT = {("numpy", "dtype"), ("numpy", "ndarray"), ("_codecs", "encode")}
_PICKLE_BUILTINS = {"set", "frozenset", "list", "dict", "tuple", "int", "float", "complex", "str", "bytes",
                    "bytearray", "bool", "slice", "range", "object"}


class _SafeUnpickler(pickle.Unpickler):
    """Loads data pickles; refuses any global outside an allow-list of data types."""

    def find_class(self, module: str, name: str) -> Any:
        allowed = (
            (module == "builtins" and name in _PICKLE_BUILTINS)
            or (module, name) in _PICKLE_EXACT
            or any(module == p or module.startswith(p + ".") for p in _PICKLE_PREFIXES)
        )
        if not allowed:
            raise pickle.UnpicklingError(f"refusing to load {module}.{name} from a data pickle")
        return super().find_class(module, name)


@dataclass
class _Files:
    """The folder holding the layout's files, and how to name them in messages."""

    folder: Path
    shown: str

    def path(self, name: str) -> Path:
        return self.folder / name

    def where(self, name: str) -> str:
        return f"{self.shown}/{name}"


def _find_layout_dir(folder: Path) -> Path | None:
    """The folder under ``folder`` whose ``node_info.pkl`` to read (Amazon's full cache first)."""
    for sub in LAYOUT_DIRS:
        candidate = folder / sub if sub else folder
        if (candidate / "node_info.pkl").is_file():
            return candidate
    return None


def _zip_layout_prefix(names: Iterable[str]) -> str | None:
    """The member folder (with trailing ``/``) of a zip listing to read, or None."""
    dirs = {n[: -len("node_info.pkl")] for n in names if n.endswith("node_info.pkl")}
    good = [d for d in dirs if d.rstrip("/").endswith(("processed", "processed/cache/brand-category-color"))
            and (d == "" or d.endswith("/"))]
    good.sort(key=lambda d: (not d.endswith("cache/brand-category-color/"), len(d)))
    return good[0] if good else None


@contextmanager
def open_layout(source: Path) -> Iterator[_Files]:
    """Yield the layout's files; a zip's are extracted to a temporary folder, then removed."""
    if source.is_file() and source.name == "node_info.pkl":
        source = source.parent
    if source.is_dir():
        folder = _find_layout_dir(source)
        if folder is None:
            raise IngestError("no node_info.pkl here nor in processed/", path=str(source),
                              hint="point at STaRK's processed folder, its parent, or processed.zip")
        yield _Files(folder, str(folder))
        return
    try:
        archive = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as exc:
        raise IngestError(f"not a readable zip file: {exc}", path=str(source)) from None
    with archive, tempfile.TemporaryDirectory(prefix="sparqlqa-stark-") as tmp:
        prefix = _zip_layout_prefix(archive.namelist())
        if prefix is None:
            raise IngestError("the zip has no processed/node_info.pkl", path=str(source))
        shown = f"{source}!{prefix.rstrip('/')}"
        present = set(archive.namelist())
        for name in (n for n in LAYOUT_FILES if prefix + n in present):
            try:
                with archive.open(prefix + name) as src, (Path(tmp) / name).open("wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
            except (zipfile.BadZipFile, OSError, EOFError) as exc:
                raise IngestError(f"cannot extract: {exc}", path=f"{shown}/{name}") from None
        yield _Files(Path(tmp), shown)


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise MissingExtraError("torch", "reading STaRK .pt files", "pip install torch==2.13.0") from None
    return torch


def _load_pickle(files: _Files, name: str) -> Any:
    try:
        with files.path(name).open("rb") as handle:
            return _SafeUnpickler(handle).load()
    except ModuleNotFoundError as exc:
        raise IngestError(f"the pickle needs the Python package {exc.name!r}", path=files.where(name),
                          hint=f"pip install {exc.name}") from None
    except (pickle.UnpicklingError, EOFError, ValueError, TypeError, AttributeError, ImportError) as exc:
        raise IngestError(f"not a readable pickle: {exc}", path=files.where(name)) from None


def _load_tensor(files: _Files, name: str, torch: Any, ndim: int) -> Ids:
    try:
        value = torch.load(str(files.path(name)), map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many kinds for a bad file
        raise IngestError(f"not a readable torch tensor file: {exc}", path=files.where(name)) from None
    if not isinstance(value, torch.Tensor):
        raise IngestError(f"expected a tensor, found {type(value).__name__}", path=files.where(name))
    array = value.detach().cpu().numpy()
    if array.ndim != ndim:
        raise IngestError(f"expected a {ndim}-d tensor, found shape {tuple(array.shape)}", path=files.where(name))
    if array.dtype.kind == "f" and array.size and not np.all(np.mod(array, 1) == 0):
        raise IngestError("expected integer ids, found fractional values", path=files.where(name))
    return array.astype(np.int64, copy=False)


def _type_dict(value: Any, files: _Files, name: str) -> dict[int, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, int | np.integer) and isinstance(v, str) for k, v in value.items()
    ):
        raise IngestError("expected a dict {type id (int): type name (str)}", path=files.where(name))
    return {int(k): v for k, v in value.items()}


def guess_dataset(type_names: Iterable[str], sample: dict[str, Any] | None) -> str | None:
    """Which STaRK dataset has these node types (or, without types, a node like ``sample``)."""
    names = set(type_names)
    if names & {"gene/protein", "effect/phenotype", "drug", "disease"}:
        return "prime"
    if names & {"paper", "field_of_study", "author"}:
        return "mag"
    if names & {"product", "brand"}:
        return "amazon"
    sample = sample or {}
    if "asin" in sample or "review" in sample or "brand_name" in sample:
        return "amazon"
    if "DisplayName" in sample or "abstract" in sample:
        return "mag"
    if "name" in sample and "source" in sample:
        return "prime"
    return None


def _node_infos(value: Any, files: _Files) -> list[dict[str, Any]]:
    if not isinstance(value, dict):
        raise IngestError(f"expected a dict {{node id: {{field: value}}}}, found {type(value).__name__}",
                          path=files.where("node_info.pkl"))
    infos: list[Any] = [None] * len(value)
    for key, info in value.items():
        if not isinstance(key, int | np.integer) or not 0 <= int(key) < len(value) or not isinstance(info, dict):
            raise IngestError(f"node {key!r}: expected ids 0..{len(value) - 1} mapping to dicts of fields",
                              path=files.where("node_info.pkl"))
        infos[int(key)] = info
    return infos


def _dicts(files: _Files, dataset: str | None,
           infos: list[dict[str, Any]]) -> tuple[str, dict[int, str], dict[int, str]]:
    found = {name: _type_dict(_load_pickle(files, name), files, name) if files.path(name).is_file() else None
             for name in ("node_type_dict.pkl", "edge_type_dict.pkl")}
    node_dict, edge_dict = found["node_type_dict.pkl"], found["edge_type_dict.pkl"]
    chosen = _normalise_dataset(dataset) if dataset else guess_dataset(
        (node_dict or {}).values(), infos[0] if infos else None)
    if chosen is None:
        raise IngestError("cannot tell which STaRK dataset this is", path=files.shown,
                          hint="pass the option dataset=prime|mag|amazon")
    defaults = DEFAULT_DICTS.get(chosen)
    for name, value in found.items():
        if value is None and defaults is None:
            raise IngestError("missing file", path=files.where(name), hint="STaRK's processed layout has it")
    node_dict = node_dict or (defaults[0] if defaults else {})
    edge_dict = edge_dict or (defaults[1] if defaults else {})
    return chosen, node_dict, edge_dict


def read_skb(files: _Files, dataset: str | None = None) -> SkbData:
    """Read and check the layout in ``files``; errors name the file and what is wrong."""
    torch = _torch()
    for name in ("node_info.pkl", "edge_index.pt", "edge_types.pt"):
        if not files.path(name).is_file():
            raise IngestError("missing file", path=files.where(name), hint="STaRK's processed layout has it")
    infos = _node_infos(_load_pickle(files, "node_info.pkl"), files)
    chosen, node_dict, edge_dict = _dicts(files, dataset, infos)
    if files.path("node_types.pt").is_file():
        node_types = _load_tensor(files, "node_types.pt", torch, 1)
    elif chosen == "amazon" and set(node_dict.values()) == {"product"}:
        node_types = np.zeros(len(infos), dtype=np.int64)  # STaRK's product-only graph
    else:
        raise IngestError("missing file", path=files.where("node_types.pt"))
    data = SkbData(chosen, infos, _load_tensor(files, "edge_index.pt", torch, 2),
                   _load_tensor(files, "edge_types.pt", torch, 1), node_types, node_dict, edge_dict)
    _check_shapes(data, files)
    data.node_type_list = node_types.tolist()
    return data


def _check_shapes(data: SkbData, files: _Files) -> None:
    n, edges = data.num_nodes, data.edge_index
    if edges.shape[0] != 2:
        raise IngestError(f"expected shape [2, E], found {list(edges.shape)}", path=files.where("edge_index.pt"))
    if data.edge_types.shape[0] != edges.shape[1]:
        raise IngestError(f"{data.edge_types.shape[0]} edge types for {edges.shape[1]} edges in edge_index.pt",
                          path=files.where("edge_types.pt"))
    if data.node_types.shape[0] != n:
        raise IngestError(f"{data.node_types.shape[0]} node types for {n} nodes in node_info.pkl",
                          path=files.where("node_types.pt"))
    if edges.size and (edges.min() < 0 or edges.max() >= n):
        raise IngestError(f"node ids outside 0..{n - 1}: {int(edges.max()) if edges.max() >= n else int(edges.min())}",
                          path=files.where("edge_index.pt"))
    for array, known, name, dict_name in ((data.edge_types, data.edge_type_dict, "edge_types.pt",
                                           "edge_type_dict.pkl"),
                                          (data.node_types, data.node_type_dict, "node_types.pt",
                                           "node_type_dict.pkl")):
        unknown = sorted(set(np.unique(array).tolist()) - set(known))
        if unknown:
            raise IngestError(f"type ids {unknown[:10]} are not in {dict_name}", path=files.where(name))


# --- quads -----------------------------------------------------------------------------------


def _ontology_terms(dataset: str) -> set[str]:
    from sparqlqa.kb.ontologies import ontology_path

    return {quad.subject.value for quad in parse(path=str(ontology_path(f"stark-{dataset}")),
                                                 format=RdfFormat.TURTLE)}


def _declarations(dataset: str, classes: dict[int, NamedNode], properties: dict[int, NamedNode],
                  data: SkbData) -> list[Quad]:
    """Classes and properties the bundled ontology lacks, typed and labelled from their names."""
    known, quads = _ontology_terms(dataset), []
    for terms, names, kind in ((classes, data.node_type_dict, OWL.Class),
                               (properties, data.edge_type_dict, OWL.ObjectProperty)):
        for key, term in terms.items():
            if term.value not in known:
                known.add(term.value)
                quads += [Quad(term, RDF.type, kind), Quad(term, RDFS.label, Literal(names[key]))]
    return quads


def _node_quads(data: SkbData, docs: DocumentBuilder, base_iri: str, classes: dict[int, NamedNode],
                tick: Callable[[int], None]) -> Iterator[Quad]:
    for node in range(data.num_nodes):
        iri, kind = NamedNode(node_iri(base_iri, node)), data.node_type_list[node]
        type_name = data.node_type_dict[kind]
        label = node_label(data, node, type_name)
        yield Quad(iri, RDF.type, classes[kind])
        yield Quad(iri, SQA.sourceId, Literal(node))
        yield Quad(iri, SQA.nodeType, Literal(type_name))
        yield Quad(iri, RDFS.label, Literal(label))
        for alias in node_aliases(data, node, label):
            yield Quad(iri, SKOS.altLabel, Literal(alias))
        yield Quad(iri, SQA.text, Literal(docs.document(node)))
        if node % BATCH == BATCH - 1:
            tick(BATCH)
    tick(data.num_nodes % BATCH)


def _edge_quads(data: SkbData, base_iri: str, properties: dict[int, NamedNode],
                tick: Callable[[int], None]) -> Iterator[Quad]:
    prefix = base_iri + "node/"
    for start in range(0, data.edge_index.shape[1], BATCH):
        heads = data.edge_index[0, start : start + BATCH].tolist()
        tails = data.edge_index[1, start : start + BATCH].tolist()
        kinds = data.edge_types[start : start + BATCH].tolist()
        for head, kind, tail in zip(heads, kinds, tails):
            yield Quad(NamedNode(f"{prefix}{head}"), properties[kind], NamedNode(f"{prefix}{tail}"))
        tick(len(heads))


def _progress(target: IngestTarget, total: int) -> Callable[[int], None]:
    """A callback adding ``n`` nodes or edges done to ``target.progress`` (units: nodes + edges)."""
    done = 0

    def tick(n: int) -> None:
        nonlocal done
        done += n
        if target.progress is not None:
            target.progress(done, total)

    return tick


def _flag(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, str):
        return value.strip().lower() in ("1", "true", "yes", "on")
    return bool(value)


# --- download --------------------------------------------------------------------------------


def download_skb(dataset: str, dest_dir: Path) -> Path:
    """Download ``skb/<dataset>/processed.zip`` of ``snap-stanford/stark`` into ``dest_dir``."""
    dataset = _normalise_dataset(dataset)
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise MissingExtraError("huggingface_hub", "downloading STaRK SKBs", "pip install 'sparqlqa[stark]'") from None
    filename = f"skb/{HF_FOLDERS[dataset]}/processed.zip"
    try:
        path = hf_hub_download(repo_id=HF_REPO, filename=filename, repo_type="dataset", local_dir=str(dest_dir))
    except Exception as exc:  # network, HTTP and hub errors come in many classes
        raise IngestError(f"could not download {filename} from the Hugging Face dataset {HF_REPO}: {exc}",
                          path=f"{HF_PREFIX}{dataset}",
                          hint="check the network (HF_ENDPOINT, proxies), or download processed.zip by hand "
                               "and ingest that file") from None
    return Path(path)


def resolve_source(source: Path) -> Path:
    """``hf:<dataset>`` (when no such file exists) → the downloaded zip; anything else unchanged."""
    text = str(source)
    if source.exists() or not text.startswith(HF_PREFIX):
        return source
    from sparqlqa.paths import sparqlqa_home

    return download_skb(text[len(HF_PREFIX):], sparqlqa_home() / "downloads" / "stark")


# --- the format ------------------------------------------------------------------------------


@ingest_formats.register("stark")
class StarkSKB(IngestFormat):
    """Options: ``dataset`` (prime|mag|amazon; guessed when absent), ``add_rel`` (default true)
    and ``compact`` (default false), the ``get_doc_info`` flags for ``sqa:text``."""

    suffixes: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def recognises(cls, source: Path) -> bool:
        text = str(source)
        if text.startswith(HF_PREFIX) and not source.exists():
            return text[len(HF_PREFIX):].strip().lower() in (*DATASETS, *DATASET_ALIASES)
        if source.is_dir():
            return _find_layout_dir(source) is not None
        if source.suffix.lower() != ".zip" or not zipfile.is_zipfile(source):
            return False
        try:
            with zipfile.ZipFile(source) as archive:
                return _zip_layout_prefix(archive.namelist()) is not None
        except (zipfile.BadZipFile, OSError):
            return False

    def prepare(self, source: Path) -> Path:
        return resolve_source(source)

    def load(self, source: Path, target: IngestTarget) -> dict[str, Any]:
        source = resolve_source(source)
        dataset = self.options.get("dataset")
        with open_layout(source) as files:
            data = read_skb(files, str(dataset) if dataset else None)
        add_rel, compact = _flag(self.options.get("add_rel"), True), _flag(self.options.get("compact"), False)
        docs = DocumentBuilder(data, add_rel=add_rel, compact=compact)
        namespace = dataset_namespace(data.dataset)
        classes = {k: NamedNode(namespace + _term_local_name(v)) for k, v in data.node_type_dict.items()}
        properties = {k: NamedNode(namespace + _term_local_name(v)) for k, v in data.edge_type_dict.items()}
        tick = _progress(target, data.num_nodes + int(data.edge_index.shape[1]))
        target.add(itertools.chain(  # one streamed bulk load: each call costs the store a fixed setup
            _declarations(data.dataset, classes, properties, data),
            _node_quads(data, docs, target.base_iri, classes, tick),
            _edge_quads(data, target.base_iri, properties, tick)))
        return {"format": "stark", "dataset": data.dataset, "nodes": data.num_nodes,
                "edges": int(data.edge_index.shape[1]), "text": {"add_rel": add_rel, "compact": compact},
                "ontologies": [f"stark-{data.dataset}"]}
