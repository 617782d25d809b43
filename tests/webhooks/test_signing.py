import hashlib
import hmac

from webhooks.signing import sign, verify_signature

BODY = '{"data":{"event":"2021-W05-Q","冠军":"小猴子"},"type":"event.finalised"}'


def test_signature_is_hmac_sha256_of_timestamp_dot_body() -> None:
    expected = hmac.new(
        b"s3cret", b"1612145000." + BODY.encode("utf-8"), hashlib.sha256
    ).hexdigest()

    assert sign("s3cret", 1612145000, BODY) == f"sha256={expected}"
    assert sign("s3cret", "1612145000", BODY.encode("utf-8")) == f"sha256={expected}"


def test_verify_accepts_the_signature_as_str_or_bytes_body() -> None:
    signature = sign("s3cret", "1612145000", BODY)

    assert verify_signature("s3cret", "1612145000", BODY, signature) is True
    assert verify_signature("s3cret", 1612145000, BODY.encode("utf-8"), signature) is True


def test_verify_refuses_any_change() -> None:
    signature = sign("s3cret", "1612145000", BODY)

    assert verify_signature("other", "1612145000", BODY, signature) is False
    assert verify_signature("s3cret", "1612145001", BODY, signature) is False
    assert verify_signature("s3cret", "1612145000", BODY + " ", signature) is False
    assert verify_signature("s3cret", "1612145000", BODY, signature.upper()) is False
    assert verify_signature("s3cret", "1612145000", BODY, signature[7:]) is False
    assert verify_signature("s3cret", "1612145000", BODY, "sha256=签名") is False
