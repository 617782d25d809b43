"""Identifiers and names (``core.domain.text``), without a database."""

import pytest

from core.domain.text import ident_problem, name_clean


@pytest.mark.parametrize("value", ["p0000001", "g-2021w05-0000001", "2021-W05-Q", "a.b_c", "X"])
def test_identifiers(value: str) -> None:
    assert ident_problem(value) is None


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("../../etc", "found U+002F 'SOLIDUS'"),
        ("p\u200b0000001", "found U+200B 'ZERO WIDTH SPACE'"),
        ("p 1", "found U+0020 'SPACE'"),
        ("p\u202e1", "found U+202E 'RIGHT-TO-LEFT OVERRIDE'"),
        ("玩家", "found U+73A9"),
        ("..", "may not be '.' or '..'"),
        ("", "must not be empty"),
        ("x" * 65, "longer than 64 characters"),
    ],
)
def test_not_identifiers(value: str, problem: str) -> None:
    found = ident_problem(value)
    assert found is not None
    assert problem in found


def test_names_are_stored_in_nfc() -> None:
    assert name_clean("Cafe\u0301") == ("Café", None)
    assert name_clean("小猴子") == ("小猴子", None)


@pytest.mark.parametrize(
    ("value", "char"),
    [
        ("evil\u202egnp", "U+202E"),
        ("a\u2066b", "U+2066"),
        ("小\u200b猴子", "U+200B"),
        ("a\ufeffb", "U+FEFF"),
        ("a\nb", "U+000A"),
    ],
)
def test_names_with_hidden_characters_are_refused(value: str, char: str) -> None:
    _, problem = name_clean(value)
    assert problem is not None
    assert char in problem
