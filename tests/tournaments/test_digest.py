"""The record digest (tournaments/services/ingest_validation.py): orjson's bytes are the
canonical JSON of the standard library for every JSON value without a float."""

import hashlib
import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tournaments.services.ingest_validation import record_digest

SCALARS = st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(), inner, max_size=5),
    max_leaves=30,
)


def standard(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@given(VALUES)
def test_the_digest_is_the_standard_librarys_canonical_json(value: Any) -> None:
    assert record_digest(value) == standard(value)


def test_what_orjson_cannot_write_goes_to_the_standard_library() -> None:
    big = {"id": "g-1", "n": 2**70}
    assert record_digest(big) == standard(big)
    deep: Any = []
    for _ in range(300):
        deep = [deep]
    assert record_digest(deep) == standard(deep)
