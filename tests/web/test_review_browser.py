"""The title review page in a real browser (issue 27, "Title review"; SPEC §6 review).

A reviewer signs in, opens /review/, reads each grant's evidence in words with its links,
chooses two grants and approves them in one bulk decision. axe-core finds no serious or
critical violation, on the desktop and at 390 px (where nothing scrolls sideways); the
page is shot as docs/screenshots/review-titles.png and review-titles-mobile.png.
"""

from datetime import date
from typing import Any

import pytest

from accounts.roles import REVIEWER
from integrity.models import AuditRun
from tests.accounts.signin import browser_sign_in, make_staff
from tests.tournaments.factories import local
from tests.web.test_browser import (
    BLOCKING,
    CHROMEDRIVER,
    CHROMIUM,
    axe_violations,
    css,
    css_all,
    driver,  # noqa: F401 - the module's browser, a fixture
    shoot,
    viewport,
    wait_for,
)
from tests.web.tour import Tour, build_tour
from titles.models import Qualification, QualificationStatus
from titles.services import achievement_record

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs /usr/bin/chromium and /usr/bin/chromedriver (apt: chromium chromium-driver)",
    ),
]


@pytest.fixture
def site(transactional_db: Any, frozen: None, live_server: Any, driver: Any) -> Tour:  # noqa: F811
    driver.delete_all_cookies()
    viewport(driver, 1280, 900)
    return build_tour()


def champion_grant(tour: Tour) -> Qualification:
    """王伟's pending grant as the monthly final's champion. (The monthly final's audit ran
    when the tour finalised it, its transaction committed: completed at the tour's clock,
    nothing flagged.)"""
    run = AuditRun.objects.get(key=f"event:{tour.monthly.code}")
    assert (run.status, run.flags.count()) == (AuditRun.Status.COMPLETED, 0)
    grant = achievement_record(
        achievement="monthly_champion",
        player=tour.players["p0000002"],
        on=date(2021, 1, 31),
        source="event:2021-01-M:champion",
        evidence={"event": "2021-01-M", "station": 5, "rank": 1, "score": 1680, "games": 15},
        by=tour.reviewer,
    )
    assert grant is not None
    return grant


def no_blocking_violation(driver: Any) -> None:  # noqa: F811
    assert [v for v in axe_violations(driver) if v["impact"] in BLOCKING] == []


def test_a_reviewer_reads_the_evidence_and_approves_two_grants_at_once(
    site: Tour,
    live_server: Any,
    driver: Any,  # noqa: F811
) -> None:
    champion = champion_grant(site)
    # Recorded on the tour's day (the model's default clock is not the frozen one).
    Qualification.objects.filter(status=QualificationStatus.PENDING).update(
        created_at=local(2021, 2, 8, 14, 30)
    )
    reviewer = make_staff("titles-reviewer", role=REVIEWER)
    browser_sign_in(driver, live_server.url, reviewer, next_path="/review/")
    wait_for(driver, lambda d: d.current_url == f"{live_server.url}/review/")

    won = css(driver, f"#grant-{champion.pk} .evidence-achievement")
    assert won.text == (
        "2021-01-M 月赛冠军（第5站 天津站），第 1 名，1680 分，15 局"
        " · 赛事成绩榜 · 王伟在本赛事的成绩"
    )
    links = [(a.text, a.get_attribute("href")) for a in won.find_elements("css selector", "a")]
    assert links == [
        ("赛事成绩榜", f"{live_server.url}/events/2021-01-M/"),
        ("王伟在本赛事的成绩", f"{live_server.url}/events/2021-01-M/?q=p0000002"),
    ]
    assert css(driver, f"#grant-{champion.pk} .evidence-audit").text == (
        "诚信审计：2021-01-M 的审计于 2021-02-08 15:00 完成，没有标记该选手。"
    )
    manual = [e.text for e in css_all(driver, f"#grant-{site.pending.pk} .evidence-lines li")]
    assert manual == ["录入理由：线下赛事", "备注：赛事记录"]
    assert css(driver, f"#grant-{site.pending.pk} .grant-recorded").text == (
        "由 tour-entrant 手工录入 · 2021-02-08 14:30"
    )
    assert css(driver, f"#grant-{champion.pk} .grant-recorded").text == (
        "tour-reviewer 确认赛事结果时自动记录 · 2021-02-08 14:30"
    )
    approve = css(driver, f"#grant-{site.pending.pk} button.approve")
    assert approve.is_enabled()
    no_blocking_violation(driver)

    viewport(driver, 390, 844, mobile=True)
    driver.get(f"{live_server.url}/review/")
    assert driver.execute_script("return document.documentElement.scrollWidth") <= 390
    no_blocking_violation(driver)
    shoot(driver, "review-titles-mobile")

    viewport(driver, 1280, 900)
    driver.get(f"{live_server.url}/review/")
    for grant in (site.pending, champion):
        css(driver, f"#pick-{grant.pk}").click()
    css(driver, "#review-bulk input[name=decision][value=approve]").click()
    css(driver, "#review-bulk input[name=reason]").send_keys("证书与成绩已核对")
    shoot(driver, "review-titles", at="#review-bulk")
    css(driver, "#review-bulk button[type=submit]").click()
    wait_for(driver, lambda d: css_all(d, ".message.success"))
    assert [e.text for e in css_all(driver, ".message")] == [
        "已批准 2 项：李娜 · manual:2021-01 线下赛、王伟 · event:2021-01-M:champion"
    ]
    assert sorted(
        Qualification.objects.filter(pk__in=[site.pending.pk, champion.pk]).values_list(
            "pk", "status", "version", "decided_by", "decision_reason"
        )
    ) == sorted(
        (pk, QualificationStatus.APPROVED, 2, reviewer.pk, "证书与成绩已核对")
        for pk in (site.pending.pk, champion.pk)
    )
    assert css_all(driver, "article.grant") == []
    no_blocking_violation(driver)
