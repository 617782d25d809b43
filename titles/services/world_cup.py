"""World Cup representation (SPEC §6): China's #1 of a stake ranking at a month's end
qualifies for Master, dated the last day of the month (Asia/Shanghai), pending review."""

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from accounts.models import Player, User
from core.clock import tour_today
from core.errors import ServiceError
from titles.domain.dates import month_end
from titles.models import QualificationRule, StakeRanking, WorldCupRepresentative
from titles.recompute import titles_lock
from titles.services.ledger import achievement_withdraw, record_pending


def _world_cup_source(year: int, month: int, ranking: str) -> str:
    return f"world_cup:{year}-{month:02d}:{ranking}"


def _world_cup_record(representative: WorldCupRepresentative) -> bool:
    rule = QualificationRule.objects.filter(
        key=f"world_cup_{representative.ranking}", active=True
    ).first()
    if rule is None:
        return False
    _, written = record_pending(
        rule=rule,
        player=representative.player,
        on=month_end(representative.year, representative.month),
        source=_world_cup_source(representative.year, representative.month, representative.ranking),
        evidence={
            "world_cup": f"{representative.year}-{representative.month:02d}",
            "ranking": representative.ranking,
        },
        by=None,
    )
    return written


def world_cup_representative_enter(
    *, year: int, month: int, ranking: str, player: Player, by: User
) -> WorldCupRepresentative:
    """Enter (or correct) China's #1 of a World Cup stake ranking for a month.

    For a month that has already ended the qualification is recorded at once; correcting
    the player then withdraws the previous player's qualification.
    """
    if not 1 <= month <= 12:
        raise ServiceError(f"No month {month}.")
    if ranking not in StakeRanking.values:
        raise ServiceError(f"Unknown stake ranking {ranking!r}.", detail=StakeRanking.values)
    with transaction.atomic():
        representative = (
            WorldCupRepresentative.objects.select_for_update()
            .filter(year=year, month=month, ranking=ranking)
            .first()
        )
        previous = representative.player if representative is not None else None
        titles_lock([player.pk] + ([previous.pk] if previous is not None else []))
        if representative is None:
            representative = WorldCupRepresentative.objects.create(
                year=year, month=month, ranking=ranking, player=player, entered_by=by
            )
        elif previous is not None and previous.pk != player.pk:
            representative.player, representative.entered_by = player, by
            representative.entered_at = timezone.now()
            representative.save()
        else:
            return representative
        if month_end(year, month) < tour_today():
            if previous is not None:
                achievement_withdraw(
                    source=_world_cup_source(year, month, ranking),
                    player=previous,
                    by=by,
                    reason="World Cup representative corrected",
                )
            _world_cup_record(representative)
        return representative


def world_cup_snapshot(*, year: int | None = None, month: int | None = None) -> int:
    """Turn a month's World Cup representatives (default: last month's) into Master
    qualifications dated the last day of the month, pending review. Only for a month that
    has ended (Asia/Shanghai); idempotent. Returns the number of qualifications recorded."""
    if year is None or month is None:
        first = tour_today().replace(day=1)
        last_month = first - timedelta(days=1)
        year, month = last_month.year, last_month.month
    if month_end(year, month) >= tour_today():
        raise ServiceError(f"{year}-{month:02d} has not ended yet (Asia/Shanghai).")
    representatives = WorldCupRepresentative.objects.filter(year=year, month=month)
    return sum(
        _world_cup_record(r) for r in representatives.select_related("player").order_by("ranking")
    )
