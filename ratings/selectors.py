"""Reads of the ratings (SPEC §5): a player's rating history for the chart."""

from datetime import datetime

from ratings.models import RatingHistory

MAX_POINTS = 500


def _evenly(points: list[tuple[datetime, float]], size: int) -> list[tuple[datetime, float]]:
    """``size`` points spread evenly over ``points``, the first and the last included."""
    if len(points) <= size:
        return points
    if size == 1:
        return [points[-1]]
    last = len(points) - 1
    return [points[round(i * last / (size - 1))] for i in range(size)]


def rating_history_points(
    *, player_id: int, max_points: int = MAX_POINTS
) -> list[tuple[datetime, float]]:
    """The player's rating after each game as (ended_at, ordinal), oldest first; past
    ``max_points`` games, ``max_points`` of them picked evenly (first and last kept)."""
    points = list(
        RatingHistory.objects.filter(player_id=player_id)
        .order_by("ended_at", "id")
        .values_list("ended_at", "ordinal")
    )
    return _evenly(points, max_points)
