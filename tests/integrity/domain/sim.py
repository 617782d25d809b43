"""Seeded simulated play for the detector tests: an honest hour-pool matchmaker, honest
hands, and helpers to inject cheaters. Small sizes only (the bench owns the big ones)."""

from __future__ import annotations

import random
from collections.abc import Sequence

from integrity.domain.data import TableObs
from tournaments.domain.scoring import tour_singles

# Point values of the classic 108-card deck: per colour one 0 and two each of 1-9,
# two each of S, R, D2 (20 points); four W and four WD4 (50 points).
DECK_POINTS = tuple([0] * 4 + [n for n in range(1, 10) for _ in range(8)] + [20] * 24 + [50] * 8)


def players(n: int, prefix: str = "p") -> list[str]:
    return [f"{prefix}{i:04d}" for i in range(n)]


def honest_hands(rng: random.Random, seats: int) -> tuple[int, ...]:
    """One finished game: seat hands drawn from the deck; the lowest goes out (0)."""
    hands = [sum(rng.choices(DECK_POINTS, k=rng.randint(1, 7))) for _ in range(seats)]
    hands[rng.randrange(seats)] = 0
    return tuple(hands)


def make_table(game_id: str, hour: int, seated: Sequence[str], hands: Sequence[int]) -> TableObs:
    scores = tour_singles(hands)
    low = min(hands)
    return TableObs(
        game_id=game_id,
        hour=hour,
        players=tuple(seated),
        hands=tuple(hands),
        scores=tuple(scores),
        winners=tuple(i for i, h in enumerate(hands) if h == low),
    )


def _seat_hour(rng: random.Random, pool: list[str], size: int) -> list[list[str]]:
    """Shuffle the hour's seats and cut them into tables, swapping away repeated players."""
    rng.shuffle(pool)
    count = len(pool) // size
    pool = pool[: count * size]
    tables = [pool[t * size : (t + 1) * size] for t in range(count)]
    for t, table in enumerate(tables):
        while len(set(table)) < size:
            j = next(j for j in range(size) if table[j] in table[:j])
            u = rng.randrange(count)
            k = rng.randrange(size)
            other = tables[u]
            if u == t or other[k] in table or table[j] in other:
                continue
            table[j], other[k] = other[k], table[j]
    return tables


def honest_tables(
    seed: int,
    *,
    n_players: int = 400,
    hours: int = 50,
    active: int = 200,
    games: Sequence[int] = (1, 2, 3),
    size: int = 4,
    start_hour: int = 450_000,
) -> list[TableObs]:
    """Random tables from the hour-pool matchmaker: each hour ``active`` random players
    play a random number of ``games``; seats are shuffled and cut into tables."""
    rng = random.Random(seed)
    population = players(n_players)
    tables: list[TableObs] = []
    for h in range(hours):
        hour = start_hour + h
        pool = [p for p in rng.sample(population, active) for _ in range(rng.choice(games))]
        for seated in _seat_hour(rng, pool, size):
            gid = f"g{seed}-{len(tables):06d}"
            tables.append(make_table(gid, hour, seated, honest_hands(rng, size)))
    return tables


def seat_together(
    tables: list[TableObs], group: Sequence[str], indices: Sequence[int]
) -> list[TableObs]:
    """Put ``group`` into the first seats of the tables at ``indices`` (a queue-together
    farm). The replaced players are dropped from those tables; hands are kept."""
    out = list(tables)
    for i in indices:
        table = out[i]
        rest = [p for p in table.players if p not in group]
        seated = (*group, *rest[: len(table.players) - len(group)])
        out[i] = TableObs(
            table.game_id, table.hour, seated, table.hands, table.scores, table.winners
        )
    return out


#: The friend pairs of :func:`thurstone_week`.
FRIENDS: tuple[tuple[str, str], ...] = tuple((f"f{2 * i}", f"f{2 * i + 1}") for i in range(100))


def thurstone_week(seed: int, players: int = 1_000) -> list[TableObs]:
    """Honest play where Luce's choice axiom does not hold: skills N(0, 1.5²), each game won
    by the highest skill plus N(0, 1.2²) noise (Thurstone's model), a loser's hand growing
    with how far he played below the winner. The :data:`FRIENDS` ``f{2i}`` and ``f{2i+1}``
    sit together at one game in five (about 20 games a pair); everyone plays about 40
    games with random others besides."""
    rng = random.Random(seed)
    skill = [rng.gauss(0.0, 1.5) for _ in range(players)]
    tables = []
    for g in range(players * 10):
        friend = 2 * rng.randrange(len(FRIENDS))
        seated = [friend, friend + 1] if rng.random() < 0.2 else []
        while len(seated) < 4:
            if (other := rng.randrange(players)) not in seated:
                seated.append(other)
        played = [skill[i] + rng.gauss(0.0, 1.2) for i in seated]
        winner = played.index(max(played))
        hands = tuple(
            0 if k == winner else max(1, round(10 + 3 * (played[winner] - v) + rng.gauss(0, 3)))
            for k, v in enumerate(played)
        )
        names = tuple(f"f{i}" if i < 2 * len(FRIENDS) else f"p{i}" for i in seated)
        tables.append(TableObs(f"g{g}", 0, names, hands, tuple(-h for h in hands), (winner,)))
    return tables
