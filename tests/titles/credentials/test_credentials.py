"""Title credentials (SPEC §6 Credentials): the Open Badges 3.0 credential of a Master term
and of a Lifetime title, signed ``eddsa-rdfc-2022``; the DID document; the status bits set
and cleared in the transaction of the title change."""

from collections.abc import Callable
from datetime import date
from typing import Any

import pytest
from django.db import connection
from django.test import override_settings
from django.test.client import Client

from accounts.models import Player, User
from titles import services
from titles.credentials.documents import credential_for_code, status_list_credential
from titles.credentials.keys import generate_secret_multikey, issuer_did, public_key_of
from titles.credentials.proofs import proof_sign, proof_verify
from titles.credentials.status import status_bit
from titles.domain.credentials import bit_get, bitstring_decode
from titles.models import LifetimeTitle, Qualification, Revocation, StatusList, TitleTerm

pytestmark = pytest.mark.django_db


@pytest.fixture
def titled(
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
) -> Player:
    """小猴子: a Master term from 2021-01-10 (two qualifications), Lifetime on 2021-11-20."""
    freeze(date(2021, 12, 31))
    grant(player, "event:2021-01-M", date(2021, 1, 10))
    grant(player, "event:2021-06-M", date(2021, 6, 1))
    grant(player, "event:2021-NC", date(2021, 11, 20), achievement="national_championship")
    return player


def status_of(credential: dict[str, Any]) -> bool:
    """Whether the credential's status list (as served) has its bit set."""
    entry = credential["credentialStatus"]
    name = entry["statusListCredential"].rstrip("/").rsplit("/", 1)[1]
    status = status_list_credential(name)
    assert status is not None
    assert proof_verify(status, public_key_of) is None
    bits = bitstring_decode(status["credentialSubject"]["encodedList"])
    return bit_get(bits, int(entry["statusListIndex"]))


def test_master_term_credential_is_an_open_badge_signed_by_the_tour(titled: Player) -> None:
    term = TitleTerm.objects.get(player=titled)
    credential = credential_for_code(term.code.lower())
    assert credential is not None
    assert credential["type"] == ["VerifiableCredential", "OpenBadgeCredential"]
    assert credential["@context"] == [
        "https://www.w3.org/ns/credentials/v2",
        "https://purl.imsglobal.org/spec/ob/v3p0/context-3.0.3.json",
    ]
    assert credential["issuer"]["id"] == issuer_did() == "did:web:tour.example.org"
    assert credential["validFrom"] == "2021-01-10T00:00:00+08:00"
    assert credential["validUntil"] == "2023-01-10T23:59:59+08:00"
    subject = credential["credentialSubject"]
    assert subject == {
        "id": f"https://tour.example.org/players/{titled.external_id}/",
        "type": ["AchievementSubject"],
        "name": "小猴子",
        "achievement": subject["achievement"],
    }
    assert subject["achievement"]["name"] == "大师 Master"
    assert [e["name"] for e in credential["evidence"]] == ["event:2021-01-M", "event:2021-06-M"]
    assert credential["credentialStatus"]["type"] == "BitstringStatusListEntry"
    assert credential["credentialStatus"]["statusListIndex"] == str(term.pk)
    proof = credential["proof"]
    assert proof["cryptosuite"] == "eddsa-rdfc-2022"
    assert proof["verificationMethod"].startswith("did:web:tour.example.org#z6Mk")
    assert proof_verify(credential, public_key_of) is None
    assert status_of(credential) is False
    # The same state signs to the same bytes (the proof's time is the term's last change).
    assert credential_for_code(term.code) == credential


def test_a_changed_byte_fails_the_signature(titled: Player) -> None:
    credential = credential_for_code(TitleTerm.objects.get(player=titled).code)
    assert credential is not None
    tampered = {**credential, "validUntil": "2099-01-10T23:59:59+08:00"}
    assert proof_verify(tampered, public_key_of) == "the signature does not verify"
    other = {**credential, "credentialSubject": {**credential["credentialSubject"], "name": "x"}}
    assert proof_verify(other, public_key_of) == "the signature does not verify"


def test_lifetime_title_gets_a_credential_without_end(titled: Player) -> None:
    lifetime = LifetimeTitle.objects.get(player=titled)
    assert (lifetime.since, lifetime.state) == (date(2021, 11, 20), "current")
    credential = credential_for_code(lifetime.code)
    assert credential is not None
    assert credential["validFrom"] == "2021-11-20T00:00:00+08:00"
    assert "validUntil" not in credential
    assert credential["credentialSubject"]["achievement"]["name"] == "终身大师 Lifetime Master"
    assert [e["name"] for e in credential["evidence"]] == [
        "event:2021-NC",
        "event:2021-01-M",
        "event:2021-06-M",
    ]
    assert credential["credentialStatus"]["statusListCredential"].endswith(
        "/api/titles/status/lifetime-0/"
    )
    assert proof_verify(credential, public_key_of) is None


def test_revocation_sets_the_bits_and_restoration_clears_them(
    titled: Player, reviewer: User
) -> None:
    term = TitleTerm.objects.get(player=titled)
    lifetime = LifetimeTitle.objects.get(player=titled)
    services.titles_revoke(player=titled, on=date(2021, 12, 31), by=reviewer, reason="sanction")
    term.refresh_from_db()
    lifetime.refresh_from_db()
    assert (term.state, lifetime.state) == ("revoked", "revoked")
    assert status_bit("master", term.pk) is True
    assert status_bit("lifetime", lifetime.pk) is True
    master = credential_for_code(term.code)
    assert master is not None
    assert status_of(master) is True
    revocation = Revocation.objects.get(player=titled)
    services.titles_restore(player=titled, revocation=revocation, by=reviewer, reason="appeal")
    term.refresh_from_db()
    lifetime.refresh_from_db()
    assert (term.state, lifetime.state) == ("current", "current")
    assert status_bit("master", term.pk) is False
    assert status_bit("lifetime", lifetime.pk) is False
    assert status_of(master) is False


def test_a_failed_revocation_leaves_the_bits_alone(
    titled: Player, reviewer: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The bit is written inside the title change's transaction: a failure after it rolls
    both back."""
    term = TitleTerm.objects.get(player=titled)

    def boom(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("after the recompute")

    monkeypatch.setattr("titles.services.revocation.log_event_on_commit", boom)
    with pytest.raises(RuntimeError):
        services.titles_revoke(player=titled, on=date(2021, 12, 31), by=reviewer, reason="x")
    term.refresh_from_db()
    assert term.state == "current"
    assert status_bit("master", term.pk) is False


def test_voiding_a_qualification_voids_the_term_and_sets_its_bit(
    titled: Player, reviewer: User, freeze: Callable[[date], None], grant: Callable[..., Any]
) -> None:
    """A term the replay no longer produces (its first qualification rejected → a later
    start) is void: its bit is set; a lapse sets nothing."""
    first = TitleTerm.objects.get(player=titled)
    with connection.cursor():
        pass
    services.titles_revoke(player=titled, on=date(2021, 2, 1), by=reviewer, reason="early")
    first.refresh_from_db()
    assert first.state == "revoked"
    assert status_bit("master", first.pk) is True
    later = TitleTerm.objects.get(player=titled, start=date(2021, 6, 1))
    assert later.state == "current"
    assert status_bit("master", later.pk) is False


def test_a_lapsed_term_is_not_revoked(
    freeze: Callable[[date], None], player: Player, grant: Callable[..., Qualification]
) -> None:
    freeze(date(2021, 1, 20))
    grant(player, "event:2020-01-M", date(2020, 1, 10))
    term = TitleTerm.objects.get(player=player)
    assert term.state == "lapsed"
    credential = credential_for_code(term.code)
    assert credential is not None
    assert credential["validUntil"] == "2021-01-10T23:59:59+08:00"
    assert status_of(credential) is False


def test_did_document_lists_the_current_key_and_the_retired_ones(
    client: Client, titled: Player
) -> None:
    current = client.get("/.well-known/did.json").json()
    retired_key = current["verificationMethod"][0]["publicKeyMultibase"]
    with override_settings(
        CREDENTIAL_SIGNING_KEY=generate_secret_multikey(), CREDENTIAL_RETIRED_KEYS=[retired_key]
    ):
        response = client.get("/.well-known/did.json")
        assert response["Content-Type"] == "application/did+json"
        rotated = response.json()
        assert rotated["id"] == "did:web:tour.example.org"
        keys = [m["publicKeyMultibase"] for m in rotated["verificationMethod"]]
        assert len(keys) == 2
        assert keys[1] == retired_key
        assert rotated["assertionMethod"] == [f"did:web:tour.example.org#{k}" for k in keys]
        # A credential signed before the rotation still verifies against the new document.
    credential = credential_for_code(TitleTerm.objects.get(player=titled).code)
    assert credential is not None
    with override_settings(
        CREDENTIAL_SIGNING_KEY=generate_secret_multikey(), CREDENTIAL_RETIRED_KEYS=[retired_key]
    ):
        assert proof_verify(credential, public_key_of) is None
        new = credential_for_code(TitleTerm.objects.get(player=titled).code)
        assert new is not None
        assert new["proof"]["verificationMethod"] != credential["proof"]["verificationMethod"]
    with override_settings(CREDENTIAL_SIGNING_KEY=generate_secret_multikey()):
        assert proof_verify(credential, public_key_of) is not None  # the key is gone


def test_api_serves_credential_and_status_list(client: Client, titled: Player) -> None:
    term = TitleTerm.objects.get(player=titled)
    response = client.get(f"/api/titles/terms/{term.code}/credential/")
    assert response.status_code == 200
    credential = response.json()
    assert proof_verify(credential, public_key_of) is None
    status_url = credential["credentialStatus"]["statusListCredential"]
    listed = client.get(status_url.removeprefix("https://tour.example.org"))
    assert listed.status_code == 200
    assert listed.json()["type"] == ["VerifiableCredential", "BitstringStatusListCredential"]
    assert client.get("/api/titles/terms/NOPE/credential/").status_code == 404
    assert client.get("/api/titles/status/master-x/").status_code == 404
    assert client.get("/api/titles/status/other-0/").status_code == 404
    assert not StatusList.objects.exists()  # reading never writes


def test_a_signed_document_is_cached_by_its_content(
    titled: Player, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Signing runs once per content: the same term answers from the cache with the same
    bytes; a renamed player is new content, signed anew."""
    from django.core.cache import cache

    from titles.credentials import documents

    signed: list[str] = []

    def counting(document: dict[str, Any], key: Any, *, created: Any) -> dict[str, Any]:
        signed.append(document["id"])
        return proof_sign(document, key, created=created)

    monkeypatch.setattr(documents, "proof_sign", counting)
    cache.clear()
    code = TitleTerm.objects.get(player=titled).code
    url = f"https://tour.example.org/api/titles/terms/{code}/credential/"
    first = credential_for_code(code)
    again = credential_for_code(code)
    assert (signed, again) == ([url], first)
    Player.objects.filter(pk=titled.pk).update(name="大猴子")
    renamed = credential_for_code(code)
    assert renamed is not None
    assert (signed, renamed["credentialSubject"]["name"]) == ([url, url], "大猴子")
    assert proof_verify(renamed, public_key_of) is None


def test_the_verification_page_takes_a_lifetime_code(titled: Player, reviewer: User) -> None:
    """A Lifetime title's code opens its own verdict: holder, since when, no end, and its
    credential to download; revoked, it says so."""
    lifetime = LifetimeTitle.objects.get(player=titled)
    page = Client().get(f"/verify/{lifetime.code.lower()}/")
    html = page.content.decode()
    assert page.status_code == 200
    assert "✓ 有效的终身大师头衔" in html
    assert "自 2021-11-20 起为终身大师" in html
    assert f'href="/api/titles/terms/{lifetime.code}/credential/"' in html
    assert "下载大师凭证" not in html
    assert f"https://tour.example.org/verify/{lifetime.code}/" in html
    services.titles_revoke(player=titled, on=date(2021, 12, 31), by=reviewer, reason="sanction")
    html = Client().get(f"/verify/{lifetime.code}/").content.decode()
    assert "✗ 该头衔已被撤销" in html
    missing = Client().get("/verify/NOPE/")
    assert missing.status_code == 404
    assert "没有与“NOPE”对应的大师任期或终身大师头衔。" in missing.content.decode()
