"""``GET /api/jobs/{id}/``: a queued job's status (core.jobs) for the staff who run the tour:
its task, subject, state (queued, running, succeeded, failed), times, attempts, outcome and
error, and the progress a long job reports. Organisers and reviewers (the roles that queue
jobs)."""

from typing import Any
from uuid import UUID

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts.permissions import IsOrganiser, IsReviewer
from core.errors import found
from core.jobs import job_progress_of
from core.models import Job


class ProgressOutput(serializers.Serializer[Any]):
    done = serializers.IntegerField()
    total = serializers.IntegerField()
    step = serializers.CharField(help_text="the step the job is at (e.g. coseating)")

    class Meta:
        ref_name = "JobProgress"


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
    progress = serializers.SerializerMethodField(
        help_text="how far a long job is (the last step it reported), or null"
    )
    outcome = serializers.JSONField(allow_null=True)
    error = serializers.CharField()

    class Meta:
        ref_name = "Job"

    @extend_schema_field(ProgressOutput(allow_null=True))
    def get_progress(self, job: Job) -> dict[str, Any] | None:
        return job_progress_of(job)


class JobView(APIView):
    permission_classes = [IsOrganiser | IsReviewer]

    @extend_schema(operation_id="jobs_retrieve", responses=JobOutput)
    def get(self, request: Request, pk: UUID) -> Response:
        job = found(Job.objects.select_related("by").filter(pk=pk).first(), f"no job {pk}")
        return Response(JobOutput(job).data)
