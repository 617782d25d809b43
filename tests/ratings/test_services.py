import random
from typing import Any

import pytest
from django.db import IntegrityError, transaction
from openskill.models import PlackettLuce

from accounts.models import Player
from ratings.models import Rating, RatingHistory, RatingState
from ratings.services import ratings_replay, ratings_update
from tests.ratings.conftest import T0, GameMaker

pytestmark = pytest.mark.django_db


def ratings() -> dict[int, tuple[float, float, float, int, bool]]:
    return {
        r.player_id: (r.mu, r.sigma, r.ordinal, r.games, r.provisional)
        for r in Rating.objects.all()
    }


def history() -> list[tuple[int, int, float, float, float, int]]:
    return list(
        RatingHistory.objects.order_by("game_id", "player_id").values_list(
            "player_id", "game_id", "mu", "sigma", "ordinal", "games"
        )
    )


def openskill_after(ranks: list[float]) -> list[tuple[float, float]]:
    """openskill's own result for one game between four new players."""
    model = PlackettLuce()
    teams = [[model.rating()] for _ in ranks]
    return [(team[0].mu, team[0].sigma) for team in model.rate(teams, ranks=ranks)]


def random_games(make_game: GameMaker, players: list[Player], n: int, seed: int = 7) -> None:
    """``n`` four-seat games among ``players``, scores drawn with ties, minutes shuffled so
    the arrival order differs from the time order."""
    rng = random.Random(seed)
    minutes = list(range(n))
    rng.shuffle(minutes)
    for minute in minutes:
        table = rng.sample(players, 4)
        make_game([(p, rng.choice([-30, -12, -12, 0, 25, 40])) for p in table], minute=minute)


def test_one_game_equals_openskill(make_game: GameMaker, players: list[Player]) -> None:
    a, b, c, d = players[:4]
    game = make_game([(a, 36), (b, -5), (c, -11), (d, -20)], minute=1)

    assert ratings_update() == 1

    expected = openskill_after([1, 2, 3, 4])
    got = ratings()
    assert [got[p.pk][:2] for p in (a, b, c, d)] == expected
    for p, (mu, sigma) in zip((a, b, c, d), expected, strict=True):
        assert got[p.pk] == (mu, sigma, mu - 3 * sigma, 1, True)
    assert history() == [
        (p.pk, game.pk, mu, sigma, mu - 3 * sigma, 1)
        for p, (mu, sigma) in sorted(
            zip((a, b, c, d), expected, strict=True), key=lambda x: x[0].pk
        )
    ]
    ended_at = RatingHistory.objects.filter(game=game).values_list("ended_at", flat=True).first()
    assert ended_at == T0.replace(minute=1)


def test_equal_scores_share_a_rank(make_game: GameMaker, players: list[Player]) -> None:
    a, b, c, d = players[:4]
    make_game([(a, -10), (b, 30), (c, -10), (d, -10)], minute=1)

    ratings_update()

    expected = openskill_after([2, 1, 2, 2])
    got = ratings()
    assert [got[p.pk][:2] for p in (a, b, c, d)] == expected
    assert got[a.pk] == got[c.pk] == got[d.pk]


def test_second_update_changes_nothing(make_game: GameMaker, players: list[Player]) -> None:
    random_games(make_game, players, 12)
    assert ratings_update() == 12
    before = (ratings(), history(), RatingState.objects.values().get())

    assert ratings_update() == 0

    assert (ratings(), history(), RatingState.objects.values().get()) == before


def test_replay_twice_gives_identical_floats(make_game: GameMaker, players: list[Player]) -> None:
    random_games(make_game, players, 40)

    assert ratings_replay() == 40
    first = (ratings(), history())
    assert ratings_replay() == 40

    assert (ratings(), history()) == first
    assert len(first[1]) == 160


def test_update_in_time_order_equals_replay(make_game: GameMaker, players: list[Player]) -> None:
    for minute in range(20):
        rng = random.Random(minute)
        make_game([(p, rng.randint(-40, 40)) for p in rng.sample(players, 4)], minute=minute)
    ratings_update(limit=7)  # three chunks of different sizes: the same floats
    ratings_update(limit=5)
    ratings_update()
    incremental = (ratings(), history())

    ratings_replay()

    assert (ratings(), history()) == incremental
    assert RatingState.objects.get().late_games == 0


def test_late_game_is_rated_when_met_and_replay_restores_time_order(
    make_game: GameMaker, players: list[Player]
) -> None:
    a, b, c, d = players[:4]
    make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=10)
    make_game([(a, -5), (b, 30), (c, -10), (d, -15)], minute=30)
    ratings_update()
    late = make_game([(a, -15), (b, -5), (c, -10), (d, 30)], minute=20)

    assert ratings_update() == 1

    state = RatingState.objects.get()
    assert state.late_games == 1
    assert (state.rated_until_ended_at, state.rated_until_record_id) == (
        T0.replace(minute=30),
        "g-00002",
    )
    assert list(
        RatingHistory.objects.filter(player=a)
        .order_by("id")
        .values_list("game__record_id", "games")
    ) == [("g-00001", 1), ("g-00002", 2), (late.record_id, 3)]
    arrival = ratings()

    ratings_replay()

    # In time order the late game (minute 20) comes second: different numbers, and a's
    # history counts it as the second game.
    assert ratings() != arrival
    assert list(
        RatingHistory.objects.filter(player=a).order_by("ended_at").values_list("games", flat=True)
    ) == [1, 2, 3]
    assert RatingHistory.objects.get(player=a, game=late).games == 2
    assert RatingState.objects.get().late_games == 0


def test_game_committed_below_the_arrival_watermark_is_found(
    make_game: GameMaker, players: list[Player]
) -> None:
    a, b, c, d = players[:4]
    make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=1, pk=100)
    make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=2, pk=300)
    ratings_update()
    assert RatingState.objects.get().scanned_game_id == 300
    below = make_game([(a, -5), (b, 30), (c, -10), (d, -15)], minute=3, pk=200)

    assert ratings_update() == 1

    assert RatingHistory.objects.filter(game=below).count() == 4
    assert Rating.objects.get(player=a).games == 3
    assert ratings_update() == 0


def test_limit_takes_at_most_that_many_games(make_game: GameMaker, players: list[Player]) -> None:
    random_games(make_game, players, 5)

    assert ratings_update(limit=2) == 2
    assert RatingHistory.objects.values("game").distinct().count() == 2
    assert ratings_update(limit=10) == 3
    assert RatingState.objects.get().games_rated == 5


def test_voided_games_and_seats_are_skipped(make_game: GameMaker, players: list[Player]) -> None:
    a, b, c, d, e = players[:5]
    voided = make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=1, voided=True)
    partly = make_game([(a, 30), (b, -5), (c, -10), (e, -15)], minute=2, voided_seats=[1])
    alone = make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=3, voided_seats=[0, 1, 2])

    assert ratings_update() == 1

    assert not RatingHistory.objects.filter(game__in=[voided, alone]).exists()
    assert sorted(
        RatingHistory.objects.filter(game=partly).values_list("player_id", flat=True)
    ) == [
        a.pk,
        c.pk,
        e.pk,
    ]
    model = PlackettLuce()
    expected = [t[0] for t in model.rate([[model.rating()] for _ in range(3)], ranks=[1, 2, 3])]
    got = ratings()
    assert [got[p.pk][:2] for p in (a, c, e)] == [(r.mu, r.sigma) for r in expected]
    assert b.pk not in got
    assert d.pk not in got
    assert ratings_replay() == 1
    assert ratings()[a.pk] == got[a.pk]


def test_provisional_until_the_threshold(
    make_game: GameMaker, players: list[Player], settings: Any
) -> None:
    settings.RATING_PROVISIONAL_GAMES = 3
    a, b, c, d = players[:4]
    for minute in (1, 2):
        make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=minute)
    ratings_update()
    assert Rating.objects.get(player=a).provisional is True

    make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=3)
    ratings_update()

    assert list(Rating.objects.filter(player=a).values_list("games", "provisional")) == [(3, False)]


def test_provisional_default_is_twenty(make_game: GameMaker, players: list[Player]) -> None:
    a, b, c, d = players[:4]
    for minute in range(20):
        make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=minute)
        ratings_update()
        assert Rating.objects.get(player=a).provisional is (minute < 19)


def test_a_game_is_never_rated_twice(make_game: GameMaker, players: list[Player]) -> None:
    a, b, c, d = players[:4]
    game = make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=1)
    ratings_update()
    row = RatingHistory.objects.get(player=a, game=game)

    with pytest.raises(IntegrityError), transaction.atomic():
        RatingHistory.objects.create(
            player=a, game=game, ended_at=row.ended_at, mu=1, sigma=1, ordinal=-2, games=2
        )
    assert RatingHistory.objects.count() == 4


def test_nothing_to_rate(db: Any) -> None:
    assert ratings_update() == 0
    assert ratings_replay() == 0
    assert Rating.objects.count() == 0
    state = RatingState.objects.get()
    assert (state.games_rated, state.scanned_game_id, state.rated_until_ended_at) == (0, 0, None)


def test_games_ending_together_go_in_record_id_code_point_order(
    make_game: GameMaker, players: list[Player]
) -> None:
    a, b, c, d = players[:4]
    # arrival order g-a then g-B; code-point order g-B ("B" < "a") then g-a
    make_game([(a, 30), (b, -5), (c, -10), (d, -15)], minute=5, record_id="g-a")
    make_game([(a, -15), (b, -5), (c, -10), (d, 30)], minute=5, record_id="g-B")
    ratings_update()
    incremental = (ratings(), history())

    ratings_replay()

    assert (ratings(), history()) == incremental
    assert list(
        RatingHistory.objects.filter(player=a)
        .order_by("games")
        .values_list("game__record_id", flat=True)
    ) == ["g-B", "g-a"]
    assert RatingState.objects.get().rated_until_record_id == "g-a"
