"""Public pages and reviewer screens (inside ``i18n_patterns``: English under ``/en/``)."""

from django.contrib.auth.views import LogoutView
from django.urls import path

from web.views import cases, events, manage, password, public, review, signin

app_name = "web"

urlpatterns = [
    path("", public.home, name="home"),
    path("seasons/", public.calendar_current, name="calendar-current"),
    path("seasons/<int:year>/", public.calendar, name="calendar"),
    path("events/", events.events, name="events"),
    path("events/<str:code>/", public.event, name="event"),
    path("events/<str:code>/tables/", events.tables, name="event-tables"),
    path("events/<str:code>/board/", public.event_board, name="event-board"),
    path("players/", public.players, name="players"),
    path("players/<str:external_id>/", public.player, name="player"),
    path("players/<str:external_id>/titles/", public.player_titles, name="player-titles"),
    path("masters/", public.masters, name="masters"),
    path("verify/", public.verify, name="verify"),
    path("verify/<str:code>/", public.verify_code, name="verify-code"),
    path("signin/", signin.SignInView.as_view(), name="signin"),
    path("signin/verify/", signin.verify, name="signin-verify"),
    path("signin/enrol/", signin.enrol, name="signin-enrol"),
    path("signout/", LogoutView.as_view(), name="signout"),
    path("signin/reset/", password.reset, name="password-reset"),
    path("signin/reset/sent/", password.reset_done, name="password-reset-done"),
    path(
        "signin/reset/<uidb64>/<token>/",
        password.reset_confirm,
        name="password-reset-confirm",
    ),
    path("signin/reset/done/", password.reset_complete, name="password-reset-complete"),
    path("manage/", manage.dashboard, name="manage"),
    path("manage/seasons/new/", manage.season_new, name="manage-season-new"),
    path("manage/events/<str:code>/", manage.event, name="manage-event"),
    path("manage/events/<str:code>/change/", manage.change, name="manage-change"),
    path("manage/events/<str:code>/rounds/", manage.seat_round, name="manage-seat-round"),
    path("manage/events/<str:code>/entries/", manage.invite, name="manage-invite"),
    path(
        "manage/events/<str:code>/rounds/<int:number>/tables/<int:table>/",
        manage.table_result,
        name="manage-table-result",
    ),
    path(
        "manage/events/<str:code>/rounds/<int:number>/tables/<int:table>/games/",
        manage.table_game,
        name="manage-table-game",
    ),
    path("manage/events/<str:code>/team-schedule/", manage.team_schedule, name="manage-team"),
    path("manage/events/<str:code>/upload/", manage.upload, name="manage-upload"),
    path("manage/events/<str:code>/finalise/", manage.finalise, name="manage-finalise"),
    path("manage/events/<str:code>/void/", manage.void, name="manage-void"),
    path("manage/uploads/<int:pk>/rejects.jsonl", manage.rejects, name="manage-rejects"),
    path("manage/jobs/<uuid:pk>/", manage.job, name="manage-job"),
    path("review/", review.queue, name="review"),
    path("review/qualifications/bulk/", review.bulk, name="review-bulk"),
    path(
        "review/qualifications/<int:pk>/<str:decision>/",
        review.decide,
        name="review-decide",
    ),
    path("review/cases/", cases.queue, name="review-cases"),
    path("review/cases/<int:pk>/", cases.case, name="review-case"),
    path("review/cases/<int:pk>/take/", cases.take, name="review-case-take"),
    path("review/cases/<int:pk>/dismiss/", cases.dismiss, name="review-case-dismiss"),
    path("review/cases/<int:pk>/sanction/", cases.sanction, name="review-case-sanction"),
    path("review/cases/<int:pk>/appeals/", cases.appeal_file, name="review-case-appeal"),
    path(
        "review/cases/<int:pk>/appeals/<int:appeal>/decide/",
        cases.appeal_decide,
        name="review-appeal-decide",
    ),
    path(
        "review/cases/<int:pk>/games/<str:record_id>/",
        cases.game,
        name="review-case-game",
    ),
]
