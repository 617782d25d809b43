"""The CSV cell rule (``exports.spreadsheet``), without a database."""

import pytest

from exports.spreadsheet import neutralise, safe_row


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("=1+1", "'=1+1"),
        ("+86 138", "'+86 138"),
        ("-x", "'-x"),
        ("@x", "'@x"),
        ("\tx", "'\tx"),
        ("\rx", "'\rx"),
        ("小猴子", "小猴子"),
        ("a=b", "a=b"),
        ("", ""),
        (-15, -15),
        (None, None),
    ],
)
def test_neutralise(value: object, written: object) -> None:
    assert neutralise(value) == written


def test_safe_row_touches_only_text() -> None:
    assert safe_row({"name": "=x", "total": -3, "ok": True}) == {
        "name": "'=x",
        "total": -3,
        "ok": True,
    }
