"""Concurrency on PostgreSQL with real threads (each its own connection and transactions).

Already covered where the service lives, not repeated here:

* the same ingest batch submitted twice at once is stored once —
  ``tests/tournaments/test_ingest.py::test_the_same_batch_from_two_threads_at_once_is_stored_once``;
* two finalisations of one event finalise it once —
  ``tests/tournaments/test_finalise.py::test_concurrent_finalisations_finalise_once``;
* two reviewers deciding one grant: one decision, one 409 —
  ``tests/titles/test_review.py::test_two_reviewers_deciding_at_once_one_wins_one_conflicts``.

Here: the daily expiry sweep racing an approval that extends the expiring term, and a mixed
stress run (``STRESS_SECONDS``, default 30) of ingest batches, leaderboard reads, approvals
and rejections, expiry sweeps and finalisations of separate events, which must end with no
deadlock or database error and with the invariants intact: each game stored once, standings
equal to their recomputation from the seats (``standing_from_scores``), titles equal to
their replay, every event finalised once.
"""

import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

import pytest
from django.db import close_old_connections, connection
from django.db.models import Count
from django.test import Client
from django.utils import timezone

from accounts.models import Player
from core.domain.clock import TOUR_TZ
from core.errors import ServiceError
from flows import grants
from flows.finalisation import event_finalise
from flows.ingest import games_ingest
from tests.tournaments.conftest import make_record
from tests.tournaments.factories import local, make_event, make_season
from titles import services as titles
from titles.models import PlayerTitle, Qualification, TitleChange, TitleTerm
from titles.recompute import titles_recompute_all
from tournaments.domain.leaderboard import standing_from_scores
from tournaments.models import Event, Game, Seat, Standing
from tournaments.selectors.leaderboard import leaderboard_rows

pytestmark = [pytest.mark.django_db(transaction=True)]

STRESS_SECONDS = float(os.environ.get("STRESS_SECONDS", "30"))
PROVINCES = ("江苏", "浙江", "广东", "北京", "上海", "四川")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[date], None]:
    """``clock(day)``: from now on it is noon of ``day`` in Asia/Shanghai (every thread)."""

    def set_day(day: date) -> None:
        moment = datetime.combine(day, datetime.min.time(), TOUR_TZ) + timedelta(hours=12)
        monkeypatch.setattr(timezone, "now", lambda: moment)

    return set_day


def titles_snapshot() -> dict[str, Any]:
    """Everything the title replay materialises, comparable across a recompute."""
    return {
        "titles": sorted(
            PlayerTitle.objects.values_list("player_id", "status", "valid_until", "lifetime_since")
        ),
        "terms": sorted(
            TitleTerm.objects.values_list("player_id", "start", "valid_until", "state")
        ),
        "history": sorted(
            TitleChange.objects.filter(retraction__isnull=True).values_list(
                "player_id", "kind", "on", "source"
            )
        ),
    }


def in_threads(*targets: Callable[[], object], timeout: float = 60) -> list[BaseException]:
    """Run the targets at once (after a barrier); returns what they raised."""
    barrier = threading.Barrier(len(targets))
    failures: list[BaseException] = []

    def run(target: Callable[[], object]) -> None:
        try:
            barrier.wait(timeout=10)
            target()
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            failures.append(exc)
        finally:
            close_old_connections()
            connection.close()

    threads = [threading.Thread(target=run, args=(target,)) for target in targets]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(thread.is_alive() for thread in threads), "a thread is stuck"
    return failures


def _grants(player: Player) -> Qualification:
    """An approved Master qualification of 2020-05-15 (valid through 2021-05-15) and a
    pending one of 2021-05-10, which extends that term to 2022-05-15 once approved."""
    first = titles.achievement_record(
        achievement="monthly_champion",
        player=player,
        on=date(2020, 5, 15),
        source=f"stress:{player.external_id}:1",
        evidence={"note": "seed"},
        by=None,
    )
    assert first is not None
    grants.qualification_approve(
        qualification=first, by=None, reason="seed", expected_version=first.version
    )
    second = titles.achievement_record(
        achievement="monthly_champion",
        player=player,
        on=date(2021, 5, 10),
        source=f"stress:{player.external_id}:2",
        evidence={"note": "seed"},
        by=None,
    )
    assert second is not None
    return second


def test_the_expiry_sweep_racing_an_approval_ends_consistent(
    clock: Callable[[date], None],
) -> None:
    """The sweep lapses the term ending 2021-05-15 while a reviewer approves the grant that
    extends it: whichever commits first, the end state is the replay's (a current term to
    2022-05-15), and a second sweep or a full recompute changes nothing."""
    rounds = 4
    clock(date(2021, 5, 12))
    pending = [
        _grants(Player.objects.create(external_id=f"r{i}", name=f"R{i}", province="江苏"))
        for i in range(rounds)
    ]
    clock(date(2021, 6, 1))

    for qualification in pending:

        def approve(q: Qualification = qualification) -> None:
            grants.qualification_approve(
                qualification=Qualification.objects.get(pk=q.pk),
                by=None,
                reason="extends",
                expected_version=q.version,
            )

        failures = in_threads(approve, titles.titles_expire)
        assert failures == []

    assert set(PlayerTitle.objects.values_list("status", "valid_until")) == {
        ("master", date(2022, 5, 15))
    }
    assert set(TitleTerm.objects.values_list("start", "valid_until", "state")) == {
        (date(2020, 5, 15), date(2022, 5, 15), "current")
    }
    before = titles_snapshot()
    assert titles.titles_expire() == 0
    titles_recompute_all(reason="check")
    assert titles_snapshot() == before


# --- the mixed stress run ------------------------------------------------------------------


@dataclass
class World:
    live: Event  # open weekly qualifier: ingest and leaderboard reads
    finals: list[Event]  # monthly finals to finalise, one by one
    players: list[Player]
    pending: list[Qualification]


def build_world(clock: Callable[[date], None]) -> World:
    clock(date(2021, 5, 12))
    season = make_season(best_n=3, minimum_games=3)
    players = Player.objects.bulk_create(
        [
            Player(external_id=f"s{i:03d}", name=f"玩家{i:03d}", province=PROVINCES[i % 6])
            for i in range(24)
        ]
    )
    pending = [_grants(player) for player in players]
    live = make_event(
        season,
        "2021-W20-Q",
        starts_at=local(2021, 5, 17, 0),
        ends_at=local(2021, 5, 23, 23),
        open_entry=True,
    )
    finals = []
    for month in range(1, 6):
        final = make_event(
            season,
            f"2021-{month:02d}-M",
            "monthly_final",
            starts_at=local(2021, month, 3, 10),
            ends_at=local(2021, month, 3, 23),
            open_entry=True,
            champion_achievement="monthly_champion",
        )
        rng = random.Random(month)
        records = []
        for game in range(12):
            table = rng.sample(players, 4)
            records.append(
                record_of(final, f"m{month}-{game}", table, local(2021, month, 3, 11), game)
            )
        assert games_ingest(records=records).ingested == 12
        finals.append(final)
    clock(date(2021, 6, 1))
    return World(live=live, finals=finals, players=players, pending=pending)


def record_of(
    event: Event, record_id: str, table: list[Player], start: datetime, offset: int
) -> dict[str, Any]:
    began = start + timedelta(minutes=offset)
    return make_record(
        record_id,
        event=event.code,
        players=[p.external_id for p in table],
        names=[p.name for p in table],
        provinces=[p.province for p in table],
        started_at=began.isoformat(),
        ended_at=(began + timedelta(minutes=2)).isoformat(),
    )


@dataclass
class Stress:
    deadline: float
    counts: Counter[str] = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def loop(self, name: str, step: Callable[[int], str | None]) -> Callable[[], None]:
        """Repeat ``step(i)`` until the deadline; it returns what to count (None: idle)."""

        def run() -> None:
            i = 0
            try:
                while time.monotonic() < self.deadline:
                    try:
                        counted = step(i)
                    except ServiceError as exc:  # a refusal is an answer, not a failure
                        counted = f"{name} refused ({exc.code})"
                    except Exception as exc:  # noqa: BLE001 - any other error fails the run
                        with self.lock:
                            self.failures.append(f"{name}: {type(exc).__name__}: {exc}")
                        return
                    if counted is None:
                        time.sleep(0.01)
                    else:
                        with self.lock:
                            self.counts[counted] += 1
                    i += 1
            finally:
                connection.close()

        return run


def test_mixed_stress_run_has_no_deadlock_and_keeps_the_invariants(
    clock: Callable[[date], None], ci_log: Callable[[str], None]
) -> None:
    world = build_world(clock)
    stress = Stress(deadline=time.monotonic() + STRESS_SECONDS)
    sent: dict[str, dict[str, Any]] = {}
    ingested = Counter[str]()
    queue = list(world.pending)
    decided: dict[int, int] = {}  # qualification -> version after our last decision
    finals = list(world.finals)
    finalised: list[str] = []

    def ingest(worker: int) -> Callable[[int], str]:
        rng = random.Random(worker)
        previous: list[dict[str, Any]] = []

        def step(i: int) -> str:
            nonlocal previous
            batch = [
                record_of(
                    world.live,
                    f"w{worker}-{i}-{j}",
                    rng.sample(world.players, 4),
                    local(2021, 5, 17 + worker, 1),
                    # later and earlier games: late arrivals recompute from the seats
                    rng.randrange(0, 20 * 60),
                )
                for j in range(10)
            ]
            report = games_ingest(records=batch + previous[:3])
            assert (report.conflicts, report.rejected) == ([], [])
            assert len(report.duplicates) == len(previous[:3])
            with stress.lock:
                sent.update({r["id"]: r for r in batch})
                ingested["games"] += report.ingested
            previous = batch
            return "ingest batches"

        return step

    def read(i: int) -> str:
        rows = list(leaderboard_rows(world.live)[:50])
        response = Client().get(f"/api/events/{world.live.code}/leaderboard/")
        assert response.status_code == 200
        assert response.json()["count"] >= len(rows)
        return "leaderboard reads"

    def decide(i: int) -> str:
        with stress.lock:
            if queue:
                qualification = queue.pop()
                version = qualification.version
                action = "approve"
            else:  # all approved: reverse and re-approve, each a full recompute
                pk = random.Random(i).choice(sorted(decided))
                qualification = Qualification.objects.get(pk=pk)
                version = decided[pk]
                action = "reject" if qualification.status == "approved" else "approve"
        decision = (
            grants.qualification_approve if action == "approve" else titles.qualification_reject
        )
        done = decision(
            qualification=qualification, by=None, reason=f"stress {i}", expected_version=version
        )
        with stress.lock:
            decided[done.pk] = done.version
        return f"{action}s"

    def sweep(i: int) -> str:
        titles.titles_expire()
        return "expiry sweeps"

    def finalise(i: int) -> str | None:
        with stress.lock:
            event = finals.pop(0) if finals else None
        if event is None:
            return None
        result = event_finalise(event=event, by=None)
        assert result.changed
        with stress.lock:
            finalised.append(event.code)
        return "finalisations"

    failures = in_threads(
        stress.loop("ingest-1", ingest(1)),
        stress.loop("ingest-2", ingest(2)),
        stress.loop("read", read),
        stress.loop("decide", decide),
        stress.loop("sweep", sweep),
        stress.loop("finalise", finalise),
        timeout=STRESS_SECONDS + 120,
    )

    assert failures == []
    assert stress.failures == []  # no deadlock, no OperationalError, no broken invariant
    # each game once
    games = Game.objects.filter(event=world.live)
    assert games.count() == ingested["games"] == len(sent)
    assert not games.values("record_id").annotate(n=Count("id")).filter(n__gt=1).exists()
    assert Seat.objects.filter(event=world.live).count() == 4 * len(sent)
    # standings equal their recomputation from the seats
    for standing in Standing.objects.filter(event=world.live):
        scores = list(
            Seat.objects.filter(event=world.live, player_id=standing.player_id).values_list(
                "score", "ended_at"
            )
        )
        expected = standing_from_scores(standing.player_key, standing.province, scores, 3)
        assert (standing.games, tuple(standing.kept), standing.total, standing.best) == (
            expected.games,
            expected.kept,
            expected.total,
            expected.best,
        ), standing.player_key
    # every final finalised once, its champion's grant recorded once
    assert sorted(finalised) == sorted(e.code for e in world.finals)
    for event in world.finals:
        event.refresh_from_db()
        assert event.status == "finalised"
        assert Qualification.objects.filter(source__startswith=f"event:{event.code}:").count() == (
            1 if event.champion_id else 0
        )
    # titles equal their replay; a further sweep changes nothing
    before = titles_snapshot()
    assert titles.titles_expire() == 0
    titles_recompute_all(reason="check")
    assert titles_snapshot() == before

    total = sum(stress.counts.values())
    ci_log(
        f"stress ({STRESS_SECONDS:.0f} s, 6 threads): {total} operations — "
        + ", ".join(f"{n} {name}" for name, n in sorted(stress.counts.items()))
        + f"; {len(sent)} games stored once"
    )
    assert stress.counts["ingest batches"] > 0
    assert stress.counts["leaderboard reads"] > 0
    assert stress.counts["expiry sweeps"] > 0
    assert stress.counts["approves"] > 0
