"""``GET /api/jobs/{id}/``: a queued job's status (core.jobs) for the staff who run the tour:
its task, subject, state (queued, running, succeeded, failed), times, attempts, outcome and
error. Organisers and reviewers (the roles that queue jobs)."""

from typing import Any
from uuid import UUID

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import IsOrganiser, IsReviewer
from core.errors import found
from core.models import Job


class JobOutput(serializers.Serializer[Any]):
    id = serializers.UUIDField()
    task = serializers.CharField()
    subject = serializers.CharField()
    state = serializers.ChoiceField(choices=Job.State.choices)
    by = serializers.CharField(source="by.username", allow_null=True, default=None)
    queued_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    attempts = serializers.IntegerField()
    outcome = serializers.JSONField(allow_null=True)
    error = serializers.CharField()

    class Meta:
        ref_name = "Job"


class JobView(APIView):
    permission_classes = [IsOrganiser | IsReviewer]

    @extend_schema(operation_id="jobs_retrieve", responses=JobOutput)
    def get(self, request: Request, pk: UUID) -> Response:
        job = found(Job.objects.select_related("by").filter(pk=pk).first(), f"no job {pk}")
        return Response(JobOutput(job).data)
