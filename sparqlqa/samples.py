"""Sample knowledge bases shipped inside the package (``sparqlqa/data/samples``), so a wheel install
can build the demo KB without the repository.

>>> sample_path("movies").name
'movies.txt'
>>> SAMPLES["movies"].ingest_command("demo")
"sparqlqa ingest <path of movies.txt> --kb demo --format triples --sep '|'"
"""

from __future__ import annotations

__all__ = ["SAMPLES", "Sample", "sample_path"]

import shlex
from dataclasses import dataclass
from pathlib import Path

from sparqlqa.errors import UnknownNameError


@dataclass(frozen=True)
class Sample:
    name: str
    file: str
    format: str
    sep: str | None
    question: str
    about: str

    @property
    def path(self) -> Path:
        return Path(__file__).resolve().parent / "data" / "samples" / self.file

    def ingest_command(self, kb: str, path: str | None = None) -> str:
        """The shell command that builds this sample as KB ``kb``."""
        sep = f" --sep {shlex.quote(self.sep)}" if self.sep else ""
        where = shlex.quote(path) if path else f"<path of {self.file}>"
        return f"sparqlqa ingest {where} --kb {shlex.quote(kb)} --format {self.format}{sep}"


SAMPLES: dict[str, Sample] = {
    "movies": Sample("movies", "movies.txt", "triples", "|", "who directed the movies that Ginger Rogers acted in",
                     "a 4,828-triple slice of MetaQA's movie KB (Ginger Rogers, Ridley Scott, Tom Hanks, ...)"),
}


def sample_path(name: str = "movies") -> Path:
    """The file of bundled sample ``name``."""
    if name not in SAMPLES:
        raise UnknownNameError("sample", name, list(SAMPLES))
    return SAMPLES[name].path
