"""An independent verifier (Digital Bazaar's @digitalbazaar/vc with eddsa-rdfc-2022, run by
node: tests/titles/verifier/verify.mjs) checks what the tour signs (SPEC §6 Credentials):
a Master term and a Lifetime title verify, a tampered credential does not, a revoked term
shows as revoked through its status list and its restoration clears it. Its document loader
serves only the vendored contexts and the service's DID document."""

import json
import shutil
import subprocess
from collections.abc import Callable
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.test.client import Client
from django.utils import timezone

from accounts.models import Player, User
from titles import services
from titles.models import LifetimeTitle, Qualification, Revocation, TitleTerm

pytestmark = pytest.mark.django_db

VERIFIER = Path(__file__).resolve().parent.parent / "verifier"
CONTEXTS = Path(settings.BASE_DIR) / "static" / "vendor" / "contexts"
ORIGIN = "https://tour.example.org"

NODE = shutil.which("node")
needs_node = pytest.mark.skipif(NODE is None, reason="node is not installed")


def verify(client: Client, credentials: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Run the node verifier on ``credentials`` with the DID document and the status lists
    as the service serves them now."""
    assert (VERIFIER / "node_modules").is_dir(), (
        "run `npm ci` in tests/titles/verifier (CI's .ci/run does)"
    )
    lists = {}
    for credential in credentials:
        url = credential["credentialStatus"]["statusListCredential"]
        response = client.get(url.removeprefix(ORIGIN))
        assert response.status_code == 200
        lists[url] = response.json()
    job = {
        "contexts": str(CONTEXTS),
        "did": client.get("/.well-known/did.json").json(),
        "statusLists": lists,
        "credentials": credentials,
        "now": timezone.now().isoformat(),
    }
    done = subprocess.run(  # noqa: S603 (our script, our input)
        [str(NODE), str(VERIFIER / "verify.mjs")],
        input=json.dumps(job),
        capture_output=True,
        text=True,
        cwd=VERIFIER,
        timeout=120,
        check=True,
    )
    results: list[dict[str, Any]] = json.loads(done.stdout)
    return results


def credential(client: Client, code: str) -> dict[str, Any]:
    response = client.get(f"/api/titles/terms/{code}/credential/")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


@needs_node
def test_independent_verifier_accepts_master_and_lifetime_rejects_tampering_sees_revocation(
    client: Client,
    freeze: Callable[[date], None],
    player: Player,
    grant: Callable[..., Qualification],
    reviewer: User,
) -> None:
    freeze(date(2021, 12, 31))
    grant(player, "event:2021-01-M", date(2021, 1, 10))
    grant(player, "event:2021-NC", date(2021, 11, 20), achievement="national_championship")
    term = TitleTerm.objects.get(player=player)
    lifetime = LifetimeTitle.objects.get(player=player)
    master = credential(client, term.code)
    life = credential(client, lifetime.code)
    tampered = json.loads(json.dumps(master))
    tampered["validUntil"] = "2099-01-10T23:59:59+08:00"
    renamed = json.loads(json.dumps(life))
    renamed["credentialSubject"]["name"] = "冒名者"

    results = verify(client, [master, life, tampered, renamed])

    valid = {"verified": True, "signature": True, "revoked": False, "error": None}
    assert results[0] == valid
    assert results[1] == valid
    assert (results[2]["verified"], results[2]["signature"]) == (False, False)
    assert (results[3]["verified"], results[3]["signature"]) == (False, False)

    services.titles_revoke(player=player, on=date(2021, 12, 31), by=reviewer, reason="sanction")
    revoked = verify(client, [credential(client, term.code), credential(client, lifetime.code)])
    assert [(r["verified"], r["signature"], r["revoked"]) for r in revoked] == [
        (False, True, True)
    ] * 2
    # The credential issued before the revocation is revoked too: the same status entry.
    assert verify(client, [master])[0]["revoked"] is True

    services.titles_restore(
        player=player,
        revocation=Revocation.objects.get(player=player),
        by=reviewer,
        reason="appeal upheld",
    )
    restored = verify(client, [master, life])
    assert restored == [valid, valid]
