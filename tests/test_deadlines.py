"""The time limits in force live in one ContextVar (``sparqlqa.deadlines``): the query scope, the call's deadline
and the endpoint timeout override and cap are fields of one record, each set by its own function for a block."""

from __future__ import annotations

import ast
import contextvars
import threading

import pytest
from test_architecture import modules

from sparqlqa.deadlines import Deadline, TimeLimits, in_force
from sparqlqa.net.call import current as call_deadline
from sparqlqa.net.call import within
from sparqlqa.query.limits import QueryLimits, bounded, current, unbounded
from sparqlqa.remote.endpoint import effective_timeout, timeout_override


def test_each_function_sets_its_own_field_of_the_one_record() -> None:
    call = Deadline(30)
    with timeout_override(8), bounded(QueryLimits(timeout_s=20)) as scope, within(call), \
            timeout_override(5, cap=True):
        assert in_force() == TimeLimits(query=scope, call=call, endpoint_timeout=8.0, endpoint_cap=5.0)
        assert (current(), call_deadline(), effective_timeout(60.0)) == (scope, call, 5.0)
    assert in_force() == TimeLimits()


def test_leaving_one_limit_keeps_the_others() -> None:
    call = Deadline(30)
    with bounded(QueryLimits(timeout_s=20)) as scope, timeout_override(9):
        with within(call), unbounded():
            assert (current(), call_deadline(), effective_timeout(60.0)) == (None, call, 9.0)
        with timeout_override(3):  # an inner override replaces the outer one, as it always did
            assert (current(), effective_timeout(60.0)) == (scope, 3.0)
        assert (current(), call_deadline(), effective_timeout(60.0)) == (scope, None, 9.0)


def test_an_inner_scope_cannot_widen_the_outer_one() -> None:
    with bounded(QueryLimits(timeout_s=5, max_rows=10)) as outer, within(Deadline(1)):
        with bounded(QueryLimits(timeout_s=500, max_rows=1000)) as inner:
            assert inner.deadline == outer.deadline and inner.limits.max_rows == 10
            assert call_deadline() is not None
        assert current() is outer


def test_a_thread_in_a_copied_context_sees_every_limit_a_plain_thread_none() -> None:
    seen: dict[str, TimeLimits] = {}

    def look(key: str) -> None:
        seen[key] = in_force()

    with bounded(QueryLimits(timeout_s=20)), within(Deadline(30)), timeout_override(4, cap=True):
        expected = in_force()
        copied = threading.Thread(target=contextvars.copy_context().run, args=(look, "copied"))
        plain = threading.Thread(target=look, args=("plain",))
        for thread in (copied, plain):
            thread.start()
            thread.join(timeout=10)
    assert seen == {"copied": expected, "plain": TimeLimits()}


def test_a_refused_override_leaves_the_record_as_it_was() -> None:
    from sparqlqa.errors import ConfigError

    with bounded(QueryLimits(timeout_s=20)):
        before = in_force()
        with pytest.raises(ConfigError), timeout_override(-1):
            pass
        assert in_force() is before


def _context_vars() -> list[str]:
    """The modules of the package that make a ContextVar (``ContextVar(...)`` or ``contextvars.ContextVar(...)``)."""
    found = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if called == "ContextVar":
                    found.append(name)
    return sorted(found)


def test_time_limits_have_one_context_var() -> None:
    """The other two carry no time: the LLM call context and the asker's language."""
    assert _context_vars() == ["sparqlqa.deadlines", "sparqlqa.language", "sparqlqa.llm.context"]
