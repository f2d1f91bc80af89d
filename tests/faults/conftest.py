"""The fault suite's shared fixture: a private copy of the module's KB template in each test's home."""

from __future__ import annotations

from pathlib import Path

import pytest

from faults.helpers import copy_kbs


@pytest.fixture
def kb(template: tuple[Path, int], sparqlqa_home: Path) -> int:
    """A copy of the module's ``template`` KB (built once per module) in this test's home; its triple count."""
    copy_kbs(template[0], sparqlqa_home)
    return template[1]
