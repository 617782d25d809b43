"""Grant approval with the integrity check (flows.grants): a grant from an event is approved
only once that event's audit has completed and no open case holds its player; grants
without an event, or with the check off, need only the reviewer. The titles layers import
no other app: the flow brings them the integrity answer."""

import ast
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from django.utils import timezone

from accounts.models import Player, User
from core.errors import ConflictError
from flows import grants
from integrity.models import AuditRun, Case
from tests.titles import conftest as titles_fixtures
from tests.tournaments.factories import make_event, make_season
from titles import services
from titles.models import Qualification, TitleChange
from tournaments.models import Event
from webhooks.models import Delivery, Subscription

pytestmark = pytest.mark.django_db

freeze, make_player, player = (
    titles_fixtures.freeze,
    titles_fixtures.make_player,
    titles_fixtures.player,
)

CODE = "2021-W05-Q"


@pytest.fixture
def event(db: Any) -> Event:
    return make_event(make_season(), CODE)


@pytest.fixture
def audit_required(settings: Any) -> None:
    settings.TITLES_REQUIRE_EVENT_AUDIT = True


def audited(event: Event) -> None:
    """The event's audit has completed."""
    now = timezone.now()
    AuditRun.objects.create(
        key=f"event:{event.code}",
        event=event,
        window_start=now,
        window_end=now,
        status=AuditRun.Status.COMPLETED,
    )


def pending(player: Player, source: str, *, event: str | None = CODE) -> Qualification:
    qualification = services.achievement_record(
        achievement="monthly_champion",
        player=player,
        on=date(2021, 2, 7),
        source=source,
        evidence={"event": event} if event else {},
        by=None,
    )
    assert qualification is not None
    return qualification


def approve(qualification: Qualification, reviewer: User) -> Qualification:
    return grants.qualification_approve(
        qualification=qualification, by=reviewer, reason="ok", expected_version=1
    )


@pytest.mark.usefixtures("audit_required")
def test_a_grant_from_an_event_waits_for_its_audit(
    freeze: Callable[[date], None], player: Player, event: Event, reviewer: User
) -> None:
    freeze(date(2021, 3, 1))
    grant = pending(player, "event:a")

    with pytest.raises(ConflictError) as refused:
        approve(grant, reviewer)
    assert refused.value.detail == {"reason": "audit"}
    assert Qualification.objects.get(pk=grant.pk).status == "pending"

    audited(event)
    assert approve(grant, reviewer).status == "approved"
    assert player.title.status == "master"


@pytest.mark.usefixtures("audit_required")
def test_an_open_case_on_the_player_fails_the_audit_and_holds_the_grant(
    freeze: Callable[[date], None], player: Player, event: Event, reviewer: User
) -> None:
    freeze(date(2021, 3, 1))
    audited(event)
    grant = pending(player, "event:a")
    case = Case.objects.create(status="open")
    case.players.add(player)

    assert grants.grant_audit_is_clean(grant) is False
    [item] = grants.review_items([grant])
    assert (item.held, item.audited) == (True, False)
    with pytest.raises(ConflictError) as refused:
        approve(grant, reviewer)
    assert refused.value.detail == {"reason": "held"}


@pytest.mark.usefixtures("audit_required")
def test_grants_without_an_event_or_of_an_unknown_event(
    player: Player, event: Event, reviewer: User
) -> None:
    manual = pending(player, "manual:x", event=None)
    unknown = pending(player, "event:b", event="2099-W01-Q")

    assert grants.grant_audit_is_clean(manual) is True
    assert grants.grant_audit_is_clean(unknown) is False  # no such event: never audited


def test_with_the_check_off_every_grant_is_clean(player: Player, event: Event) -> None:
    assert grants.grant_audit_is_clean(pending(player, "event:a")) is True


@pytest.mark.usefixtures("audit_required")
def test_bulk_approval_refuses_the_unaudited_and_approves_the_rest(
    freeze: Callable[[date], None],
    make_player: Callable[..., Player],
    event: Event,
    reviewer: User,
) -> None:
    freeze(date(2021, 3, 1))
    audited_event = make_event(event.season, "2021-W06-Q", starts_at=event.ends_at)
    audited(audited_event)
    waiting = pending(make_player(), "event:a")
    clean = pending(make_player(), "event:c", event=audited_event.code)

    outcome = grants.qualifications_bulk_approve(
        items=[(waiting.pk, 1), (clean.pk, 1), (999_999, 1)], by=reviewer, reason="batch"
    )

    assert outcome.approved == [clean.pk]
    assert [(pk, code) for pk, code, _ in outcome.refused] == [
        (waiting.pk, "conflict"),
        (999_999, "not_found"),
    ]


@pytest.mark.usefixtures("audit_required")
def test_auto_approval_takes_only_audited_grants(
    settings: Any, player: Player, event: Event
) -> None:
    settings.TITLES_AUTO_APPROVE_AFTER_DAYS = 0
    grant = pending(player, "event:a")

    assert grants.qualifications_auto_approve() == 0
    audited(event)
    assert grants.qualifications_auto_approve() == 1
    assert Qualification.objects.get(pk=grant.pk).status == "approved"


def test_auto_approval_needs_a_completed_clean_audit_even_with_the_check_off(
    settings: Any, make_player: Callable[..., Player], event: Event
) -> None:
    """No event, an unknown event, an event not audited: each waits for a reviewer, and a
    refused auto-approval writes nothing (no decision, no history, no webhook)."""
    settings.TITLES_AUTO_APPROVE_AFTER_DAYS = 0
    settings.TITLES_REQUIRE_EVENT_AUDIT = False
    Subscription.objects.create(
        name="partner", url="http://127.0.0.1:9/hook", secret="s", events=["title.granted"]
    )
    manual = pending(make_player(), "manual:test-held", event=None)
    unknown = pending(make_player(), "event:b", event="2099-W01-Q")
    waiting = pending(make_player(), "event:a")

    assert grants.qualifications_auto_approve() == 0
    assert set(Qualification.objects.values_list("status", flat=True)) == {"pending"}
    assert Qualification.objects.filter(decided_at__isnull=False).count() == 0
    assert TitleChange.objects.count() == 0
    assert Delivery.objects.count() == 0

    audited(event)
    assert grants.qualifications_auto_approve() == 1
    assert dict(Qualification.objects.values_list("pk", "status")) == {
        manual.pk: "pending",
        unknown.pk: "pending",
        waiting.pk: "approved",
    }
    assert Delivery.objects.filter(event_type="title.granted").count() == 1


# --- the titles layers import no other app ----------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
#: Other apps than the shared ``accounts`` and ``core``.
FOREIGN = ("tournaments", "integrity", "webhooks", "ratings", "exports", "flows", "web", "demo")
LAYERS = (
    "services",
    "domain",
    "selectors.py",
    "models.py",
    "recompute.py",
    "replaying.py",
    "writing.py",
    "bulk_sql.py",
    "announce.py",
)


def _modules() -> list[Path]:
    paths = []
    for layer in LAYERS:
        path = ROOT / "titles" / layer
        paths += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return paths


def _imports(tree: ast.AST) -> list[tuple[str, bool]]:
    """(module, at module level) of every import in ``tree``."""
    top = {id(node) for node in getattr(tree, "body", [])}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, id(node) in top) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, id(node) in top))
    return found


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(ROOT)))
def test_a_titles_module_imports_no_other_app(path: Path) -> None:
    imports = _imports(ast.parse(path.read_text()))
    assert [name for name, _ in imports if name.split(".")[0] in FOREIGN] == []
    assert [name for name, top in imports if not top] == []
