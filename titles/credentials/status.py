"""The revocation bits of the title credentials (SPEC §6, Credentials).

A Master term's credential has status index ``TitleTerm.id`` in the ``master`` lists, a
Lifetime title's ``LifetimeTitle.id`` in the ``lifetime`` lists (stable: an id never
changes). The bit is set when the term or title becomes ``void`` or ``revoked`` and cleared
when a replay brings it back (an appeal's restoration); a lapse changes nothing.
:func:`status_bits_write` is called by ``titles.writing`` in the transaction that changes the
states, so a committed title change and its bit are never seen apart.
"""

from collections import defaultdict
from collections.abc import Iterable

from django.db import connection
from django.utils import timezone

from titles.domain.credentials import STATUS_LIST_SIZE, bit_get, bit_set, status_position
from titles.models import StatusList, TermState

__all__ = ["KINDS", "REVOKED_STATES", "list_name", "status_bit", "status_bits_write"]

#: The families of status lists: by what the status index numbers.
KINDS = ("master", "lifetime")

#: States whose credential is revoked (its bit set).
REVOKED_STATES = frozenset({TermState.VOID.value, TermState.REVOKED.value})


def list_name(kind: str, index: int) -> str:
    """The status list that holds status index ``index`` of ``kind``."""
    return f"{kind}-{status_position(index)[0]}"


def status_bits_write(changes: Iterable[tuple[str, int, bool]]) -> None:
    """Set (``True``) or clear the bits of ``(kind, status index, value)``; call inside the
    title change's transaction. Lists are locked in name order (created, all clear, when
    missing), after the players' title rows every titles write locks first."""
    by_list: dict[str, list[tuple[int, bool]]] = defaultdict(list)
    for kind, index, value in changes:
        by_list[list_name(kind, index)].append((status_position(index)[1], value))
    if not by_list:
        return
    names = sorted(by_list)
    table = connection.ops.quote_name(StatusList._meta.db_table)
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} (name, bits, updated_at) "  # noqa: S608
            "SELECT name, %s, now() FROM unnest(%s::text[]) AS name "
            "ON CONFLICT (name) DO NOTHING",
            [bytes(STATUS_LIST_SIZE // 8), names],
        )
    now = timezone.now()
    for row in StatusList.objects.select_for_update().filter(name__in=names).order_by("name"):
        bits = bytearray(row.bits)
        for bit, value in by_list[row.name]:
            bit_set(bits, bit, value)
        StatusList.objects.filter(pk=row.pk).update(bits=bytes(bits), updated_at=now)


def status_bit(kind: str, index: int) -> bool:
    """Whether the credential of ``(kind, index)`` is revoked, as the list says."""
    number, bit = status_position(index)
    bits = StatusList.objects.filter(name=f"{kind}-{number}").values_list("bits", flat=True)
    stored = bits.first()
    return stored is not None and bit_get(bytes(stored), bit)
