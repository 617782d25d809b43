"""The JSON-LD document loader of the title credentials: the contexts vendored from npm by
``bin/vendor`` into ``static/vendor/contexts/`` (``index.json`` maps URL → file), nothing
else — never the network. An unknown URL is an error, so a credential naming a context we
do not hold cannot be signed or verified here."""

import json
from functools import cache
from pathlib import Path
from typing import Any

from django.conf import settings

__all__ = ["CONTEXTS_DIR", "document_loader", "vendored_contexts"]

CONTEXTS_DIR = Path(settings.BASE_DIR) / "static" / "vendor" / "contexts"


class UnknownContextError(LookupError):
    """A document the loader does not hold."""


@cache
def vendored_contexts() -> dict[str, Any]:
    """Every vendored context, by URL."""
    index = json.loads((CONTEXTS_DIR / "index.json").read_text())
    return {url: json.loads((CONTEXTS_DIR / name).read_text()) for url, name in index.items()}


def document_loader(url: str, options: dict[str, Any] | None = None) -> dict[str, Any]:
    """pyld's document loader: a vendored context, or :class:`UnknownContextError`."""
    contexts = vendored_contexts()
    if url not in contexts:
        raise UnknownContextError(f"{url} is not a vendored JSON-LD context")
    return {
        "contentType": "application/ld+json",
        "contextUrl": None,
        "documentUrl": url,
        "document": contexts[url],
    }
