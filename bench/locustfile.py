"""The locust users of bench stage ``read`` (``bench.read``): the read path of a live
weekly qualifier, and the bare endpoint it is compared with.

Run with ``--tags service``: requests spread over the live leaderboard page (national and one
province), the leaderboard API (national and one province), a player's page and the Master
registry; with ``--tags bare``: only ``/healthz?checks=0``.
Users do not wait between requests: the run measures the throughput at 50 users.
"""

from urllib.parse import quote

from locust import FastHttpUser, constant, tag, task

EVENT = "bench-read-q"
PROVINCE = quote("江苏")
PLAYER = "br-0000001"


class Reader(FastHttpUser):
    wait_time = constant(0)

    def _get(self, path: str, name: str) -> None:
        with self.client.get(path, name=name, catch_response=True) as response:
            if response.status_code != 200:
                response.failure(f"status {response.status_code}")

    @tag("service")
    @task(4)
    def board_national(self) -> None:
        self._get(f"/events/{EVENT}/", "page: board national")

    @tag("service")
    @task(2)
    def board_province(self) -> None:
        self._get(f"/events/{EVENT}/?province={PROVINCE}", "page: board province")

    @tag("service")
    @task(4)
    def api_national(self) -> None:
        self._get(f"/api/events/{EVENT}/leaderboard/", "api: leaderboard national")

    @tag("service")
    @task(2)
    def api_province(self) -> None:
        self._get(
            f"/api/events/{EVENT}/leaderboard/?province={PROVINCE}", "api: leaderboard province"
        )

    @tag("service")
    @task(2)
    def player(self) -> None:
        self._get(f"/players/{PLAYER}/", "page: player")

    @tag("service")
    @task(1)
    def masters(self) -> None:
        self._get("/masters/", "page: masters")

    @tag("bare")
    @task(1)
    def bare(self) -> None:
        self._get("/healthz?checks=0", "bare: healthz")
