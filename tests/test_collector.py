"""``core.collector.paused``: the cyclic collector is off inside, back as it was after."""

import gc
from collections.abc import Iterator

import pytest

from core import collector


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.usefixtures("collector_on")
def test_paused_turns_the_collector_off_inside_and_back_on_after() -> None:
    with collector.paused():
        assert not gc.isenabled()
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_paused_turns_it_back_on_after_an_error() -> None:
    with pytest.raises(RuntimeError), collector.paused():
        raise RuntimeError("inside")
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_a_pause_inside_a_pause_leaves_it_off_until_the_outer_one_ends() -> None:
    with collector.paused():
        with collector.paused():
            pass
        assert not gc.isenabled()
    assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_collect_after_frees_the_cycles_made_inside() -> None:
    class Node:
        pass

    with collector.paused(collect_after=True):
        a, b = Node(), Node()
        a.other, b.other = b, a  # type: ignore[attr-defined]
        del a, b
        assert any(type(o) is Node for o in gc.get_objects())
    assert not any(type(o) is Node for o in gc.get_objects())
