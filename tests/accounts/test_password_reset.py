"""Password reset by e-mail for staff (web.views.password): the mail with its link, the new
password set through it, and no mail for a player's account or an unknown address."""

import re

import pytest
from django.core import mail
from django.test import Client

from accounts.models import User
from accounts.roles import ORGANISER
from tests.accounts.signin import PASSWORD, make_staff

pytestmark = pytest.mark.django_db

NEW_PASSWORD = PASSWORD + "-new"


def _ask(client: Client, email: str) -> str:
    response = client.post("/signin/reset/", {"email": email})
    assert response.status_code == 302
    return str(response["Location"])


def test_a_staff_member_resets_the_password_through_the_mailed_link() -> None:
    make_staff("org", role=ORGANISER, device=False, email="org@example.org")
    client = Client()

    assert _ask(client, "org@example.org") == "/signin/reset/sent/"
    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["org@example.org"]
    assert message.subject == "UNO 中国线上巡回赛：重设密码"
    link = re.search(r"http://testserver(/signin/reset/[^/]+/[^/]+/)", str(message.body))
    assert link is not None

    form = client.get(link[1])
    assert form.status_code == 302
    assert form["Location"].endswith("/set-password/")
    page = client.get(form["Location"])
    assert "设置新密码" in page.content.decode()
    done = client.post(
        form["Location"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}
    )

    assert done["Location"] == "/signin/reset/done/"
    user = User.objects.get(username="org")
    assert user.check_password(NEW_PASSWORD)
    assert not user.check_password(PASSWORD)
    assert "此重设链接无效" in client.get(link[1], follow=True).content.decode()  # used once


def test_mismatched_new_passwords_change_nothing() -> None:
    make_staff("org", role=ORGANISER, device=False, email="org@example.org")
    client = Client()
    _ask(client, "org@example.org")
    link = re.search(r"http://testserver(/signin/reset/[^/]+/[^/]+/)", str(mail.outbox[0].body))
    assert link is not None
    set_password = client.get(link[1])["Location"]

    response = client.post(
        set_password, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD + "x"}
    )

    assert response.status_code == 200
    assert User.objects.get(username="org").check_password(PASSWORD)


def test_no_mail_for_a_player_account_or_an_unknown_address() -> None:
    User.objects.create_user(username="player", password=PASSWORD, email="player@example.org")

    assert _ask(Client(), "player@example.org") == "/signin/reset/sent/"
    assert _ask(Client(), "nobody@example.org") == "/signin/reset/sent/"
    assert mail.outbox == []


def test_the_reset_pages_have_english_under_en() -> None:
    page = Client().get("/en/signin/reset/").content.decode()

    assert "Reset your password" in page
    assert 'action="/en/signin/reset/"' in page


def test_mail_goes_to_the_console_unless_email_url_names_a_server() -> None:
    import environ

    from config.settings import base

    assert vars(base)["EMAIL_BACKEND"] == "django.core.mail.backends.console.EmailBackend"
    smtp = environ.Env.email_url_config("smtp+tls://tour:change-me@smtp.example.org:587")
    assert (smtp["EMAIL_BACKEND"], smtp["EMAIL_HOST"], smtp["EMAIL_PORT"]) == (
        "django.core.mail.backends.smtp.EmailBackend",
        "smtp.example.org",
        587,
    )
    assert smtp["EMAIL_USE_TLS"] is True
