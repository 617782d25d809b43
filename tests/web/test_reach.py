"""Finding and sharing: player search, the site's own 404 and 500 pages, OpenGraph tags and
the skip link."""

import re

import pytest
from django.test import Client, RequestFactory
from django.utils import translation
from django.views.defaults import server_error

from accounts.models import Player
from web.selectors import PLAYER_SEARCH_LIMIT

pytestmark = pytest.mark.django_db


@pytest.fixture
def players() -> list[Player]:
    made = [
        Player(external_id=f"Ab{i:05d}", name=f"张{'三' if i % 2 else '四'}{i}", province="江苏")
        for i in range(1, 46)
    ]
    made.append(Player(external_id="zz-Lee", name="Lee Ming", province="浙江"))
    return Player.objects.bulk_create(made)


def found(html: str) -> list[str]:
    return re.findall(r'href="/players/([^/]+)/"', html.split('<ul class="list">', 1)[1])


def test_search_matches_part_of_an_id_in_any_case_and_pages_the_results(
    players: list[Player],
) -> None:
    first = Client().get("/players/?q=ab0000").content.decode()
    second = Client().get("/players/?q=ab0000&page=2").content.decode()

    assert found(first) == [f"Ab{i:05d}" for i in range(1, 10)]
    assert "找到 9 名选手" in first
    assert found(second) == found(first)  # one page only: page 2 is the last page
    many = Client().get("/players/?q=AB").content.decode()
    assert len(found(many)) == PLAYER_SEARCH_LIMIT
    assert "找到 45 名选手" in many
    assert "第 1 / 3 页" in many
    third = Client().get("/players/?q=AB&page=3").content.decode()
    assert found(third) == [f"Ab{i:05d}" for i in range(41, 46)]


def test_search_matches_part_of_a_name_in_any_case(players: list[Player]) -> None:
    assert found(Client().get("/players/?q=lee m").content.decode()) == ["zz-Lee"]
    fours = found(Client().get("/players/?q=张四").content.decode())
    assert fours == [f"Ab{i:05d}" for i in range(2, 41, 2)]


def test_an_exact_id_in_any_case_goes_to_the_player(players: list[Player]) -> None:
    response = Client().get("/players/?q=ZZ-lee")

    assert response.status_code == 302
    assert response["Location"] == "/players/zz-Lee/"


def test_nothing_found_says_so(players: list[Player]) -> None:
    assert "没有找到选手“nobody”。" in Client().get("/players/?q=nobody").content.decode()


def test_a_missing_page_is_the_sites_own_404() -> None:
    chinese = Client().get("/events/no-such-event/")
    english = Client().get("/en/events/no-such-event/")

    assert chinese.status_code == 404
    assert "页面不存在" in chinese.content.decode()
    assert 'href="#content"' in chinese.content.decode()
    assert english.status_code == 404
    assert "Page not found" in english.content.decode()


def test_a_server_error_is_the_sites_own_500_page() -> None:
    with translation.override("zh-hans"):  # the request's language, set by its middleware
        response = server_error(RequestFactory().get("/"))

    assert response.status_code == 500
    assert "服务暂时出错" in response.content.decode()
    assert "/static/css/site.css" in response.content.decode()


def test_player_pages_carry_opengraph_tags(players: list[Player]) -> None:
    html = Client().get("/players/zz-Lee/").content.decode()

    assert '<meta property="og:title" content="Lee Ming (zz-Lee)">' in html
    assert '<meta property="og:url" content="http://testserver/players/zz-Lee/">' in html
    assert '<meta property="og:description" content="浙江选手的赛事成绩与头衔。">' in html
