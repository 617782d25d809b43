"""How a game ranks its seats for the rating (SPEC §5: a multiplayer rating over all games,
each a free-for-all).

Every seat is its own side. A higher game score is better (SPEC §3: every scoring is
"higher is better"); equal scores share a rank and the next rank skips (standard competition
ranking, "1224"). A doubles game is rated the same way: teammates score alike, so they tie.
"""

from collections.abc import Sequence


def seat_ranks(scores: Sequence[int]) -> list[int]:
    """The rank of each seat, in seat order: 1 + the number of seats that scored more."""
    return [1 + sum(1 for other in scores if other > score) for score in scores]
