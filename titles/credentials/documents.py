"""The title credentials (SPEC §6, Credentials; §9 paths).

A Master term or a Lifetime title as an Open Badges 3.0 ``OpenBadgeCredential`` in the W3C
VC Data Model 2.0: the issuer is the tour's profile (its ``did:web``); the subject the
player's public page and display name (no personal data); the achievement Master or
Lifetime Master with its rule as criteria and the qualifications behind it as evidence;
``validFrom`` / ``validUntil`` in Asia/Shanghai (a term's last day ends at 23:59:59; a
Lifetime title has no end); a ``BitstringStatusListEntry`` (purpose ``revocation``) and an
``eddsa-rdfc-2022`` proof. The proof's ``created`` is when the term or title last changed,
so the same state always gives the same bytes.

The status list credential (``BitstringStatusListCredential``) is signed the same way.

Signing (RDFC-1.0 canonicalisation, ~60 ms a document) happens once per content: the signed
document is cached under the SHA-256 of the unsigned document, the proof's ``created`` and
the key (:func:`_signed`). Ed25519 signatures are deterministic, so a cached answer is the
very bytes signing again would give, and any change of content is a new key.
"""

import hashlib
from datetime import date, datetime, time
from typing import Any

import orjson
from django.core.cache import cache
from django.urls import reverse

from accounts.models import Player
from core.domain.clock import TOUR_TZ
from titles.credentials.keys import issuer_did, issuer_url, signing_key
from titles.credentials.proofs import proof_sign
from titles.credentials.status import list_name
from titles.domain.codes import normalise_code
from titles.domain.credentials import STATUS_LIST_SIZE, bitstring_encode, status_position
from titles.models import (
    Confers,
    LifetimeTitle,
    Qualification,
    StatusList,
    TitleTerm,
)

__all__ = [
    "CREDENTIAL_CONTEXTS",
    "ISSUER_NAME",
    "credential_for_code",
    "credential_of_lifetime",
    "credential_of_term",
    "status_list_credential",
]

VC_V2 = "https://www.w3.org/ns/credentials/v2"
OB_V3 = "https://purl.imsglobal.org/spec/ob/v3p0/context-3.0.3.json"
CREDENTIAL_CONTEXTS = [VC_V2, OB_V3]

ISSUER_NAME = "UNO 中国线上巡回赛 (China UNO Online Tour)"

ACHIEVEMENT_DESCRIPTION = (
    "UNO 中国线上巡回赛全国头衔 · A national title of the China UNO Online Tour"
)
MASTER_CRITERIA = (
    "大师头衔自取得之日起有效一年；有效期内再次取得大师资格，自动延长一年，累计不设上限"
    "（期间按《民法典》第二百零一至二百零三条计算，北京时间）。"
    " A Master title is valid for one year from the day it is obtained; every further"
    " Master qualification while it is valid extends it by one year, without limit"
    " (periods per PRC Civil Code Arts. 201-203, Asia/Shanghai days)."
)
LIFETIME_CRITERIA = (
    "大师头衔有效期内赢得全国总决赛或中国大师赛，即成为终身大师，永不过期。"
    " Winning the National Championship or the China Masters while holding a valid Master"
    " title makes the holder a Lifetime Master; Lifetime never expires."
)


def _url(path: str) -> str:
    return issuer_url() + path


def _stamp(day: date, at: time = time(0, 0, 0)) -> str:
    return datetime.combine(day, at, tzinfo=TOUR_TZ).isoformat()


def _issuer() -> dict[str, Any]:
    return {"id": issuer_did(), "type": ["Profile"], "name": ISSUER_NAME, "url": _url("/")}


def _evidence(player: Player, sources: list[str]) -> list[dict[str, Any]]:
    rows = {
        q.source: q
        for q in Qualification.objects.filter(player=player, source__in=sources).select_related(
            "rule"
        )
    }
    evidence = []
    for source in sources:
        q = rows.get(source)
        if q is None:
            continue
        evidence.append(
            {
                "type": ["Evidence"],
                "name": q.source,
                "description": q.rule.description or q.rule.key,
                "narrative": f"{q.on.isoformat()} · {q.rule.key} · {q.status}",
                "genre": "qualification",
            }
        )
    return evidence


def _credential(
    *,
    code: str,
    player: Player,
    kind: str,
    status_index: int,
    valid_from: str,
    valid_until: str | None,
    evidence: list[dict[str, Any]],
    updated_at: datetime,
) -> dict[str, Any]:
    master = kind == "master"
    title = "大师 Master" if master else "终身大师 Lifetime Master"
    status_url = _url(reverse("api-titles-status-list", args=[list_name(kind, status_index)]))
    bit = status_position(status_index)[1]
    document: dict[str, Any] = {
        "@context": CREDENTIAL_CONTEXTS,
        "id": _url(reverse("api-titles-term-credential", args=[code])),
        "type": ["VerifiableCredential", "OpenBadgeCredential"],
        "name": f"{title} · {player.name}",
        "description": f"Verification code {code}: {_url(reverse('web:verify-code', args=[code]))}",
        "issuer": _issuer(),
        "validFrom": valid_from,
    }
    if valid_until is not None:
        document["validUntil"] = valid_until
    document["credentialSubject"] = {
        "id": _url(reverse("web:player", args=[player.external_id])),
        "type": ["AchievementSubject"],
        "name": player.name,
        "achievement": {
            "id": _url(reverse("web:masters")) + ("#master" if master else "#lifetime"),
            "type": ["Achievement"],
            "achievementType": "Award",
            "name": title,
            "description": ACHIEVEMENT_DESCRIPTION,
            "criteria": {"narrative": MASTER_CRITERIA if master else LIFETIME_CRITERIA},
        },
    }
    if evidence:
        document["evidence"] = evidence
    document["credentialStatus"] = {
        "id": f"{status_url}#{bit}",
        "type": "BitstringStatusListEntry",
        "statusPurpose": "revocation",
        "statusListIndex": str(bit),
        "statusListCredential": status_url,
    }
    return _signed(document, updated_at)


#: How long a signed document stays cached (content-addressed: never stale, only evicted).
SIGNED_SECONDS = 7 * 24 * 3600


def _signed(document: dict[str, Any], created: datetime) -> dict[str, Any]:
    """``document`` signed by the current key with proof ``created``; from the cache when
    that same content was signed before."""
    key = signing_key()
    content = orjson.dumps(
        [document, key.verification_method, created.isoformat()], option=orjson.OPT_SORT_KEYS
    )
    cache_key = "credential-signed:" + hashlib.sha256(content).hexdigest()
    signed: dict[str, Any] | None = cache.get(cache_key)
    if signed is None:
        signed = proof_sign(document, key, created=created)
        cache.set(cache_key, signed, SIGNED_SECONDS)
    return signed


def credential_of_term(term: TitleTerm) -> dict[str, Any]:
    """The signed credential of a Master term (any state: its status says the rest)."""
    return _credential(
        code=term.code,
        player=term.player,
        kind="master",
        status_index=term.pk,
        valid_from=_stamp(term.start),
        valid_until=_stamp(term.valid_until, time(23, 59, 59)),
        evidence=_evidence(term.player, [str(s) for s in term.sources]),
        updated_at=term.updated_at,
    )


def credential_of_lifetime(title: LifetimeTitle) -> dict[str, Any]:
    """The signed credential of a Lifetime title: no end; its evidence is the championship
    that conferred it and the Master term valid that day."""
    sources = list(
        Qualification.objects.filter(player=title.player, confers=Confers.LIFETIME, on=title.since)
        .order_by("source")
        .values_list("source", flat=True)
    )
    term = (
        TitleTerm.objects.filter(
            player=title.player, start__lte=title.since, valid_until__gte=title.since
        )
        .order_by("start")
        .first()
    )
    if term is not None:
        sources += [str(s) for s in term.sources]
    return _credential(
        code=title.code,
        player=title.player,
        kind="lifetime",
        status_index=title.pk,
        valid_from=_stamp(title.since),
        valid_until=None,
        evidence=_evidence(title.player, sources),
        updated_at=title.updated_at,
    )


def credential_for_code(code: str) -> dict[str, Any] | None:
    """The credential of the term or Lifetime title with verification code ``code``."""
    code = normalise_code(code)
    term = TitleTerm.objects.select_related("player").filter(code=code).first()
    if term is not None:
        return credential_of_term(term)
    title = LifetimeTitle.objects.select_related("player").filter(code=code).first()
    if title is not None:
        return credential_of_lifetime(title)
    return None


def status_list_credential(name: str) -> dict[str, Any] | None:
    """The signed ``BitstringStatusListCredential`` ``name`` (``master-0``, ``lifetime-0``…);
    a list no bit was ever set in is all clear. ``None`` for a name that is no list."""
    kind, _, number = name.partition("-")
    if kind not in ("master", "lifetime") or not number.isdigit() or str(int(number)) != number:
        return None
    row = StatusList.objects.filter(name=name).first()
    bits = bytes(row.bits) if row is not None else bytes(STATUS_LIST_SIZE // 8)
    updated_at = row.updated_at if row is not None else datetime(2020, 1, 1, tzinfo=TOUR_TZ)
    url = _url(reverse("api-titles-status-list", args=[name]))
    document = {
        "@context": [VC_V2],
        "id": url,
        "type": ["VerifiableCredential", "BitstringStatusListCredential"],
        "issuer": issuer_did(),
        "validFrom": updated_at.astimezone(TOUR_TZ).replace(microsecond=0).isoformat(),
        "credentialSubject": {
            "id": f"{url}#list",
            "type": "BitstringStatusList",
            "statusPurpose": "revocation",
            "encodedList": bitstring_encode(bits),
        },
    }
    return _signed(document, updated_at)
