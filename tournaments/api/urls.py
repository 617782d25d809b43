from django.urls import URLPattern, URLResolver, path

from core.cache import cached_response
from tournaments.api import corrections, events, seasons, seated
from tournaments.api.games import GameIngestView
from tournaments.selectors.leaderboard import board_response_key

urlpatterns: list[URLPattern | URLResolver] = [
    path("games/", GameIngestView.as_view(), name="games-ingest"),
    path("seasons/", seasons.SeasonsView.as_view(), name="seasons"),
    path("seasons/<int:year>/", seasons.SeasonView.as_view(), name="season"),
    path("seasons/<int:year>/stations/", seasons.StationsView.as_view(), name="season-stations"),
    path("events/", events.EventsView.as_view(), name="events"),
    path("events/<str:code>/", events.EventView.as_view(), name="event"),
    path(
        "events/<str:code>/leaderboard/",
        cached_response(board_response_key)(events.LeaderboardView.as_view()),
        name="event-leaderboard",
    ),
    path(
        "events/<str:code>/players/<str:player_id>/advancement/",
        events.AdvancementView.as_view(),
        name="event-advancement",
    ),
    path("events/<str:code>/finalise/", events.FinaliseView.as_view(), name="event-finalise"),
    path("events/<str:code>/entries/", events.EntriesView.as_view(), name="event-entries"),
    path(
        "events/<str:code>/field-change/",
        corrections.FieldChangeView.as_view(),
        name="event-field-change",
    ),
    path("events/<str:code>/rounds/", seated.RoundsView.as_view(), name="event-rounds"),
    path(
        "events/<str:code>/rounds/<int:number>/tables/<int:table>/result/",
        seated.TableResultView.as_view(),
        name="event-table-result",
    ),
    path(
        "events/<str:code>/rounds/<int:number>/tables/<int:table>/games/",
        seated.TableGamesView.as_view(),
        name="event-table-games",
    ),
    path(
        "events/<str:code>/rounds/<int:number>/tables/<int:table>/games/<int:game>/correction/",
        seated.TableGameCorrectionView.as_view(),
        name="event-table-game-correction",
    ),
    path(
        "events/<str:code>/team-schedule/",
        seated.TeamScheduleView.as_view(),
        name="event-team-schedule",
    ),
    path(
        "events/<str:code>/team-standings/",
        seated.TeamStandingsView.as_view(),
        name="event-team-standings",
    ),
    path(
        "events/<str:code>/rounds/<int:number>/replay/",
        seated.RoundReplayView.as_view(),
        name="event-round-replay",
    ),
    path("corrections/", corrections.CorrectionsView.as_view(), name="corrections"),
    path("corrections/game-void/", corrections.GameVoidView.as_view(), name="game-void"),
    path("corrections/game-restore/", corrections.GameRestoreView.as_view(), name="game-restore"),
    path("corrections/game-fix/", corrections.GameFixView.as_view(), name="game-fix"),
    path("corrections/player-void/", corrections.PlayerVoidView.as_view(), name="player-void"),
    path(
        "corrections/player-restore/",
        corrections.PlayerRestoreView.as_view(),
        name="player-restore",
    ),
]
