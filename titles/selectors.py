"""Title reads (SPEC §6: "anyone can ask: was X a Master on day D, and why").

Public reads use approved data only: the title on a day is replayed from the approved,
non-voided qualifications; the registry and the verification read the materialised state.
"""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from django.db.models import Q, QuerySet

from accounts.models import Player
from core.clock import tour_today
from titles.domain.codes import normalise_code, term_code
from titles.domain.replay import Term
from titles.models import (
    InternationalMaster,
    LifetimeTitle,
    PlayerTitle,
    Qualification,
    QualificationStatus,
    TermState,
    TitleStatus,
    TitleTerm,
)
from titles.recompute import player_history
from titles.services import review


@dataclass(frozen=True)
class TitlesOn:
    """A player's titles on one day and the qualifications behind them."""

    player: Player
    day: date
    status: str
    term: Term | None
    term_code: str | None
    lifetime_since: date | None
    qualifications: list[Qualification]
    international: list[InternationalMaster]


def player_titles_on(*, player: Player, day: date) -> TitlesOn:
    """Status on ``day``, the Master term covering it and the approved qualifications
    behind it (the term's, then the Lifetime one), and International Master records
    valid that day (kept separately, SPEC §6 rule 4)."""
    history = player_history(player.pk)
    term = history.term_on(day)
    sources = [q.source for q in history.qualifications_behind(day)]
    rows = {
        q.source: q
        for q in Qualification.objects.filter(
            player=player, status=QualificationStatus.APPROVED, source__in=sources
        ).select_related("rule")
    }
    international = list(
        InternationalMaster.objects.filter(player=player, granted_on__lte=day)
        .filter(Q(valid_until__isnull=True) | Q(valid_until__gte=day))
        .order_by("granted_on")
    )
    lifetime = history.lifetime_since if history.status_on(day) == TitleStatus.LIFETIME else None
    return TitlesOn(
        player=player,
        day=day,
        status=history.status_on(day),
        term=term,
        term_code=term_code(player.external_id, term.start) if term is not None else None,
        lifetime_since=lifetime,
        qualifications=[rows[source] for source in sources],
        international=international,
    )


def registry(*, province: str | None = None, status: str | None = None) -> QuerySet[PlayerTitle]:
    """Current Masters (valid today, Asia/Shanghai) and Lifetime Masters, by player id;
    optionally of one province or one status (``master`` / ``lifetime``)."""
    today = tour_today()
    current = Q(status=TitleStatus.MASTER, valid_until__gte=today) | Q(status=TitleStatus.LIFETIME)
    rows = PlayerTitle.objects.filter(current).select_related("player")
    if province:
        rows = rows.filter(player__province=province)
    if status:
        rows = rows.filter(status=status)
    return rows.order_by("player__external_id")


def current_lifetime_title(*, player: Player) -> LifetimeTitle | None:
    """The player's Lifetime title in force (its code names its credential), if any."""
    return LifetimeTitle.objects.filter(player=player, state=TermState.CURRENT).first()


def term_by_code(*, code: str) -> TitleTerm | None:
    """The term with verification code ``code`` (any case, spaces and hyphens ignored)."""
    return TitleTerm.objects.select_related("player").filter(code=normalise_code(code)).first()


def lifetime_by_code(*, code: str) -> LifetimeTitle | None:
    """The Lifetime title with verification code ``code`` (normalised as a term's)."""
    return LifetimeTitle.objects.select_related("player").filter(code=normalise_code(code)).first()


@dataclass(frozen=True)
class QueueItem:
    qualification: Qualification
    held: bool
    audited: bool


def review_queue() -> QuerySet[Qualification]:
    """Pending grants, oldest achievement first (SPEC §6 review)."""
    return (
        Qualification.objects.filter(status=QualificationStatus.PENDING)
        .select_related("player", "rule")
        .order_by("on", "id")
    )


def review_items(
    qualifications: list[Qualification], *, audited: Callable[[Qualification], bool]
) -> list[QueueItem]:
    """The grants with their player's integrity status: a held player's grants cannot be
    approved (one check per player), nor those whose event audit has not cleared
    (``audited``: the integrity audit's answer, ``flows.grants.grant_audit_is_clean``)."""
    players = {q.player_id: q.player for q in qualifications}
    held = {pk: review.player_is_held(player) for pk, player in players.items()}
    return [
        QueueItem(qualification=q, held=held[q.player_id], audited=audited(q))
        for q in qualifications
    ]
