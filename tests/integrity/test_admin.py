"""The integrity admin: runs and flags read-only, cases with their players and log."""

import pytest
from django.test import Client

from accounts.models import User
from integrity.models import Case, Flag
from integrity.services.audits import audit_event
from tests.accounts.signin import client_sign_in
from tests.integrity.farm import monthly_with_a_farm

pytestmark = pytest.mark.django_db


def test_the_admin_pages_render_and_flags_are_read_only() -> None:
    monthly, _, _ = monthly_with_a_farm()
    run = audit_event(event=monthly)
    case = Case.objects.get(key="b|h")
    flag = Flag.objects.filter(run=run).first()
    assert flag is not None
    admin = User.objects.create_superuser(username="root", password="pw-for-tests-only")
    client = Client()
    client_sign_in(client, admin)
    for url in (
        "/admin/integrity/auditrun/",
        f"/admin/integrity/auditrun/{run.pk}/change/",
        "/admin/integrity/flag/",
        f"/admin/integrity/flag/{flag.pk}/change/",
        "/admin/integrity/case/",
        f"/admin/integrity/case/{case.pk}/change/",
        "/admin/integrity/sanction/",
        "/admin/integrity/appeal/",
    ):
        response = client.get(url)
        assert response.status_code == 200, url
    assert client.get("/admin/integrity/flag/add/").status_code == 403
    posted = client.post(f"/admin/integrity/case/{case.pk}/change/", {"status": "dismissed"})
    assert posted.status_code == 403
    case.refresh_from_db()
    assert case.status == "open"
