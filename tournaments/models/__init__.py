"""Tournament models, one concept per module: seasons and events, games and seats,
standings (the live leaderboards), corrections, seated finals and uploaded results files."""

from tournaments.models.corrections import Correction
from tournaments.models.events import (
    CalendarChange,
    Entry,
    Event,
    EventKind,
    EventStatus,
    Season,
)
from tournaments.models.games import Game, Seat
from tournaments.models.seated import (
    SeatedRound,
    SeatedTable,
    TableGame,
    TableGameCorrection,
    TableGameHand,
    TableSeat,
)
from tournaments.models.standings import Standing
from tournaments.models.uploads import Upload

__all__ = [
    "CalendarChange",
    "Correction",
    "Entry",
    "Event",
    "EventKind",
    "EventStatus",
    "Game",
    "Seat",
    "Season",
    "SeatedRound",
    "SeatedTable",
    "Standing",
    "TableGame",
    "TableGameCorrection",
    "TableGameHand",
    "TableSeat",
    "Upload",
]
