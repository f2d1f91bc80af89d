"""``--timeout SECONDS`` for the commands that talk to a SPARQL endpoint (``ask``, ``eval``, ``kbs add``).

One query to an endpoint gets one deadline, every retry, redirect and backoff wait included
(:mod:`sparqlqa.remote.endpoint`).  Without the option a KB keeps its own setting: the timeout
given to ``kbs add --timeout``, else ``timeout`` under ``[endpoint]`` in its profile, else 60 s.
``serve`` and ``mcp`` cap every endpoint query at 90% of their own ``--timeout`` (a request's limit):
``endpoint_timeout(seconds, cap=True)``.  Both are fields of the time limits in force for the ``with`` block
(:func:`sparqlqa.remote.endpoint.timeout_override`; :mod:`sparqlqa.deadlines`, one ContextVar): worker threads
see them when they run in a copy of the context, as serve's and eval's pools do.
"""

from __future__ import annotations

__all__ = ["ADD_HELP", "endpoint_timeout", "endpoint_timeout_option"]

from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TypeVar

import click

F = TypeVar("F", bound=Callable[..., object])

HELP = ("Seconds one query to a remote SPARQL endpoint may take, retries included (default: the KB's own "
        "setting: 'kbs add --timeout', else [endpoint] timeout in its profile, else 60).")


ADD_HELP = ("Seconds one query to the endpoint may take, retries included; kept as the KB's own setting "
            "(default: [endpoint] timeout in the profile, else 60).")


def endpoint_timeout_option(help_text: str = HELP) -> Callable[[F], F]:
    """The shared ``--timeout SECONDS`` option (parameter ``timeout_s``: seconds or ``None``)."""
    return click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True),
                        default=None, metavar="SECONDS", help=help_text)


def endpoint_timeout(seconds: float | None, *, cap: bool = False) -> AbstractContextManager[None]:
    """Within the ``with`` block, ``seconds`` is every endpoint query's deadline (``None``: each KB's own);
    with ``cap``, no endpoint query may outlive ``seconds`` (a server's request timeout)."""
    if seconds is None:  # nothing to change: a local ``ask`` does not import the endpoint client (issue 36)
        return nullcontext()
    from sparqlqa.remote.endpoint import timeout_override

    return timeout_override(seconds, cap=cap)
