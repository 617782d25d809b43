"""The pages in a real browser: headless Chromium driven by selenium against the live server.

Leaderboard tabs and search, the player page's charts drawn by ECharts, the registry's
province filter and the language switch; the tests also write the screenshots in
docs/screenshots/ (1280x900, and the leaderboard at 390x844 as on a phone).
Skipped where Chromium is not installed (CI installs Debian's chromium and chromium-driver).
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import pytest
from django.conf import settings

from accounts.models import Player, User
from tests.web.cases import BOOSTED, FED, KEPT, RANK_FLOW, Farm
from tests.web.tour import Tour, build_tour
from titles.models import TitleTerm

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
SCREENSHOTS = Path(settings.BASE_DIR) / "docs" / "screenshots"
WAIT = 10

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver (apt: chromium chromium-driver)",
    ),
]


@pytest.fixture(scope="module")
def driver() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,900",
        "--lang=zh-CN",
    ):
        options.add_argument(argument)
    browser = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    browser.set_page_load_timeout(30)
    try:
        yield browser
    finally:
        browser.quit()


@pytest.fixture
def site(transactional_db: Any, frozen: None, live_server: Any, driver: Any) -> Tour:
    driver.delete_all_cookies()
    viewport(driver, 1280, 900)
    return build_tour()


def viewport(driver: Any, width: int, height: int, *, mobile: bool = False) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile},
    )


def wait_for(driver: Any, condition: Any) -> Any:
    """``condition`` once it holds; an element gone stale (the page was replaced while the
    condition read it) counts as not yet."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    waiting = WebDriverWait(driver, WAIT, ignored_exceptions=(StaleElementReferenceException,))
    return waiting.until(condition)


def css(driver: Any, selector: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, selector)


def css_all(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    found: list[Any] = driver.find_elements(By.CSS_SELECTOR, selector)
    return found


def console_errors(driver: Any) -> list[str]:
    """The browser's errors since the last call: a blocked inline script (CSP), a failed
    request, an exception in the page's scripts."""
    return [entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"]


def shoot(driver: Any, name: str, at: str | None = None) -> None:
    """Save docs/screenshots/NAME.png from the top of the page, or with ``at`` (a CSS
    selector) at the top of the window."""
    assert console_errors(driver) == []
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    if at is None:
        driver.execute_script("window.scrollTo(0, 0)")
    else:
        driver.execute_script("document.querySelector(arguments[0]).scrollIntoView()", at)
    assert driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def test_leaderboard_province_tab_and_search(site: Tour, live_server: Any, driver: Any) -> None:
    driver.get(f"{live_server.url}/events/2021-W05-F/")
    board = css(driver, "#board")
    assert board.get_attribute("hx-trigger") == "every 10s"
    assert len(css_all(driver, "table.leaderboard tbody tr.cutline")) == 1
    shoot(driver, "leaderboard")

    tab = next(chip for chip in css_all(driver, ".tabs .chip") if chip.text == "江苏")
    tab.click()
    wait_for(driver, lambda d: "province=" in d.current_url)
    assert unquote(driver.current_url).endswith("?province=江苏")
    provinces = {cell.text for cell in css_all(driver, "table.leaderboard tbody td:nth-child(3)")}
    assert provinces == {"江苏"}
    assert "江苏前 1 名" in css(driver, "tr.cutline").text

    search = css(driver, "form.search input[name=q]")
    search.send_keys("小猴子")
    search.submit()
    wait_for(driver, lambda d: "q=" in d.current_url)
    found = css_all(driver, "table.leaderboard tbody tr.found")
    assert [row.find_element("css selector", "td.player a").text for row in found] == ["小猴子"]

    viewport(driver, 390, 844, mobile=True)
    driver.get(f"{live_server.url}/events/2021-W05-F/")
    wrap = css(driver, ".board .table-wrap")
    assert not driver.execute_script(
        "return arguments[0].scrollWidth > arguments[0].clientWidth", wrap
    )
    first = css(driver, "table.leaderboard tbody tr")
    for cell in ("td.rank", "td.player", "td.total"):
        right = driver.execute_script(
            "return arguments[0].getBoundingClientRect().right",
            first.find_element("css selector", cell),
        )
        assert 0 < right <= 390, cell
    assert not first.find_element("css selector", "td.opt").is_displayed()
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    shoot(driver, "leaderboard-mobile")


def test_player_page_draws_its_charts(site: Tour, live_server: Any, driver: Any) -> None:
    driver.get(f"{live_server.url}/players/p0000001/")
    for chart in ("#rating-chart", "#title-chart"):
        wait_for(driver, lambda d, c=chart: d.find_elements("css selector", f"{c} canvas"))
        size = driver.execute_script(
            "const c = document.querySelector(arguments[0] + ' canvas');"
            "return [c.width, c.height];",
            chart,
        )
        assert size[0] > 0
        assert size[1] > 0
    shoot(driver, "player")

    as_of = css(driver, "#id_as_of")
    driver.execute_script("arguments[0].value = '2021-01-15'", as_of)
    css(driver, "form.inline button[type=submit]").click()
    answer = "return document.querySelector('#titles-on').textContent"
    wait_for(driver, lambda d: "2021-01-15" in d.execute_script(answer))
    assert "无头衔" in driver.execute_script(answer)
    # Swapped in place by htmx, the address bar now holds a link to this answer.
    assert driver.current_url.endswith("/players/p0000001/titles/?as_of=2021-01-15")
    driver.get(driver.current_url)  # shared: it opens the player's page on that day
    assert driver.current_url.endswith("/players/p0000001/?as_of=2021-01-15")
    assert "无头衔" in driver.execute_script(answer)


def test_registry_province_filter(site: Tour, live_server: Any, driver: Any) -> None:
    driver.get(f"{live_server.url}/masters/")
    names = {link.text for link in css_all(driver, "table.registry td.player a")}
    assert names == {"小猴子", "黄丽"}
    shoot(driver, "registry")

    from selenium.webdriver.support.ui import Select

    Select(css(driver, "#id_province")).select_by_value("北京")
    wait_for(driver, lambda d: quote("北京") in d.current_url)
    names = {link.text for link in css_all(driver, "table.registry td.player a")}
    assert names == {"黄丽"}
    assert console_errors(driver) == []


def test_language_switch(site: Tour, live_server: Any, driver: Any) -> None:
    driver.get(f"{live_server.url}/")
    assert css(driver, "html").get_attribute("lang") == "zh-hans"
    assert "正在进行" in css(driver, "main").text
    shoot(driver, "home")

    css(driver, "a.lang-en").click()
    wait_for(driver, lambda d: d.current_url.endswith("/en/"))
    assert css(driver, "html").get_attribute("lang") == "en"
    assert "China UNO Online Tour" in css(driver, ".brand-text").text
    assert "Live now" in css(driver, "main").text

    css(driver, "a.lang-zh-hans").click()
    wait_for(driver, lambda d: not d.current_url.endswith("/en/"))
    assert "正在进行" in css(driver, "main").text
    assert console_errors(driver) == []


def test_calendar_and_verification_pages(site: Tour, live_server: Any, driver: Any) -> None:
    driver.get(f"{live_server.url}/seasons/2021/")
    first = css(driver, "table.stations tbody tr")
    assert "第1站 北京站" in first.text
    shoot(driver, "calendar")

    code = TitleTerm.objects.get(player=site.players["p0000001"]).code
    driver.get(f"{live_server.url}/verify/")
    field = css(driver, "form.search input[name=code]")
    field.send_keys(code.lower())
    field.submit()
    wait_for(
        driver,
        lambda d: "/verify/" in d.current_url and d.find_elements("css selector", ".verdict"),
    )
    assert "有效的大师头衔" in css(driver, ".verdict").text
    assert "小猴子" in css(driver, ".verdict").text
    shoot(driver, "verification")


NOT_FOUND = "Failed to load resource: the server responded with a status of 404 (Not Found)"


def test_search_the_404_page_and_the_skip_link(site: Tour, live_server: Any, driver: Any) -> None:
    from selenium.webdriver.common.keys import Keys

    driver.get(f"{live_server.url}/players/?q=P00000")
    matching = Player.objects.filter(external_id__icontains="p00000").count()
    assert len(css_all(driver, "ul.list li")) == matching > 1
    shoot(driver, "players-search")
    viewport(driver, 390, 844, mobile=True)
    driver.get(f"{live_server.url}/players/?q=P00000")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    shoot(driver, "players-search-mobile")

    driver.get(f"{live_server.url}/events/no-such-event/")
    assert css(driver, "h1").text == "页面不存在"
    assert [e.split(" - ", 1)[1] for e in console_errors(driver)] == [NOT_FOUND]
    shoot(driver, "not-found-mobile")
    viewport(driver, 1280, 900)
    driver.get(f"{live_server.url}/en/events/no-such-event/")
    assert css(driver, "h1").text == "Page not found"
    assert [e.split(" - ", 1)[1] for e in console_errors(driver)] == [NOT_FOUND]
    shoot(driver, "not-found")

    css(driver, "body").send_keys(Keys.TAB)
    skip = driver.switch_to.active_element
    assert skip.get_attribute("class") == "skip"
    assert skip.is_displayed()
    skip.send_keys(Keys.ENTER)
    wait_for(driver, lambda d: d.switch_to.active_element.get_attribute("id") == "content")


def test_the_event_index_and_where_do_i_sit_on_a_phone(
    site: Tour, live_server: Any, driver: Any
) -> None:
    from selenium.webdriver.support.ui import Select

    from tests.web.tour import seated_final

    driver.get(f"{live_server.url}/events/?season=2021")
    assert "2021-W01-Q" in [e.text for e in css_all(driver, "table.events .code")]
    Select(css(driver, "select[name=state]")).select_by_value("live")
    css(driver, "form.filters button").click()
    wait_for(driver, lambda d: "state=live" in d.current_url)
    assert [e.text for e in css_all(driver, "table.events .code")] == ["2021-W05-F", "2021-W06-Q"]
    shoot(driver, "events")

    event = seated_final(site, players=16)
    seat = (
        event.seated_rounds.get()
        .tables.get(number=3)
        .seats.select_related("player")
        .order_by("seat")
        .first()
    )
    assert seat is not None
    viewport(driver, 390, 844, mobile=True)
    driver.get(f"{live_server.url}/events/{event.code}/tables/")
    box = css(driver, "form.search input[name=q]")
    box.send_keys(seat.player.external_id)
    css(driver, "form.search button").click()
    wait_for(driver, lambda d: "q=" in d.current_url)
    found = css(driver, "ul.seat-found li").text
    assert f"第 1 轮 · 3 号桌 · {seat.seat} 号座" in found
    css(driver, "ul.seat-found a").click()
    wait_for(driver, lambda d: d.current_url.endswith("#r1-t3"))
    assert seat.player.external_id in css(driver, "#r1-t3 li.mine").text
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    shoot(driver, "event-tables-mobile")
    viewport(driver, 1280, 900)
    driver.get(f"{live_server.url}/events/{event.code}/tables/")
    shoot(driver, "event-tables")
    driver.get(f"{live_server.url}/events/?season=2021")
    viewport(driver, 390, 844, mobile=True)
    driver.get(f"{live_server.url}/events/?season=2021&kind=monthly_final")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    shoot(driver, "events-mobile")


def test_the_organiser_uploads_finalises_and_voids_from_the_console(
    site: Tour, live_server: Any, driver: Any, tmp_path: Path
) -> None:
    """Sign in, open the console, upload a file with a bad record and fetch its rejects,
    void a game after reading its plan, finalise with the job's outcome shown."""
    import json

    from accounts.roles import ORGANISER
    from tests.accounts.signin import browser_sign_in, make_staff
    from tests.web.test_manage import OPEN, record
    from tournaments.models import Event, Game, Season

    organiser = make_staff("console-organiser", role=ORGANISER)
    browser_sign_in(driver, live_server.url, organiser)
    wait_for(driver, lambda d: d.current_url.endswith("/manage/"))
    assert css(driver, "h1").text == "2021 赛季管理"
    shoot(driver, "manage")

    css(driver, "a.button[href='/manage/seasons/new/']").click()
    wait_for(driver, lambda d: d.current_url.endswith("/manage/seasons/new/"))
    viewport(driver, 390, 844, mobile=True)
    driver.get(f"{live_server.url}/manage/seasons/new/")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    shoot(driver, "manage-season-new-mobile")
    viewport(driver, 1280, 900)
    driver.get(f"{live_server.url}/manage/seasons/new/")
    css(driver, "input[name=year]").send_keys("2022")
    driver.execute_script("document.querySelector('input[name=start]').value = '2022-01-03'")
    national = css(driver, "input[name=quota_weekly_final_national]")
    national.clear()
    national.send_keys("80")
    shoot(driver, "manage-season-new")
    css(driver, "form.season-form button").click()
    wait_for(driver, lambda d: "已创建 2022 赛季" in d.page_source)
    assert driver.current_url.endswith("/manage/?season=2022")
    assert Season.objects.get(year=2022).quotas["weekly_final"]["national"] == 80

    good, bad = record("g-console-1"), record("g-console-bad", hands=([], [], ["R5"], ["WD4"]))
    results = tmp_path / "results.jsonl"
    results.write_text("".join(json.dumps(r) + "\n" for r in (good, bad)), encoding="utf-8")
    driver.get(f"{live_server.url}/manage/events/{OPEN}/")
    css(driver, "input[type=file]").send_keys(str(results))
    driver.execute_script(
        "window.uploadProgress = [];"
        "document.addEventListener('htmx:xhr:progress', function (e) {"
        "  var bar = e.target.querySelector('progress[data-upload]');"
        "  window.uploadProgress.push([e.detail.loaded, e.detail.total, bar.hidden, bar.value]);"
        "});"
    )
    css(driver, "form[enctype] button").click()
    wait_for(driver, lambda d: "2 行，新增 1 局，重复 0，冲突 0，拒收 1。" in d.page_source)
    progress = driver.execute_script("return window.uploadProgress")
    assert progress, "no upload progress event"
    loaded, total, hidden, shown = progress[-1]
    assert (loaded, hidden, shown) == (total, False, total)
    assert total > results.stat().st_size  # the file and the form's other fields
    link = css(driver, "a.rejects").get_attribute("href")
    text = driver.execute_async_script(
        "fetch(arguments[0]).then(r => r.text()).then(arguments[1])", link
    )
    rows = [json.loads(line) for line in text.splitlines()]
    assert [(r["id"], r["record"]) for r in rows] == [("g-console-bad", bad)]
    shoot(driver, "manage-event")

    css(driver, "input[name=game]").send_keys("g-console-1")
    css(driver, "input[name=reason]").send_keys("测试作废")
    css(driver, "form[action$='/void/'] button").click()
    wait_for(driver, lambda d: css_all(d, "ol.plan"))
    assert "2021-W06-Q · void_game" in css(driver, "ol.plan").text
    assert not Game.objects.get(record_id="g-console-1").voided
    viewport(driver, 390, 844, mobile=True)
    shoot(driver, "manage-void-plan-mobile")
    viewport(driver, 1280, 900)
    css(driver, "form[action$='/void/'] button.danger").click()
    wait_for(driver, lambda d: "已作废 g-console-1。" in d.page_source)
    assert Game.objects.get(record_id="g-console-1").voided

    css(driver, "input[name=force]").click()
    css(driver, "form[action$='/finalise/'] button").click()
    wait_for(driver, lambda d: "已提交确认结果任务。" in d.page_source)
    wait_for(driver, lambda d: Event.objects.get(code=OPEN).status == "finalised")
    driver.get(f"{live_server.url}/manage/events/{OPEN}/")
    assert "本赛事已定。" in css(driver, "body").text
    viewport(driver, 390, 844, mobile=True)
    driver.get(f"{live_server.url}/manage/")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    shoot(driver, "manage-mobile")


def test_seating_and_entering_a_seated_final_from_the_console(
    site: Tour, live_server: Any, driver: Any
) -> None:
    from selenium.webdriver.support.ui import Select

    from accounts.roles import ORGANISER
    from tests.accounts.signin import browser_sign_in, make_staff
    from tests.web.tour import seated_final
    from tournaments.models import SeatedTable
    from tournaments.services.seated import seated_result_enter, seated_round_create

    event = seated_final(site, players=16)
    organiser = make_staff("seated-organiser", role=ORGANISER)
    browser_sign_in(driver, live_server.url, organiser, next_path=f"/manage/events/{event.code}/")
    wait_for(driver, lambda d: d.current_url.endswith(f"/manage/events/{event.code}/"))
    table = SeatedTable.objects.get(round__event=event, round__number=1, number=2)
    keys = list(table.seats.order_by("seat").values_list("player__external_id", flat=True))
    for place, key in enumerate(keys, start=1):
        css(driver, f"#r1-t2 input[name='place-{key}']").send_keys(str(place))
    css(driver, "#r1-t2 button").click()
    wait_for(driver, lambda d: "已录入第 1 轮 2 号桌。" in d.page_source)
    assert [s.place for s in table.seats.order_by("seat")] == [1, 2, 3, 4]
    shoot(driver, "manage-seated")
    viewport(driver, 390, 844, mobile=True)
    driver.get(f"{live_server.url}/manage/events/{event.code}/#r1-t2")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    shoot(driver, "manage-seated-mobile")
    viewport(driver, 1280, 900)

    # the rest of round 1 and round 2 by the services; round 3 a match to 500 from the console
    def places(number: int) -> None:
        for other in SeatedTable.objects.filter(round__event=event, round__number=number):
            if other.result_entered_at is None:
                seats = other.seats.order_by("seat").values_list("player__external_id", flat=True)
                ranks = {key: i for i, key in enumerate(seats, start=1)}
                seated_result_enter(table=other, places=ranks, by=organiser)

    places(1)
    seated_round_create(event=event, by=organiser, seed=2)
    places(2)
    driver.get(f"{live_server.url}/manage/events/{event.code}/")
    Select(css(driver, "select[name=format]")).select_by_value("cumulative")
    css(driver, "form[action$='/rounds/'] button").click()
    wait_for(driver, lambda d: "累积法 · 目标 500 分" in d.page_source)
    big = ["", "W W W W", "WD4 WD4 WD4 WD4", "RS RS RR RR RD2"]  # the first seat takes 500
    final_table = SeatedTable.objects.get(round__event=event, round__number=3, number=1)
    keys = list(final_table.seats.order_by("seat").values_list("player__external_id", flat=True))
    for key, cards in zip(keys, big, strict=True):
        if cards:
            css(driver, f"#r3-t1 form.game-form input[name='hand-{key}']").send_keys(cards)
    css(driver, "#r3-t1 form.game-form button").click()
    wait_for(driver, lambda d: "已录入第 3 轮 1 号桌第 1 局。" in d.page_source)
    # the others total 0; by fewer hand points: 100, then 200 and 200 sharing third
    assert [s.place for s in final_table.seats.order_by("seat")] == [1, 3, 3, 2]

    driver.get(f"{live_server.url}/events/{event.code}/tables/")
    css(driver, "input[name=q]").send_keys(keys[0])
    css(driver, "form.search button").click()
    wait_for(driver, lambda d: "第 3 轮 · 1 号桌 · 1 号座" in d.page_source)
    assert "累计 500" in css(driver, "#r3-t1").text
    shoot(driver, "event-tables-match", at="#r3")


def test_a_match_and_a_team_event_run_from_the_console(
    site: Tour, live_server: Any, driver: Any
) -> None:
    from selenium.webdriver.support.ui import Select

    from accounts.roles import ORGANISER
    from tests.accounts.signin import browser_sign_in, make_staff
    from tests.web.test_manage_matches import final
    from tournaments.models import TableSeat
    from tournaments.services.teams import team_schedule_create

    event, (a, b, c, d) = final(site, 4)
    organiser = make_staff("match-organiser", role=ORGANISER)
    console = f"/manage/events/{event.code}/"
    browser_sign_in(driver, live_server.url, organiser, next_path=console)
    wait_for(driver, lambda d: d.current_url.endswith(console))
    Select(css(driver, "select[name=format]")).select_by_value("cumulative")
    target = css(driver, "input[name=target]")
    target.clear()
    target.send_keys("100")
    css(driver, "input[name=seed]").send_keys("3")
    css(driver, "form[action$='/rounds/'] button").click()
    wait_for(driver, lambda d: "累积法 · 目标 100 分" in d.page_source)
    for key, cards in ((b, "WD4"), (c, "GS G7"), (d, "R5")):
        css(driver, f"#r1-t1 form.game-form input[name='hand-{key}']").send_keys(cards)
    css(driver, "#r1-t1 form.game-form button").click()
    wait_for(driver, lambda d: "已录入第 1 轮 1 号桌第 1 局。" in d.page_source)
    assert css(driver, "#r1-t1 input[name=game]").get_attribute("value") == "2"
    shoot(driver, "manage-match", at="#r1-t1")
    viewport(driver, 390, 844, mobile=True)
    driver.get(f"{live_server.url}{console}#r1-t1")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    shoot(driver, "manage-match-mobile", at="#r1-t1")
    assert not TableSeat.objects.filter(table__round__event=event, place__isnull=False).exists()

    viewport(driver, 1280, 900)
    team, _ = final(site, 4, code="2021-NT")
    team_schedule_create(event=team, by=organiser, seed=1, games_per_round=2)
    driver.get(f"{live_server.url}/manage/events/{team.code}/")
    wait_for(driver, lambda d: "轮换搭档 · 每桌 2 局" in d.page_source)
    shoot(driver, "manage-team", at="section.card:has(#r1-t1) h2")
    viewport(driver, 390, 844, mobile=True)
    driver.get(f"{live_server.url}/manage/events/{team.code}/#r1-t1")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    shoot(driver, "manage-team-mobile", at="#r1-t1")


def test_the_live_board_moves_when_a_game_arrives(
    site: Tour, live_server: Any, driver: Any
) -> None:
    """The organiser (or a player) watches the open qualifier's board: a game ingested
    meanwhile shows on it at the board's next refresh, without reloading the page."""
    from flows.ingest import games_ingest
    from tests.web.test_manage import OPEN, record

    driver.get(f"{live_server.url}/events/{OPEN}/")
    version = css(driver, "#board").get_attribute("data-version")
    shown = {e.text for e in css_all(driver, "#board td.player .pid")}
    newcomers = ("p0000011", "p0000012", "p0000013", "p0000014")
    assert not shown & set(newcomers)
    report = games_ingest(records=[record("g-board-moves", players=newcomers)])
    assert report.ingested == 1

    from selenium.webdriver.support.ui import WebDriverWait

    # The board asks every 10 s (REFRESH_SECONDS): allow two rounds.
    shown_version = "return document.getElementById('board').dataset.version"
    WebDriverWait(driver, 25).until(lambda d: d.execute_script(shown_version) != version)
    after = {e.text for e in css_all(driver, "#board td.player .pid")}
    assert set(newcomers) <= after
    assert driver.current_url.endswith(f"/events/{OPEN}/")  # the same page, refreshed in place


AXE = Path(__file__).parent / "vendor" / "axe-core" / "axe.min.js"
#: axe-core's impacts that fail a page (WCAG 2.2 AA rules and axe's best practices).
BLOCKING = ("serious", "critical")


def axe_violations(driver: Any) -> list[dict[str, Any]]:
    """Run axe-core (tests/web/vendor, from npm by bin/vendor) on the page: its violations,
    each with its rule, impact, help text and the first elements it names."""
    driver.execute_script(AXE.read_text(encoding="utf-8"))
    found: list[dict[str, Any]] = driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ["violations"]}).then(result => done(
            result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                nodes: v.nodes.slice(0, 3).map(n => n.target.join(" "))}))
        )).catch(error => done([{id: "axe-error", impact: "critical", help: String(error),
            nodes: []}]));
        """
    )
    return found


def test_every_page_has_no_serious_accessibility_violation(
    site: Tour, live_server: Any, driver: Any
) -> None:
    """axe-core on every public, staff and console page, in both languages and on a phone;
    the count per page is printed (CI's log), and a serious or critical one fails."""
    from accounts.roles import ORGANISER, REVIEWER
    from tests.accounts.signin import browser_sign_in, make_staff
    from tests.web.tour import seated_final

    seated = seated_final(site, players=8)
    player = site.players["p0000001"]
    public = [
        "/",
        "/seasons/2021/",
        "/events/",
        f"/events/{site.live.code}/",
        f"/events/{site.monthly.code}/",
        f"/events/{seated.code}/tables/?q=p0000001",
        "/players/?q=p00",
        f"/players/{player.external_id}/",
        f"/players/{player.external_id}/titles/",
        "/masters/",
        "/verify/",
        "/signin/",
        "/events/no-such-event/",
    ]
    pages = [*public, *(f"/en{path}" for path in public)]
    counts: dict[str, int] = {}
    failing: dict[str, list[dict[str, Any]]] = {}

    def check(path: str, label: str | None = None) -> None:
        driver.get(f"{live_server.url}{path}")
        found = axe_violations(driver)
        console_errors(
            driver
        )  # drained: the 404 pages log their status, later tests must not see it
        blocking = [v for v in found if v["impact"] in BLOCKING]
        counts[label or path] = len(blocking)
        if blocking:
            failing[label or path] = blocking

    for path in pages:
        check(path)
    viewport(driver, 390, 844, mobile=True)
    for path in public[:6]:
        check(path, f"{path} (390 px)")
    viewport(driver, 1280, 900)

    organiser = make_staff("axe-organiser", role=ORGANISER)
    browser_sign_in(driver, live_server.url, organiser)
    for path in (
        "/manage/",
        f"/manage/events/{site.live.code}/",
        f"/manage/events/{seated.code}/",
        "/manage/seasons/new/",
    ):
        check(path)
    driver.delete_all_cookies()
    reviewer = make_staff("axe-reviewer", role=REVIEWER)
    browser_sign_in(driver, live_server.url, reviewer)
    check("/review/")

    for page, count in counts.items():
        print(f"[a11y] {page}: {count} serious or critical")  # noqa: T201 - CI's log
        for violation in failing.get(page, []):
            print(f"[a11y]   {violation}")  # noqa: T201
    assert failing == {}


def reviewer_farm(driver: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[User, Farm]:
    """A fresh browser on a desktop window, the console's clock at ``tests.web.cases.TODAY``
    (the live server's thread too), a reviewer and the farm's open case (tests/web/cases.py)."""
    from django.utils import timezone

    from accounts.roles import REVIEWER, ensure_roles
    from tests.accounts.signin import make_staff
    from tests.web.cases import TODAY, build_farm

    monkeypatch.setattr(timezone, "now", lambda: TODAY)
    driver.delete_all_cookies()
    viewport(driver, 1280, 900)
    ensure_roles()
    reviewer = make_staff("case-reviewer", role=REVIEWER)
    return reviewer, build_farm(reviewer)


def read_flag_on_the_case(
    driver: Any,
    live_server: Any,
    monkeypatch: pytest.MonkeyPatch,
    detector: str,
    **fields: Any,
) -> None:
    """The reviewer signed in on the farm's case, which now holds one more flag of
    ``detector`` on 白雪 (``b``) and 黑土 (``h``) (or on ``player_keys``) with these
    ``fields``."""
    from integrity.models import Flag
    from tests.accounts.signin import browser_sign_in

    reviewer, farm = reviewer_farm(driver, monkeypatch)
    first = farm.case.flags.first()
    assert first is not None
    keys = fields.pop("player_keys", ["b", "h"])
    flag = Flag.objects.create(
        run=first.run,
        detector=detector,
        family=Flag.Family.BEHAVIOUR,
        player_keys=keys,
        **fields,
    )
    flag.players.set(farm.case.players.filter(external_id__in=keys))
    farm.case.flags.add(flag)
    browser_sign_in(driver, live_server.url, reviewer, next_path=f"/review/cases/{farm.case.pk}/")
    wait_for(driver, lambda d: d.current_url.endswith(f"/review/cases/{farm.case.pk}/"))


def no_blocking_violations(driver: Any) -> None:
    assert [v for v in axe_violations(driver) if v["impact"] in BLOCKING] == []


def texts(driver: Any, selector: str) -> list[str]:
    """The text of each element ``selector`` finds, whitespace collapsed (a flex row's items
    come on lines of their own)."""
    return [" ".join(e.text.split()) for e in css_all(driver, selector)]


def said(driver: Any) -> list[str]:
    """The messages the page shows (an action's outcome)."""
    return [e.text for e in css_all(driver, "ul.messages li")]


def fill_sanction(driver: Any, data: dict[str, Any]) -> None:
    """Fill the case page's sanction form as ``data`` (``tests.web.cases.sanction_data``,
    what the form posts) says: each player's role, events, revoke and suspend; the reason."""
    from selenium.webdriver.support.ui import Select

    for name, value in data.items():
        if name == "expected_version":
            continue
        if name == "reason":
            css(driver, ".sanction-form input[name=reason]").send_keys(value)
        elif name.startswith("role-"):
            Select(css(driver, f"select[name={name}]")).select_by_value(value)
        elif name.startswith("events-"):
            css(driver, f"input[name={name}][value='{value}']").click()
        else:
            assert value == "on", name
            css(driver, f"input[name={name}]").click()


def test_a_reviewer_reads_the_top_case(
    transactional_db: Any, live_server: Any, driver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reviewer signs in, opens the top case of the queue and reads its evidence: the flags
    in words, the flow matrix drawn as a heat map over its table, the shared device drawn as
    a graph over its list; the queue, the case and the case on a phone are shot (and checked
    by axe-core); the sanction's plan is shown before anything is written."""
    from tests.accounts.signin import browser_sign_in
    from tests.web.cases import sanction_data

    reviewer, farm = reviewer_farm(driver, monkeypatch)
    browser_sign_in(driver, live_server.url, reviewer, next_path="/review/cases/")
    wait_for(driver, lambda d: d.current_url.endswith("/review/cases/"))
    top = css(driver, "ol.case-queue a.case-link")
    assert top.text == f"#{farm.case.pk} 白雪、黑土"
    no_blocking_violations(driver)
    shoot(driver, "review-cases")

    top.click()
    wait_for(driver, lambda d: d.current_url.endswith(f"/review/cases/{farm.case.pk}/"))
    headlines = [e.text for e in css_all(driver, ".flag-headline")]
    assert "白雪与黑土一起同桌 15 局，随机预期 6.4 局（q = 2.3×10⁻⁵）" in headlines
    assert "白雪赢的 15 局里黑土都在同桌，平均剩 100 分手牌（q = 4.2×10⁻⁷）" in headlines
    wait_for(driver, lambda d: d.find_elements("css selector", "#flow-chart canvas"))
    cells = [e.text for e in css_all(driver, "table.flow-matrix td")]
    assert cells == ["—", "0 局 · 0 分", "15 局 · 1500 分", "—"]
    # The shared device as a graph (two players, one device), its list under it.
    graph = css(driver, "#identifier-chart")
    assert (graph.get_attribute("role"), graph.get_attribute("aria-label")) == (
        "img",
        "共用设备与地址关系图：数据见下面的列表",
    )
    wait_for(driver, lambda d: d.find_elements("css selector", "#identifier-chart canvas"))
    drawn = driver.execute_script(
        "var chart = echarts.getInstanceByDom(arguments[0]);"
        "var series = chart.getOption().series[0];"
        "var canvas = arguments[0].querySelector('canvas');"
        "return [series.type, series.layout, series.data.map(function (n) { return n.name; }),"
        " series.links.length, canvas.width > 0 && canvas.height > 0];",
        graph,
    )
    assert drawn == ["graph", "circular", ["白雪", "黑土", "设备 d-farm"], 2, True]
    assert texts(driver, "ul.identifiers li") == ["设备 d-farm 白雪、黑土"]
    no_blocking_violations(driver)
    shoot(driver, "review-case")
    shoot(driver, "review-case-identifiers", at="#identifiers")

    viewport(driver, 390, 844, mobile=True)
    driver.get(f"{live_server.url}/review/cases/{farm.case.pk}/")
    wait_for(driver, lambda d: d.find_elements("css selector", "#flow-chart canvas"))
    wait_for(driver, lambda d: d.find_elements("css selector", "#identifier-chart canvas"))
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    no_blocking_violations(driver)
    shoot(driver, "review-case-mobile")
    shoot(driver, "review-case-identifiers-mobile", at="#identifiers")
    driver.get(f"{live_server.url}/review/cases/")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390

    # The sanction's plan before it is confirmed: nothing is written yet.
    viewport(driver, 1280, 900)
    driver.get(f"{live_server.url}/review/cases/{farm.case.pk}/")
    fill_sanction(driver, sanction_data(farm.case))
    css(driver, ".sanction-form button[type=submit]").click()
    wait_for(driver, lambda d: css_all(d, "ol.plan"))
    assert "冠军：白雪 → 蓝天" in css(driver, "ol.plan").text
    assert "白雪：大师" in css(driver, "ul.plan-titles").text
    farm.case.refresh_from_db()
    assert (farm.case.status, farm.case.version) == ("open", 0)
    shoot(driver, "review-case-plan", at="#sanction")


def test_a_reviewer_reads_soft_play_kind_by_kind(
    transactional_db: Any, live_server: Any, driver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A soft-play flag on the farm's case (from move logs: the audit of logged games writes
    them) reads kind by kind: punishments, +4s let pass, 7s that hand over the better hand."""
    from integrity.models import Flag

    read_flag_on_the_case(
        driver,
        live_server,
        monkeypatch,
        Flag.Detector.SOFTPLAY,
        version="softplay-3",
        statistic=0,
        p_value=2e-7,
        q_value=3.2e-5,
        evidence={
            "actor": "h",
            "target": "b",
            "chances": 19,
            "punished": 0,
            "chances_others": 61,
            "punished_others": 38,
            "kinds": [
                {
                    "kind": kind,
                    "chances": n,
                    "punished": 0,
                    "chances_others": others,
                    "punished_others": k,
                    "p": p,
                }
                for kind, n, others, k, p in (
                    ("punish", 12, 40, 30, 1e-6),
                    ("challenge", 3, 9, 3, 0.3),
                    ("swap", 4, 12, 5, 0.1),
                )
            ],
            "queued": True,
            "weight": 7.9,
        },
    )
    assert (
        "黑土对白雪手下留情：19 次机会只用了 0 次，对其他人的 61 次机会用了 38 次（q = 3.2×10⁻⁵）"
        in [e.text for e in css_all(driver, ".flag-headline")]
    )
    assert texts(driver, ".flag-softplay .flag-details li")[:3] == [
        "惩罚：对白雪的 12 次机会用了 0 次，对其他人的 40 次用了 30 次。",
        "质疑 +4：白雪打出的 +4 有 3 次可质疑，质疑了 0 次；其他人的 9 次质疑了 3 次。",
        "出 7 换牌：4 次能把更少的手牌换给白雪，0 次换给了别人；"
        "对其他人的 12 次里 5 次没换给对方。",
    ]
    no_blocking_violations(driver)
    shoot(driver, "review-case-softplay", at=".flag-softplay")


def test_a_reviewer_reads_better_together_side_by_side(
    transactional_db: Any, live_server: Any, driver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A "better together" flag on the farm's case reads player by player: the games with
    the partner at the table and without, against the strangers, and how they are compared."""
    from integrity.models import Flag

    read_flag_on_the_case(
        driver,
        live_server,
        monkeypatch,
        Flag.Detector.TOGETHER,
        version="together-5",
        statistic=None,
        p_value=4e-6,
        q_value=2.1e-4,
        evidence={
            "player": "h",
            "direction": "worse",
            "tests": 4,
            "shared": 24,
            "weight": 1.8,
            "sides": [
                {
                    "player": "b",
                    "together": 24,
                    "apart": 31,
                    "won_together": 12,
                    "lost_together": 5,
                    "won_apart": 7,
                    "lost_apart": 19,
                    "heavier_together": 0.42,
                    "heavier_apart": 0.5,
                },
                {
                    "player": "h",
                    "together": 24,
                    "apart": 9,
                    "won_together": 0,
                    "lost_together": 6,
                    "won_apart": 2,
                    "lost_apart": 5,
                    "heavier_together": 1.0,
                    "heavier_apart": 0.5,
                },
            ],
        },
    )
    assert "黑土与白雪同桌时，对陌生对手的战绩明显差于其他对局（q = 2.1×10⁻⁴）" in [
        e.text for e in css_all(driver, ".flag-headline")
    ]
    assert texts(driver, ".flag-together .flag-details li")[1:] == [
        "黑土：同桌 24 局，胜陌生对手 0 次、负 6 次，同输时牌分多于陌生对手的比例 100%；"
        "其他 9 局，胜 2 次、负 5 次，同输时 50%。",
        "每局与同桌的陌生对手比较（搭档和常一起排队的人不计）：比谁先出完（陌生对手的强弱按其审查期内的平均得分估计）；"
        "他没出完时，比他与没出完的陌生对手的剩余牌分（相同算一半）。",
    ]
    no_blocking_violations(driver)
    shoot(driver, "review-case-together", at=".flag-together")


def test_a_reviewer_reads_point_flow_against_the_games_apart(
    transactional_db: Any, live_server: Any, driver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rank-tested point-flow flag on the farm's case says what the feeder's hands in the
    partner's wins were compared with: his lost games without the partner at the table, the
    week before the audit's window included."""
    from integrity.models import Flag

    read_flag_on_the_case(
        driver,
        live_server,
        monkeypatch,
        Flag.Detector.POINTFLOW,
        version="pointflow-5",
        statistic=171,
        p_value=3e-8,
        q_value=2.6e-6,
        evidence={**RANK_FLOW, "history_days": 7},
    )
    assert (
        "白雪赢的 9 局里黑土平均剩 154.2 分手牌，不和白雪同桌的输局平均只剩 71.5 分"
        "（q = 2.6×10⁻⁶）" in [e.text for e in css_all(driver, ".flag-headline")]
    )
    assert texts(driver, ".flag-pointflow .flag-details li")[-2:] == [
        "检验：黑土在这些局的手牌与其不和白雪同桌的 41 局输局比较（秩和检验）。",
        "以上局数包括审计窗口之前 7 天里的对局。",
    ]
    no_blocking_violations(driver)
    shoot(driver, "review-case-pointflow", at=".flag-pointflow")


def test_a_reviewer_reads_a_fed_account_against_the_others_wins(
    transactional_db: Any, live_server: Any, driver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fed-account flag on the farm's case says whose hands were heavy in whose wins, what
    they were compared with, and the margin allowed for a way of winning."""
    from integrity.models import Flag

    read_flag_on_the_case(
        driver,
        live_server,
        monkeypatch,
        Flag.Detector.FED,
        version="fed-1",
        statistic=162,
        p_value=2e-5,
        q_value=4.1e-4,
        evidence=FED,
    )
    assert (
        "白雪赢的 12 局里，常和白雪一起排队的黑土平均剩 168.5 分手牌；别人赢的 7 局里只剩 "
        "62.4 分（q = 4.1×10⁻⁴）" in [e.text for e in css_all(driver, ".flag-headline")]
    )
    assert texts(driver, ".flag-fed .flag-details li")[-2:] == [
        "白雪在他们同桌时赢的局里，输家平均剩 121 分；他们不在场时赢的 3 局里，输家平均剩 70 分。",
        "检验：同一伙人在同一类牌桌上，白雪赢时的手牌与别人（同伙或陌生人）赢时比较"
        "（秩和检验），先减去 15 分的余量：有的人赢牌本来就让输家剩得多，送分要比这更重才算。",
    ]
    no_blocking_violations(driver)
    shoot(driver, "review-case-fed", at=".flag-fed")


def test_a_reviewer_reads_the_cards_a_feeder_kept_for_his_partner(
    transactional_db: Any, live_server: Any, driver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cards-kept flag on the farm's case says who kept how many cards more than whom in
    the games both lost, against what their strengths say, and how that is read."""
    from integrity.models import Flag

    read_flag_on_the_case(
        driver,
        live_server,
        monkeypatch,
        Flag.Detector.KEPT,
        version="kept-3",
        statistic=4.44,
        p_value=8.8e-6,
        q_value=2.4e-5,
        evidence=KEPT,
    )
    assert (
        "黑土与白雪同桌都没出完的 17 局里，黑土平均比白雪多剩 5.6 张牌；按两人的实力只该多 1.3 张"
        "（q = 2.4×10⁻⁵）" in [e.text for e in css_all(driver, ".flag-headline")]
    )
    assert texts(driver, ".flag-kept .flag-details li")[-2:] == [
        "每人也有自己的留牌习惯（有人爱攒万能牌）：本周被检验的玩家不与搭档同桌时，"
        "这种习惯因人而异，相差约 0.6 张（标准差），判断时已留出这份余地。",
        "以上局数包括审计窗口之前 7 天里的对局。",
    ]
    no_blocking_violations(driver)
    shoot(driver, "review-case-kept", at=".flag-kept")


def test_a_reviewer_reads_a_boosting_flag_against_the_week_before(
    transactional_db: Any, live_server: Any, driver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A boosting flag read with the account's games of the week before says where the play
    jumps, counted from the window's start, how much the account's days weakened it, and
    how many of the games compared were the owner's earlier ones."""
    from integrity.models import Flag

    read_flag_on_the_case(
        driver,
        live_server,
        monkeypatch,
        Flag.Detector.BOOSTING,
        version="boost-4",
        player_keys=["b"],
        statistic=4.25,
        p_value=1e-5,
        q_value=2e-4,
        evidence={**BOOSTED, "day_effect": 1.3184},
    )
    assert "白雪从第 4 局起表现突变：每局得分相对预期平均由 -31.2 变为 +88.5（q = 2×10⁻⁴）" in [
        e.text for e in css_all(driver, ".flag-headline")
    ]
    assert texts(driver, ".flag-boosting .flag-details li")[-2:] == [
        "同一天的对局状态相近：z 已除以对局日设计效应 1.32 的平方根（日内相关取自其他玩家）。",
        "其中 38 局在审计窗口之前（本人此前的对局，作为基线）；局数从窗口开始计。",
    ]
    no_blocking_violations(driver)
    shoot(driver, "review-case-boosting", at=".flag-boosting")


def test_a_reviewer_sanctions_and_a_second_reviewer_upholds_the_appeal(
    transactional_db: Any, live_server: Any, driver: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The journey of tests/web/test_cases.py in the browser: the reviewer takes the case,
    reads the plan and confirms the sanction (白雪 and 黑土), records 白雪's appeal and
    cannot decide it (four eyes); signed out, a second reviewer signs in and upholds it. The
    tour is back as it was, and each player's page tells them of the sanction and of its
    reversal. The confirmed case, the decided appeal and a player's notices are shot (and
    checked by axe-core)."""
    from selenium.webdriver.support.ui import Select

    from accounts.roles import REVIEWER
    from integrity.models import Appeal
    from tests.accounts.signin import browser_sign_in, make_staff
    from tests.web.cases import (
        NOTICES,
        STATEMENT,
        UPHELD,
        changed,
        notices_of,
        sanction_data,
        state_before,
        state_sanctioned,
        tour_state,
    )

    reviewer, farm = reviewer_farm(driver, monkeypatch)
    before = tour_state(farm)
    assert before == state_before(farm)
    case = farm.case.pk
    path = f"/review/cases/{case}/"
    browser_sign_in(driver, live_server.url, reviewer, next_path=path)
    wait_for(driver, lambda d: d.current_url.endswith(path))

    css(driver, ".take-form button").click()
    wait_for(driver, lambda d: said(d) == [f"已领取案件 #{case}。"])
    assert "您正在处理此案件。" in css(driver, "#actions").text

    # The plan (nothing written), then confirmed.
    fill_sanction(driver, sanction_data(farm.case))
    css(driver, ".sanction-form button[type=submit]").click()
    wait_for(driver, lambda d: css_all(d, "ol.plan"))
    assert texts(driver, "ol.plan > li > ul > li") == [
        "作废 15 个座位的成绩",
        "冠军：白雪 → 蓝天",
        "晋级：加入 蓝天，移出 白雪",
        "下游赛事名单：加入 蓝天，移出 白雪",
        "下游赛事 2021-Q1-F：名单变化，未开赛",
        "白雪: 1680 分 15 局 第 1 名 晋级 → 0 分 0 局",
        "冠军资格：撤回 白雪，记录 蓝天",
    ]
    assert texts(driver, "ul.plan-titles li") == [
        "白雪：大师（有效期至 2022-02-08） → 无头衔",
        "黑土：大师（有效期至 2022-02-08） → 无头衔",
        "白雪：头衔被撤销（2021-03-10）",
        "白雪：撤回此前的“获得大师”（2021-02-08）",
        "黑土：头衔被撤销（2021-03-10）",
        "黑土：撤回此前的“获得大师”（2021-02-08）",
    ]
    assert tour_state(farm) == before
    css(driver, ".sanction-form button.danger").click()
    wait_for(driver, lambda d: said(d) == [f"已处罚（案件 #{case}）：白雪、黑土。"])
    assert driver.current_url.endswith(path)
    assert changed(farm) == state_sanctioned(farm)
    assert notices_of(farm) == {key: feed[2:] for key, feed in NOTICES.items()}
    assert texts(driver, "ul.sanctions li") == [
        "白雪 （受益者）· 作废对局 2021-02-M 撤销头衔 2021-03-10 起，case-reviewer",
        "黑土 （协助者）· 撤销头衔 停赛 2021-03-10 起，case-reviewer",
    ]
    no_blocking_violations(driver)
    shoot(driver, "review-case-sanctioned", at="#actions")

    # 白雪's appeal, which the reviewer who sanctioned may not decide.
    Select(css(driver, ".appeal-form select[name=player]")).select_by_value("b")
    css(driver, ".appeal-form textarea[name=statement]").send_keys(STATEMENT)
    css(driver, ".appeal-form button[type=submit]").click()
    wait_for(driver, lambda d: said(d) == ["已记录白雪的申诉。"])
    assert "四眼原则：您作出了处罚，此申诉须由另一位审核员裁决。" in css(driver, "#actions").text
    for decision in ("uphold", "reject"):
        assert not css(driver, f".appeal-decide button[value={decision}]").is_enabled()

    css(driver, "form.signout button").click()
    wait_for(driver, lambda d: not css_all(d, "form.signout"))
    second = make_staff("case-reviewer-2", role=REVIEWER)
    browser_sign_in(driver, live_server.url, second, next_path=path)
    wait_for(driver, lambda d: d.current_url.endswith(path))
    assert "四眼原则" not in css(driver, "#actions").text
    assert css(driver, "blockquote.statement").text == STATEMENT
    css(driver, ".appeal-decide input[name=reason]").send_keys(UPHELD)
    css(driver, ".appeal-decide button[value=uphold]").click()
    wait_for(driver, lambda d: said(d) == [f"申诉成立：案件 #{case} 的处罚已全部撤销。"])
    assert css(driver, "#actions").text == "处理\n此案件已决定，不再接受操作。"
    appeal = Appeal.objects.get(case=farm.case)
    assert (appeal.status, appeal.decided_by_id) == ("upheld", second.pk)
    farm.case.refresh_from_db()
    assert (farm.case.status, farm.case.version) == ("reversed", 4)
    no_blocking_violations(driver)
    shoot(driver, "review-case-appeal-decided", at="#actions")

    # Standings, champion, entries, qualifications and titles as before the sanction.
    assert tour_state(farm) == before
    assert notices_of(farm) == NOTICES

    # Each player's page tells them, in public words (白雪's is shot).
    for key in ("h", "b"):
        driver.get(f"{live_server.url}/players/{key}/")
        feed = texts(driver, "ol.notices li")
        assert feed == [f"2021-03-10 {text}" for text in NOTICES[key]], key
    no_blocking_violations(driver)
    shoot(driver, "player-notices", at="#notices")


def test_verification_page_offers_the_credential_qr_and_certificate(
    site: Tour, live_server: Any, driver: Any
) -> None:
    """The demo's Lifetime Master: the page shows a QR code of its public address, the
    Master and Lifetime credentials to download, and a print button (issue 29)."""
    player = site.players["p0000008"]
    term = TitleTerm.objects.filter(player=player).order_by("start").first()
    assert term is not None
    driver.get(f"{live_server.url}/verify/{term.code}/")
    box = css(driver, ".credential-box")
    assert box.find_element("css selector", ".credential-qr svg").is_displayed()
    assert f"https://tour.example.org/verify/{term.code}/" in box.text
    links = [a.get_attribute("href") for a in css_all(driver, ".credential-links a")]
    assert links[0] == f"{live_server.url}/api/titles/terms/{term.code}/credential/"
    assert len(links) == 2  # the Master term and the Lifetime title
    assert css(driver, "[data-print]").is_displayed()
    shoot(driver, "verify-credential")
    # The Lifetime title's own code: its verdict, no end, its credential only.
    from titles.models import LifetimeTitle

    lifetime = LifetimeTitle.objects.get(player=player)
    driver.get(f"{live_server.url}/verify/{lifetime.code}/")
    assert css(driver, ".verdict-head").text == "✓ 有效的终身大师头衔"
    links = [a.get_attribute("href") for a in css_all(driver, ".credential-links a")]
    assert links == [f"{live_server.url}/api/titles/terms/{lifetime.code}/credential/"]
    assert css(driver, ".credential-qr svg").is_displayed()
    assert [v for v in axe_violations(driver) if v["impact"] in BLOCKING] == []
    shoot(driver, "verify-lifetime")
