"""A boosting flag in the reviewer's words (SPEC §7: 代练代打): where the play jumps, counted
from the window's start, and the account's games before the window that served as its
baseline, in Chinese and English."""

from django.utils import translation

from integrity.models import Flag
from tests.web.cases import BOOSTED
from web.case_evidence import flag_words


def words(evidence: dict[str, object], language: str) -> tuple[str, list[str]]:
    flag = Flag(
        detector="boosting",
        version="boost-4",
        player_keys=["b"],
        statistic=4.25,
        q_value=2e-4,
        evidence=evidence,
    )
    with translation.override(language):
        said = flag_words(flag, {"b": "白雪"}.__getitem__)
        return said.headline, said.details


def test_a_boosting_flag_with_history_in_chinese() -> None:
    headline, details = words(BOOSTED, "zh-hans")
    assert (
        headline == "白雪从第 4 局起表现突变：每局得分相对预期平均由 -31.2 变为 +88.5（q = 2×10⁻⁴）"
    )
    assert details[-1] == (
        "其中 38 局在审计窗口之前（本人此前的对局，作为基线）；局数从窗口开始计。"
    )


def test_a_boosting_flag_with_history_in_english() -> None:
    headline, details = words(BOOSTED, "en")
    assert headline.startswith("白雪's play jumps from game 4: ")
    assert details[-1] == (
        "38 of them were played before the audited window (the account's own earlier games, "
        "its baseline); games are numbered from the window's start."
    )


def test_without_history_the_games_count_from_the_first() -> None:
    headline, details = words({**BOOSTED, "history": 0}, "zh-hans")
    assert headline.startswith("白雪从第 42 局起表现突变")
    assert len(details) == 2
    old = {k: v for k, v in BOOSTED.items() if k != "history"}
    headline, details = words(old, "zh-hans")
    assert headline.startswith("白雪从第 42 局起表现突变")
    assert len(details) == 2


def test_a_day_design_effect_is_said_when_it_weakened_the_flag() -> None:
    _, details = words({**BOOSTED, "history": 0, "day_effect": 1.3184}, "zh-hans")
    assert details[-1] == (
        "同一天的对局状态相近：z 已除以对局日设计效应 1.32 的平方根（日内相关取自其他玩家）。"
    )
    _, details = words({**BOOSTED, "history": 0, "day_effect": 1.3184}, "en")
    assert details[-1] == (
        "Games on one day share a form: z is divided by the square root of the day design "
        "effect 1.32 (the day correlation taken from the other players)."
    )
    _, details = words({**BOOSTED, "history": 0, "day_effect": 1.0}, "zh-hans")
    assert len(details) == 2
