"""Spreadsheet-safe CSV cells (OWASP's CSV injection rule): a text cell that begins with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return would be read as a formula by Excel or
LibreOffice, so it is written with a leading ``'`` (shown as text, the quote hidden).
Numbers are written as they are: a negative score stays a number."""

from typing import Any

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def neutralise(value: Any) -> Any:
    """``value``, made safe to open in a spreadsheet when it is text."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def safe_row(row: dict[str, Any]) -> dict[str, Any]:
    """A CSV row with every text cell neutralised."""
    return {key: neutralise(value) for key, value in row.items()}
