"""Verification codes did not change when their computation got faster (issue #5): every
stored code still verifies. The reference is the definition: the first 12 characters of the
base32 SHA-256 digest of ``external_id|start``."""

import base64
import hashlib
from datetime import date, timedelta

from titles.domain.codes import term_code


def reference(external_id: str, start: date) -> str:
    digest = hashlib.sha256(f"{external_id}|{start.isoformat()}".encode()).digest()
    return base64.b32encode(digest).decode("ascii")[:12]


def test_codes_are_the_base32_sha256_prefix_for_many_players_and_days() -> None:
    days = [date(2019, 1, 1) + timedelta(days=n) for n in range(0, 3000, 7)]
    players = [f"p{n:07d}" for n in range(0, 200_000, 4999)] + ["bench-t0000001", "玩家", ""]
    assert all(term_code(p, d) == reference(p, d) for p in players for d in days)


def test_a_known_code() -> None:
    assert term_code("p0000001", date(2021, 3, 1)) == reference("p0000001", date(2021, 3, 1))
    assert term_code("p0000001", date(2021, 3, 1)) == "3YWVUFWYVI3C"
