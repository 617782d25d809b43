"""Jobs' status (core.jobs): a queued job is recorded with the write, then followed by the
task signals to its outcome or error; a job refused by the broker leaves nothing."""

from typing import Any

import pytest
from celery import shared_task

from core.errors import UnavailableError
from core.jobs import job_enqueue, job_progress, job_progress_of
from core.models import Job
from core.tasks import ping

pytestmark = pytest.mark.django_db


@shared_task(name="tests.jobs.explode")
def explode(message: str) -> None:
    raise RuntimeError(message)


def test_a_job_is_queued_with_the_write_then_succeeds_with_its_outcome(
    django_capture_on_commit_callbacks: Any, organiser: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        job = job_enqueue(ping, subject="drill", by=organiser)
    queued = Job.objects.get(pk=job.pk)
    assert (queued.task, queued.subject, queued.state, queued.by) == (
        "core.ping",
        "drill",
        "queued",
        organiser,
    )
    callbacks[0]()  # the transaction commits: the task runs (in-process here)
    done = Job.objects.get(pk=job.pk)
    assert (done.state, done.outcome, done.attempts, done.error) == ("succeeded", "pong", 1, "")
    assert done.started_at is not None
    assert done.finished_at is not None
    assert done.started_at <= done.finished_at


def test_a_failing_job_records_its_error() -> None:
    result = explode.apply(("table 3 has no result",), throw=False)
    failed = Job.objects.get(pk=result.id)
    assert (failed.task, failed.state, failed.error) == (
        "tests.jobs.explode",
        "failed",
        "RuntimeError: table 3 has no result",
    )
    assert failed.finished_at is not None


def test_a_task_sent_without_a_job_is_recorded_when_it_runs() -> None:
    result = ping.apply()
    job = Job.objects.get(pk=result.id)
    assert (job.task, job.state, job.outcome, job.subject) == ("core.ping", "succeeded", "pong", "")


def test_a_job_the_broker_refuses_leaves_no_row(monkeypatch: pytest.MonkeyPatch) -> None:
    def down(*args: Any, **kwargs: Any) -> None:
        raise UnavailableError("job queue unavailable: core.ping was not queued")

    monkeypatch.setattr("core.jobs.enqueue_or_fail", down)
    with pytest.raises(UnavailableError):
        job_enqueue(ping, subject="drill")
    assert Job.objects.count() == 0


@shared_task(name="tests.jobs.halfway")
def halfway(job_id: str) -> dict[str, Any] | None:
    """Report progress, then read it back as the job's panel would while it runs."""
    job_progress(2, 5, "coseating")
    return job_progress_of(Job.objects.get(pk=job_id))


def test_a_running_job_reports_its_progress_to_its_panel_and_api(
    organiser: Any, organiser_api: Any, empty_cache: None
) -> None:
    from tests.accounts.signin import client_sign_in

    job = Job.objects.create(task="tests.jobs.halfway", subject="drill", by=organiser)
    seen = halfway.apply(args=[str(job.pk)], task_id=str(job.pk)).get()
    assert seen == {"done": 2, "total": 5, "step": "coseating"}
    Job.objects.filter(pk=job.pk).update(state=Job.State.RUNNING)  # as while it ran
    answer = organiser_api.get(f"/api/jobs/{job.pk}/").json()
    assert answer["progress"] == {"done": 2, "total": 5, "step": "coseating"}
    from django.test import Client

    panel = client_sign_in(Client(), organiser).get(f"/manage/jobs/{job.pk}/").content.decode()
    assert '<progress max="5" value="2"' in panel
    assert "2 / 5 · coseating" in panel


def test_progress_outside_a_task_is_not_recorded(empty_cache: None) -> None:
    job = Job.objects.create(task="tests.jobs.none")
    job_progress(1, 2, "x")  # no task is running: nowhere to report
    assert job_progress_of(job) is None
