"""A real HTTP receiver on 127.0.0.1 (ephemeral port, in a thread) that answers with the
status codes it is given, in order (200 once they run out), and records every request.
``delay`` makes it answer late; ``answer`` replaces the short default answer body."""

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from webhooks.models import Subscription


@dataclass
class Received:
    headers: Message  # looked up case-insensitively, as HTTP header names are
    body: bytes


@dataclass
class Receiver:
    url: str
    statuses: list[int] = field(default_factory=list)
    delay: float = 0.0
    answer: bytes = b""
    requests: list[Received] = field(default_factory=list)


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    state = Receiver(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (the http.server hook's name)
            body = self.rfile.read(int(self.headers["Content-Length"]))
            state.requests.append(Received(self.headers, body))
            if state.delay:
                time.sleep(state.delay)
            status = state.statuses.pop(0) if state.statuses else 200
            answer = state.answer or f"answer {len(state.requests)}: {status}".encode()
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "/elsewhere")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/unotour"
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def subscription(db: Any, receiver: Receiver) -> Subscription:
    return Subscription.objects.create(
        name="partner", url=receiver.url, secret="s3cret", events=["event.finalised"]
    )
