"""``manage.py verify_credential`` (offline: signature, dates, status from the database or a
file) and ``manage.py credential_key``."""

import json
from collections.abc import Callable
from datetime import date
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from accounts.models import Player, User
from titles import services
from titles.credentials.documents import credential_for_code, status_list_credential
from titles.domain.credentials import ED25519_SECRET, multikey_decode
from titles.models import Qualification, TitleTerm

pytestmark = pytest.mark.django_db


def write(tmp_path: Path, name: str, data: object) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False))
    return str(path)


def test_verify_credential_checks_signature_dates_and_status(
    tmp_path: Path,
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
    reviewer: User,
) -> None:
    freeze(date(2021, 6, 30))
    grant(player, "event:2021-01-M", date(2021, 1, 10))
    term = TitleTerm.objects.get(player=player)
    credential = credential_for_code(term.code)
    assert credential is not None
    good = write(tmp_path, "good.json", credential)
    out = StringIO()
    call_command("verify_credential", good, "--at", "2021-06-30T12:00:00+08:00", stdout=out)
    assert "valid" in out.getvalue()

    with pytest.raises(CommandError, match="expired"):
        call_command("verify_credential", good, "--at", "2022-01-11T00:00:00+08:00")
    tampered = write(tmp_path, "bad.json", {**credential, "name": "someone else"})
    with pytest.raises(CommandError, match="signature does not verify"):
        call_command("verify_credential", tampered, "--at", "2021-06-30T12:00:00+08:00")

    before = status_list_credential("master-0")
    services.titles_revoke(player=player, on=date(2021, 6, 30), by=reviewer, reason="sanction")
    with pytest.raises(CommandError, match="revoked"):
        call_command("verify_credential", good, "--at", "2021-06-30T12:00:00+08:00")
    # With the list as it was (a file), the same credential was not yet revoked.
    old_list = write(tmp_path, "list.json", before)
    out = StringIO()
    call_command(
        "verify_credential",
        good,
        "--status-list",
        old_list,
        "--at",
        "2021-06-30T12:00:00+08:00",
        stdout=out,
    )
    assert "valid" in out.getvalue()


def test_credential_key_prints_a_secret_multikey() -> None:
    out, err = StringIO(), StringIO()
    call_command("credential_key", stdout=out, stderr=err)
    assert len(multikey_decode(out.getvalue().strip(), ED25519_SECRET)) == 32
    assert err.getvalue().startswith("public key: z6Mk")
