"""A query worker without network: a seccomp filter that refuses every socket but a Unix one.

Oxigraph runs ``SERVICE <http://host/…>`` by fetching that URL, and pyoxigraph cannot switch it off, so
:mod:`sparqlqa.query.service_guard` reads each query first and refuses a SERVICE whose host is not allowed.
A reading of the query that differs from Oxigraph's would turn into a request from our machine (to
127.0.0.1, an internal server, a cloud metadata address).  Defence in depth: a worker process of
:mod:`sparqlqa.query.query_pool` calls :func:`deny_network` before it reads any query, and from then on
``socket()`` fails with ``EACCES`` for every address family but ``AF_UNIX`` (its socket pair to the parent
is already open), so a SERVICE that slipped through fails as a clean Oxigraph error (``Permission
denied``) and nothing is sent.  ``io_uring_setup`` fails too (an io_uring can open sockets without the
``socket`` system call).  A run whose KB allows SERVICE hosts (``--allow-service``, a profile) gets a
*separate* worker without the filter (``QueryPool(network=True)``): seccomp sees only the numbers of a
call, never the address behind a ``connect`` pointer, so a filter cannot allow one host and not another.

**Why seccomp, through libseccomp.**

* It needs no privilege: after ``PR_SET_NO_NEW_PRIVS`` any process may filter itself, so it works for a
  user as it does for root in CI.  ``unshare(CLONE_NEWNET)`` needs ``CAP_SYS_ADMIN`` or unprivileged user
  namespaces, which many distributions and containers switch off.
* It covers every kind of socket on every kernel since 3.5 (UDP, raw, netlink included).  Landlock's
  network rules need kernel ABI v4 (Linux 6.7) and cover TCP ``bind``/``connect`` only.
* libseccomp (``libseccomp.so.2``, on every systemd distribution) writes the BPF program: the architecture
  check, the x32 system-call numbers, the numbers per architecture.  A hand-built program would carry
  those tables itself, and a mistake in them is a hole.
* The binding is the five functions below over ``ctypes``, not the ``pyseccomp`` package: its import
  runs ``ldconfig -p`` twice (``ctypes.util.find_library``), about 25 ms on every worker start
  (``benchmarks/bench_worker_sandbox.py`` measures what the filter costs).

Where there is no seccomp (not Linux, no libseccomp, a kernel or container that refuses the filter),
:func:`deny_network` returns the reason instead; the pool logs one warning per process and the guard
is the only line.
"""

from __future__ import annotations

__all__ = ["LIBRARY", "deny_network"]

import ctypes
import errno
import socket
import sys

#: the library (its soname: loaded without a search)
LIBRARY = "libseccomp.so.2"
#: libseccomp's constants (seccomp.h): actions, the attribute that syncs every thread, a comparison
_ACT_ALLOW = 0x7FFF0000
_FLTATR_CTL_TSYNC = 4
_CMP_NE = 1


def _errno_action(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)


class _ArgCmp(ctypes.Structure):
    """``struct scmp_arg_cmp``: argument ``arg`` compared with ``datum_a`` by ``op``."""

    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int), ("datum_a", ctypes.c_uint64),
                ("datum_b", ctypes.c_uint64)]


def deny_network(library: str = LIBRARY) -> str | None:
    """Filter this process (every thread): ``socket()`` of any family but ``AF_UNIX`` and ``io_uring_setup``
    fail with ``EACCES``.  ``None`` once the filter is in place, else why it is not (nothing changed)."""
    if not sys.platform.startswith("linux"):
        return f"seccomp is Linux only (this is {sys.platform})"
    try:
        lib = ctypes.CDLL(library, use_errno=True)
        return _filter(lib)
    except OSError as exc:
        return f"{library} cannot be loaded ({exc})"
    except AttributeError as exc:  # a library without one of the functions
        return f"{library} is not a usable libseccomp ({exc})"


def _filter(lib: ctypes.CDLL) -> str | None:
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint,
                                           ctypes.POINTER(_ArgCmp)]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_attr_set.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32]
    lib.seccomp_load.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    lib.seccomp_release.restype = None
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        return "seccomp_init failed"
    try:
        return _build_and_load(lib, ctx)
    finally:
        lib.seccomp_release(ctx)


def _build_and_load(lib: ctypes.CDLL, ctx: int) -> str | None:
    denied = _errno_action(errno.EACCES)
    lib.seccomp_attr_set(ctx, _FLTATR_CTL_TSYNC, 1)  # every thread; an old libseccomp without it: this one
    not_unix = (_ArgCmp * 1)(_ArgCmp(0, _CMP_NE, socket.AF_UNIX, 0))
    rules = [("socket", 1, not_unix), ("io_uring_setup", 0, None)]
    for name, count, args in rules:
        number = lib.seccomp_syscall_resolve_name(name.encode())
        if number < 0:
            if name == "socket":
                return "libseccomp does not know the socket system call here"
            continue  # an architecture or a libseccomp without io_uring
        status = lib.seccomp_rule_add_array(ctx, denied, number, count, args)
        if status < 0:
            return f"seccomp_rule_add({name}) failed: {errno.errorcode.get(-status, status)}"
    status = lib.seccomp_load(ctx)
    if status < 0:
        return f"seccomp_load failed: {errno.errorcode.get(-status, status)}"
    return None
