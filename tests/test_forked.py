"""core.forked: a call in a forked child process, on database connections of its own."""

import os
import threading
import time
from concurrent.futures import Future

import billiard
import pytest
from django.db import connection, transaction

from core.forked import Forked


def _pid_and(value: int) -> tuple[int, int]:
    return os.getpid(), value * 2


def _sum_later(base: int, first: Future[int], second: Future[list[int]]) -> int:
    return base + first.result() + sum(second.result())


def _fail(message: str) -> None:
    raise ValueError(message)


class _UnpicklableError(Exception):
    def __init__(self, lock: object) -> None:
        super().__init__("with a lock")
        self.lock = lock

    def __reduce__(self) -> str | tuple[object, ...]:
        raise TypeError("not picklable")


def _fail_unpicklable() -> None:
    raise _UnpicklableError(threading.Lock())


def _die() -> None:
    os._exit(3)


def _wait(values: Future[int]) -> int:
    return values.result()


def _backend() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (pid,) = cursor.fetchone()
    return int(pid)


def test_the_target_runs_in_another_process_and_its_value_comes_back() -> None:
    with Forked(_pid_and, 21) as forked:
        pid, value = forked.result()
    assert (pid != os.getpid(), value) == (True, 42)


def test_values_sent_later_resolve_the_childs_futures_in_order() -> None:
    with Forked(_sum_later, 100, waits=2) as forked:
        forked.send(5, [1, 2, 3])
        assert forked.result() == 111


def test_the_targets_error_is_raised_in_the_parent() -> None:
    with Forked(_fail, "bad window") as forked, pytest.raises(ValueError, match="^bad window$"):
        forked.result()


def test_an_error_that_does_not_pickle_comes_back_as_its_text() -> None:
    with Forked(_fail_unpicklable) as forked, pytest.raises(RuntimeError) as raised:
        forked.result()
    assert str(raised.value) == "_UnpicklableError('with a lock')"


def test_a_child_that_dies_without_answering_is_an_error_that_says_so() -> None:
    with Forked(_die) as forked, pytest.raises(RuntimeError) as raised:
        forked.result()
    assert str(raised.value) == "forked _die ended with exit code 3 before it answered"


def test_leaving_stops_a_child_still_waiting_for_its_values() -> None:
    with Forked(_wait, waits=1) as forked:
        process = forked._process
        assert process.is_alive()
    assert not process.is_alive()
    assert process.exitcode == -15  # terminated


@pytest.mark.django_db(transaction=True)
def test_the_child_opens_its_own_connection_and_leaves_the_parents_open() -> None:
    mine = _backend()
    with Forked(_backend) as forked:
        theirs = forked.result()
    assert theirs != mine
    assert _backend() == mine  # the parent's session survived the child's end
    assert _gone(theirs, within=5.0)  # and the child closed its own


def _gone(backend: int, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", [backend])
            if cursor.fetchone() == (0,):
                return True
        time.sleep(0.05)
    return False


@pytest.mark.django_db
def test_inside_a_transaction_no_child_is_started() -> None:
    assert connection.in_atomic_block
    children = len(billiard.active_children())
    with pytest.raises(RuntimeError, match="cannot see the rows of a transaction still open"):
        Forked(_pid_and, 1)
    assert len(billiard.active_children()) == children
    with transaction.atomic():  # the connection is still usable
        assert _backend() > 0


def _forked_from_here() -> tuple[bool, int]:
    with Forked(_pid_and, 4) as forked:
        pid, value = forked.result()
    return billiard.current_process().daemon, value if pid != os.getpid() else -1


def test_a_celery_workers_daemonic_process_may_start_the_child() -> None:
    with billiard.Pool(1) as pool:  # Celery's prefork workers are such processes
        assert pool.apply(_forked_from_here) == (True, 8)


def _forked_then_killed(pids: "billiard.connection.Connection") -> None:
    forked = Forked(_wait, waits=1)
    pids.send(forked._process.pid)
    time.sleep(60)  # killed meanwhile


def test_a_child_ends_when_its_parent_is_killed_before_it_is_done() -> None:
    reading, writing = billiard.Pipe(duplex=False)
    parent = billiard.Process(target=_forked_then_killed, args=(writing,))
    parent.start()
    child = reading.recv()
    assert _alive(child)
    os.kill(parent.pid, 9)  # as a time limit's SIGKILL: no close, no terminate
    parent.join()
    deadline = time.monotonic() + 5.0
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie, ended but not yet reaped by init, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
