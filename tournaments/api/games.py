"""``POST /api/games/``: ingest a batch of game records v1 (SPEC §9) through
``flows.ingest.games_ingest``."""

from typing import Any

from django.db import transaction
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import CanIngestGames
from accounts.provinces import PROVINCES
from accounts.roles import signed_in
from core.errors import ServiceError
from core.parsers import SafeJSONParser
from flows.ingest import games_ingest
from ratings.tasks import ratings_update_task

MAX_BATCH = 1000

DESCRIPTION = f"""Ingest a batch of 1 to {MAX_BATCH:,} game records v1 (SPEC §9), as a JSON list.

Every record gets one outcome, and **the good records of a mixed batch are stored** (like
Elasticsearch `_bulk`); the answer is 200 and lists the others:

* `ingested`: how many records were stored (game, seats, new or updated players, and the
  event's live leaderboard, all in one transaction);
* `duplicates`: ids of records already stored with identical content, or repeated in the
  batch: re-sending a record is harmless and changes nothing;
* `conflicts`: a *different* record under an id that is already stored (or earlier in the
  batch): nothing is written; `reason` names the id;
* `rejected`: invalid records with their `index` in the batch, the `field` path (for example
  `seats[2].hand[1]`) and the `reason`; nothing of them is written. Besides the shape of the
  record: an unknown, cancelled or finalised event, a game timed outside the event window or
  its daily hours (Asia/Shanghai), a player without an entry in a closed-entry event, a hand
  the season's deck cannot hold, `ended_by: out` without an empty hand, text that cannot be
  stored (NUL, a lone surrogate), a move log nested deeper than 64 levels. Unknown fields
  are refused at every level.
* `errors`: true when anything conflicted or was rejected.

A malformed batch (not a JSON list, empty, more than {MAX_BATCH:,} records) is refused with 400
and writes nothing. Organisers and game-server tokens only."""


class RecordPlayerSerializer(serializers.Serializer[Any]):
    """A seat's player block as the record carries it (an input shape)."""

    id = serializers.CharField(max_length=64)
    name = serializers.CharField(max_length=64)
    province = serializers.ChoiceField(choices=PROVINCES)

    class Meta:
        ref_name = "GameRecordPlayer"


class SessionSerializer(serializers.Serializer[Any]):
    ip = serializers.IPAddressField(required=False, allow_null=True)
    device = serializers.CharField(max_length=64, required=False, allow_null=True)
    client = serializers.CharField(max_length=32, required=False, allow_null=True)

    class Meta:
        ref_name = "GameRecordSession"


class SeatSerializer(serializers.Serializer[Any]):
    player = RecordPlayerSerializer()
    team = serializers.IntegerField(
        min_value=0, max_value=1, required=False, allow_null=True, help_text="doubles only"
    )
    hand = serializers.ListField(child=serializers.CharField(), help_text="card codes")
    session = SessionSerializer(required=False, allow_null=True)

    class Meta:
        ref_name = "GameRecordSeat"


class ConflictSerializer(serializers.Serializer[Any]):
    index = serializers.IntegerField()
    id = serializers.CharField()
    reason = serializers.CharField()

    class Meta:
        ref_name = "GameIngestConflict"


class RejectionSerializer(serializers.Serializer[Any]):
    index = serializers.IntegerField()
    id = serializers.CharField(allow_null=True)
    field = serializers.CharField()
    reason = serializers.CharField()

    class Meta:
        ref_name = "GameIngestRejection"


class GameIngestView(APIView):
    """One operation: ingest a batch. The records are checked by the ingest service itself
    (field paths, deck and window rules); ``InputSerializer`` documents record v1."""

    permission_classes = [CanIngestGames]
    # Not core.parsers.StrictJSONParser: the service reports NUL or invalid Unicode per
    # record (field path) and stores the batch's good records.
    parser_classes = [SafeJSONParser]

    class InputSerializer(serializers.Serializer[Any]):
        id = serializers.CharField(max_length=64)
        event = serializers.CharField(help_text="event code, e.g. 2021-W05-Q")
        mode = serializers.ChoiceField(choices=["singles", "doubles"])
        started_at = serializers.DateTimeField(help_text="ISO 8601 with a UTC offset")
        ended_at = serializers.DateTimeField(help_text="ISO 8601 with a UTC offset")
        ended_by = serializers.ChoiceField(choices=["out", "time"])
        seats = SeatSerializer(many=True, help_text="in seat order, 2 to 10")
        log = serializers.JSONField(required=False, allow_null=True)

        class Meta:
            ref_name = "GameRecord"

    class OutputSerializer(serializers.Serializer[Any]):
        ingested = serializers.IntegerField()
        duplicates = serializers.ListField(child=serializers.CharField())
        conflicts = ConflictSerializer(many=True)
        rejected = RejectionSerializer(many=True)
        errors = serializers.BooleanField()  # type: ignore[assignment] # a field, not .errors

        class Meta:
            ref_name = "GameIngestResult"

    @extend_schema(
        operation_id="games_ingest",
        summary="Ingest a batch of game records",
        description=DESCRIPTION,
        # many=True makes a ListSerializer, which takes max_length; the stubs type the item one.
        request=InputSerializer(many=True, allow_empty=False, max_length=MAX_BATCH),  # type: ignore[call-arg]
        responses={200: OutputSerializer},
        tags=["games"],
        examples=[
            OpenApiExample(
                "A mixed batch",
                response_only=True,
                value={
                    "ingested": 1,
                    "duplicates": ["g-2021w05-0000001"],
                    "conflicts": [],
                    "rejected": [
                        {
                            "index": 2,
                            "id": "g-2021w05-0000003",
                            "field": "seats[1].hand[2]",
                            "reason": "unknown card 'R10'",
                        }
                    ],
                    "errors": True,
                },
            )
        ],
    )
    def post(self, request: Request) -> Response:
        records: Any = request.data
        if not isinstance(records, list):
            raise ServiceError("The body must be a JSON list of game records.")
        if not records:
            raise ServiceError("The batch is empty.")
        if len(records) > MAX_BATCH:
            raise ServiceError(
                f"A batch holds at most {MAX_BATCH} records, got {len(records)}.",
                detail={"max": MAX_BATCH, "got": len(records)},
            )
        report = games_ingest(records=records, by=signed_in(request.user), source="api")
        if report.ingested:
            # Committed already; a broker outage must not fail the request: the periodic
            # ratings.update catches up (robust on_commit logs the failure).
            transaction.on_commit(ratings_update_task.delay, robust=True)
        return Response(self.OutputSerializer(report).data)
