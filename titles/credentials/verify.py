"""Verifying a title credential offline (``manage.py verify_credential``): its proof against
this service's DID document (current and retired keys), its dates at a moment, and its
status — from a status list credential given as a file, or from this service's own
database (:func:`titles.credentials.documents.status_list_credential`). No network."""

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from titles.credentials.documents import status_list_credential
from titles.credentials.keys import public_key_of
from titles.credentials.proofs import proof_verify
from titles.domain.credentials import bit_get, bitstring_decode

__all__ = ["Verdict", "credential_verify"]


@dataclass
class Verdict:
    """What was checked: each problem found (empty: valid), and the status read."""

    problems: list[str] = field(default_factory=list)
    revoked: bool | None = None

    @property
    def valid(self) -> bool:
        return not self.problems


def _status(
    credential: dict[str, Any], status_list: dict[str, Any] | None, verdict: Verdict
) -> None:
    entry = credential.get("credentialStatus")
    if not isinstance(entry, dict) or entry.get("type") != "BitstringStatusListEntry":
        verdict.problems.append("no BitstringStatusListEntry")
        return
    url = str(entry.get("statusListCredential", ""))
    if status_list is None:
        name = url.rstrip("/").rsplit("/", 1)[-1]
        status_list = status_list_credential(name)
        if status_list is None:
            verdict.problems.append(f"no status list {url}")
            return
    if status_list.get("id") != url:
        verdict.problems.append(f"the status list given is {status_list.get('id')}, not {url}")
        return
    why = proof_verify(status_list, public_key_of)
    if why is not None:
        verdict.problems.append(f"status list: {why}")
        return
    subject = status_list.get("credentialSubject", {})
    if subject.get("statusPurpose") != entry.get("statusPurpose"):
        verdict.problems.append("the status list's purpose differs")
        return
    bits = bitstring_decode(str(subject.get("encodedList", "")))
    verdict.revoked = bit_get(bits, int(entry.get("statusListIndex", -1)))
    if verdict.revoked:
        verdict.problems.append(f"revoked ({entry.get('statusPurpose')})")


def credential_verify(
    credential: dict[str, Any], *, now: datetime, status_list: dict[str, Any] | None = None
) -> Verdict:
    """Check ``credential``'s signature, its dates at ``now`` and its status."""
    verdict = Verdict()
    why = proof_verify(credential, public_key_of)
    if why is not None:
        verdict.problems.append(why)
    for name, late in (("validFrom", False), ("validUntil", True)):
        if name in credential:
            bound = datetime.fromisoformat(str(credential[name]))
            if (now > bound) if late else (now < bound):
                verdict.problems.append(f"{'expired' if late else 'not yet valid'}: {name} {bound}")
    _status(credential, status_list, verdict)
    return verdict
