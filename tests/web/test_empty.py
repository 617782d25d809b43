"""The public pages of a site with no season yet."""

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def test_home_and_calendar_without_any_season() -> None:
    client = Client()
    html = client.get("/").content.decode()
    assert "当前没有进行中的赛事。" in html
    assert "本赛季还没有决出冠军。" in html
    assert "还没有赛季。" in client.get("/seasons/").content.decode()
    assert "没有符合条件的记录。" in client.get("/masters/").content.decode()
    assert "还没有快照。" in client.get("/exports/snapshots/").content.decode()
