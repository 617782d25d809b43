"""A call in a forked child process on database connections of its own.

Python's threads share one interpreter lock, so two threads that both spend much of their
time in Python take turns on one core. :class:`Forked` runs its target in a child process
instead (``fork``: the child starts with the parent's memory, settings and test database,
nothing is pickled on the way in), so each side has a core of its own.

* The processes are billiard's (Celery's fork of :mod:`multiprocessing`), which, unlike the
  standard library's, may start a child from a daemonic process: a Celery worker's.
* It starts outside a transaction (the child could not see its rows).
* The child never uses the connections it inherits: it drops them (psycopg closes a
  connection only in the process that opened it, so the parent's sessions stay open) and
  opens its own on first use, closed when the target returns.
* Values the parent has only later reach the child through :meth:`Forked.send`: the
  target receives them as futures, resolved when they arrive.
* The child never outlives its parent's interest: :meth:`Forked.close` stops it, and a
  parent that ends any other way (killed by a time limit, say) closes its end of the pipe,
  on which the child ends at once.
* The target's return value, or its error, comes back pickled through a pipe;
  :meth:`Forked.result` returns it or raises it. A child that dies without answering is an
  error that says so.
"""

import logging
import os
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, Generic, TypeVar

import billiard
from billiard.connection import Connection
from django.db import connections

logger = logging.getLogger(__name__)

_T = TypeVar("_T")

#: The exit code of a child whose parent ended or gave up on it before it was done.
_ORPHANED = 70

#: How long :meth:`Forked.close` waits for a stopped child to end, in seconds.
_STOP_SECONDS = 10.0


class Forked(Generic[_T]):
    """``target(*args, *futures)`` in a forked child process, with ``waits`` futures that
    :meth:`send` resolves; use as a context manager (leaving stops a child still running)."""

    def __init__(self, target: Callable[..., _T], *args: Any, waits: int = 0) -> None:
        if any(c.in_atomic_block for c in connections.all(initialized_only=True)):
            raise RuntimeError("a forked child cannot see the rows of a transaction still open")
        context = billiard.get_context("fork")
        inputs, self._inputs = context.Pipe(duplex=False)
        self._output, output = context.Pipe(duplex=False)
        self._process = context.Process(
            target=_child,
            args=(target, args, waits, inputs, output, (self._inputs, self._output)),
            name=f"forked {getattr(target, '__name__', 'call')}",
            daemon=True,
        )
        self._process.start()
        inputs.close()
        output.close()

    def send(self, *values: Any) -> None:
        """Resolve the child's futures with ``values``, in order."""
        self._inputs.send(values)

    def result(self) -> _T:
        """What the target returned; its error is raised here."""
        try:
            returned, value = self._output.recv()
        except EOFError:
            self._process.join()
            raise RuntimeError(
                f"{self._process.name} ended with exit code {self._process.exitcode} "
                "before it answered"
            ) from None
        if not returned:
            raise value
        return value  # type: ignore[no-any-return]

    def close(self) -> None:
        """Stop the child if it is still running, and wait for it to end."""
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(_STOP_SECONDS)
        self._inputs.close()
        self._output.close()

    def __enter__(self) -> "Forked[_T]":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _child(
    target: Callable[..., Any],
    args: tuple[Any, ...],
    waits: int,
    inputs: Connection,
    output: Connection,
    parents: tuple[Connection, Connection],
) -> None:
    """The child's side: drop the inherited connections, watch the parent on a thread
    (:func:`_watch`; the parent's ends of the pipes, inherited, are closed first, or its end
    would never be seen), run ``target`` and send back ``(True, value)`` or ``(False, error)``."""
    for inherited in connections.all(initialized_only=True):
        inherited.connection = None  # not closed: the parent's session stays its own
    for end in parents:
        end.close()
    futures: list[Future[Any]] = [Future() for _ in range(waits)]
    threading.Thread(target=_watch, args=(inputs, futures), daemon=True).start()
    try:
        answer: tuple[bool, Any] = (True, target(*args, *futures))
    except BaseException as exc:  # noqa: BLE001 - sent to the parent, which raises it
        logger.exception("%s failed", billiard.current_process().name)
        answer = (False, exc)
    finally:
        connections.close_all()
    try:
        output.send(answer)
    except Exception:  # noqa: BLE001 - an error that does not pickle: its text instead
        output.send((False, RuntimeError(repr(answer[1]))))


def _watch(inputs: Connection, futures: list[Future[Any]]) -> None:
    """Resolve ``futures`` with the values the parent sends, then wait for the parent to
    close its end: when it ends, or is killed, before the child is done, the child ends
    too (its connection closes with it, and PostgreSQL rolls its work back)."""
    try:
        values = inputs.recv()
        for future, value in zip(futures, values, strict=True):
            future.set_result(value)
        inputs.recv()  # the parent sends nothing more: this returns only at its end
    except EOFError:
        pass
    os._exit(_ORPHANED)
