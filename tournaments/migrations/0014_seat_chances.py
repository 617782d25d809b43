"""Each seat's chances to punish from its game's move log (``Seat.chances``, the soft-play
detector's data; issue 28), and the partial index the audit reads them through.

The games logged before this migration get theirs here: each stored log is replayed under its
event's rules of play with the chance observer (``tournaments.domain.chances``), as ingest
now does. A log whose moves all replay but whose ending no longer matches the stored hands (a
game fixed after ingest) keeps the chances its moves show; a log that does not replay under
the event's rules of today stores nothing.
"""

from typing import Any

import django.contrib.postgres.fields
from django.db import migrations, models

CHUNK = 1000


def _rules_of(event: Any) -> Any:
    from tournaments.domain.rules import ruleset_from_spec

    spec = event.play_ruleset if event.play_ruleset is not None else event.season.play_ruleset
    try:
        return ruleset_from_spec(spec)
    except ValueError:
        return None


def backfill(apps: Any, schema_editor: Any) -> None:
    from tournaments.domain.chances import SeatChance, chance_counts, chance_observer
    from tournaments.domain.movelog import replay

    Event = apps.get_model("tournaments", "Event")
    Game = apps.get_model("tournaments", "Game")
    Seat = apps.get_model("tournaments", "Seat")
    rules = {event.pk: _rules_of(event) for event in Event.objects.select_related("season")}
    logged = Game.objects.filter(log__isnull=False).order_by("pk")
    pks = list(logged.values_list("pk", flat=True))
    for start in range(0, len(pks), CHUNK):
        games = list(
            Game.objects.filter(pk__in=pks[start : start + CHUNK]).values_list(
                "pk", "event_id", "ended_by", "log"
            )
        )
        seats: dict[int, list[tuple[int, int, str]]] = {}
        for pk, game, player, hand in (
            Seat.objects.filter(game_id__in=[game[0] for game in games])
            .order_by("game_id", "seat")
            .values_list("pk", "game_id", "player_id", "hand")
        ):
            seats.setdefault(game, []).append((pk, player, hand))
        changed: list[Any] = []
        for game_pk, event_pk, ended_by, log in games:
            ruleset, table = rules.get(event_pk), seats.get(game_pk, [])
            if ruleset is None or not table:
                continue
            record = {
                "seats": [
                    {"player": {"id": str(player)}, "hand": hand.split()}
                    for _, player, hand in table
                ],
                "ended_by": ended_by,
                "log": log,
            }
            found: list[SeatChance] = []
            verdict = replay(record, ruleset, chance_observer(found))
            if not (verdict.ok or verdict.move is None) or not found:
                continue
            held: dict[int, list[int]] = {}
            for actor, target, kind, chances, punished in chance_counts(found):
                held.setdefault(actor, []).extend((table[target][1], kind, chances, punished))
            changed.extend(Seat(pk=table[actor][0], chances=held[actor]) for actor in held)
        Seat.objects.bulk_update(changed, ["chances"], batch_size=CHUNK)


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0002_player_search_trigram"),
        ("tournaments", "0013_move_log_json"),
    ]

    operations = [
        migrations.AddField(
            model_name="seat",
            name="chances",
            field=django.contrib.postgres.fields.ArrayField(
                base_field=models.BigIntegerField(), blank=True, null=True, size=None
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True),
        migrations.AddIndex(
            model_name="seat",
            index=models.Index(
                condition=models.Q(("chances__isnull", False)),
                fields=["event", "ended_at"],
                name="seat_chances_window",
            ),
        ),
    ]
