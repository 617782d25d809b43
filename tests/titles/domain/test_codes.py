"""Verification codes: deterministic from the holder and the term's start."""

from datetime import date

from titles.domain.codes import CODE_LENGTH, normalise_code, term_code


def test_code_is_deterministic_and_differs_by_player_and_start() -> None:
    code = term_code("p0000001", date(2021, 3, 1))
    assert code == term_code("p0000001", date(2021, 3, 1))
    assert len(code) == CODE_LENGTH
    assert code.isalnum()
    assert code.upper() == code
    assert code != term_code("p0000002", date(2021, 3, 1))
    assert code != term_code("p0000001", date(2021, 3, 2))


def test_code_is_the_base32_sha256_of_id_and_start() -> None:
    import base64
    import hashlib

    digest = hashlib.sha256(b"p0000001|2021-03-01").digest()
    assert term_code("p0000001", date(2021, 3, 1)) == base64.b32encode(digest).decode()[:12]


def test_normalise_code_accepts_what_people_type() -> None:
    assert normalise_code("abcd-efgh ijkl") == "ABCDEFGHIJKL"
