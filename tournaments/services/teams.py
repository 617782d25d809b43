"""Team events with rotating partners (SPEC §4 "Team events", 组队竞赛规则): the schedule
seated from the event's entrants, and the standings of individual totals.

* **The schedule** (``team_schedule_create``): a seated event whose entrants (a multiple of
  4) play ``tournaments.domain.teams.rotating_partners``: n - 1 rounds, each a perfect
  matching into partnerships, two partnerships a table, teammates opposite, every pair
  partnering once; each round is ``games_per_round`` games a table (default 4). All rounds
  are seated at once, as ``SeatedRound`` rows of format ``partners`` (``games`` = the games
  per table), table seats 1-4 in the domain's seat order 0-3, so teammates sit at seats 1
  and 3, 2 and 4. The seed (drawn at random when the organiser gives none) is recorded on
  every round; ``tournaments.selectors.seated.seated_round_replay`` rebuilds any round from
  it. An event that already has rounds gets no schedule; the schedule is not redrawn.
* **Games** are entered per table with ``tournaments.services.table_games.table_game_enter``
  (each seat's hand left), scored by tour doubles; rounds may be played in any order.
* **Standings** (``tournaments.selectors.seated.team_standings``): each player's individual
  total over the games entered, kept as the event's standings (``Standing``: ``games`` =
  games played, ``best`` = the best single game, ``reached_at`` = when the latest of them was
  entered), ranked in the season's tie-break order like every leaderboard: total, then games
  played, then the best single game, then the earlier time reaching the total, then the
  player id. The event is finalised like any seated event (``event_finalise``).
"""

import logging
import secrets

from django.db import transaction
from django.utils.translation import gettext as _

from accounts.models import User
from core.errors import ConflictError, ServiceError
from core.logs import log_event_on_commit
from tournaments.domain.teams import DEFAULT_GAMES_PER_ROUND, rotating_partners
from tournaments.models import Entry, Event, SeatedRound, SeatedTable, TableSeat
from tournaments.services.seated import SEED_BITS, locked_seated, seed_refuse

logger = logging.getLogger("unotour.tournaments")

#: The most games a partners table may play in one round (a sanity bound on the setting).
MAX_GAMES_PER_ROUND = 50


def team_schedule_create(
    *,
    event: Event,
    by: User | None,
    seed: int | None = None,
    games_per_round: int = DEFAULT_GAMES_PER_ROUND,
) -> list[SeatedRound]:
    """Seat every round of a rotating-partners event from its entrants and ``seed``."""
    seed_refuse(seed)
    if not 1 <= games_per_round <= MAX_GAMES_PER_ROUND:
        raise ServiceError(
            f"games per round must be 1 to {MAX_GAMES_PER_ROUND}, got {games_per_round}",
            detail={"games_per_round": games_per_round},
            say=_("每轮每桌局数须为 1 到 %(most)s，填的是 %(games)s。")
            % {"most": MAX_GAMES_PER_ROUND, "games": games_per_round},
        )
    with transaction.atomic():
        locked = locked_seated(event.pk, "seat a team schedule")
        seated = list(
            SeatedRound.objects.filter(event=locked)
            .order_by("number")
            .values_list("number", flat=True)
        )
        if seated:
            raise ConflictError(
                f"event {locked.code} already has {len(seated)} rounds seated; a team "
                "schedule seats all the rounds of an event with none",
                detail={"rounds": seated},
                say=_(
                    "赛事 %(code)s 已排了 %(n)s 轮；轮换搭档赛程只能为还没有排过轮次的赛事一次排好"
                    "全部轮次。"
                )
                % {"code": locked.code, "n": len(seated)},
            )
        players = dict(
            Entry.objects.filter(event=locked).values_list("player__external_id", "player_id")
        )
        chosen = secrets.randbits(SEED_BITS) if seed is None else seed
        try:
            schedule = rotating_partners(
                sorted(players), seed=chosen, games_per_round=games_per_round
            )
        except ValueError as exc:
            raise ServiceError(
                f"event {locked.code} has {len(players)} entrants: {exc}",
                detail={"entrants": len(players)},
                say=_(
                    "赛事 %(code)s 有 %(n)s 名参赛选手；轮换搭档赛事的人数须为 4 的倍数"
                    "（4、8、12……）。"
                )
                % {"code": locked.code, "n": len(players)},
            ) from None
        rounds = SeatedRound.objects.bulk_create(
            [
                SeatedRound(
                    event=locked,
                    number=number,
                    seed=chosen,
                    format=SeatedRound.Format.PARTNERS,
                    games=games_per_round,
                    created_by=by,
                )
                for number in range(1, len(schedule.rounds) + 1)
            ]
        )
        tables = SeatedTable.objects.bulk_create(
            [
                SeatedTable(round=seated_round, number=number)
                for seated_round, round_tables in zip(rounds, schedule.rounds, strict=True)
                for number in range(1, len(round_tables) + 1)
            ]
        )
        seated_tables = [table for round_tables in schedule.rounds for table in round_tables]
        TableSeat.objects.bulk_create(
            [
                TableSeat(table=row, player_id=players[key], seat=position)
                for row, table in zip(tables, seated_tables, strict=True)
                for position, key in enumerate(table, start=1)
            ]
        )
        log_event_on_commit(
            logger,
            logging.INFO,
            "team_schedule_created",
            event_code=locked.code,
            players=len(players),
            rounds=len(rounds),
            games_per_round=games_per_round,
            seed=chosen,
            by=None if by is None else by.pk,
        )
    return rounds
