"""A cards-kept flag in the reviewer's words (SPEC §7: collusion): who kept how many cards
more than whom in the games both lost, against what their strengths say, in Chinese and
English."""

import pytest
from django.utils import translation

from integrity.models import Flag
from tests.web.cases import KEPT
from web.case_evidence import flag_words


def words(evidence: dict[str, object], language: str) -> tuple[str, str, list[str]]:
    flag = Flag(
        detector="kept", version="kept-3", player_keys=["b", "h"], q_value=2.4e-5, evidence=evidence
    )
    names = {"b": "白雪", "h": "黑土"}
    with translation.override(language):
        said = flag_words(flag, names.__getitem__)
        return str(said.label), said.headline, said.details


def test_cards_kept_in_chinese() -> None:
    label, headline, details = words(KEPT, "zh-hans")
    assert label == "替搭档扛牌"
    assert headline == (
        "黑土与白雪同桌都没出完的 17 局里，黑土平均比白雪多剩 5.6 张牌；按两人的实力只该多 1.3 张"
        "（q = 2.4×10⁻⁵）"
    )
    assert details == [
        "实力按各自对陌生对手的胜负估计；同一局里两个不一起排队的输家，实力每差一级，"
        "剩牌相差多少，由本周所有这样的输家算出。把搭档的牌接过去（喂色、替他摸牌），"
        "搭档剩得少、自己剩得多，却不必多赢一局。",
        "每人也有自己的留牌习惯（有人爱攒万能牌）：本周被检验的玩家不与搭档同桌时，"
        "这种习惯因人而异，相差约 0.6 张（标准差），判断时已留出这份余地。",
        "以上局数包括审计窗口之前 7 天里的对局。",
    ]


def test_cards_kept_in_english() -> None:
    label, headline, details = words(KEPT, "en")
    assert label == "Cards kept for a partner"
    assert headline == (
        "In the 17 games at one table that neither 黑土 nor 白雪 won, 黑土 kept 5.6 cards more "
        "than 白雪 on average; their strengths say 1.3 more (q = 2.4×10⁻⁵)"
    )
    assert details[0].startswith("Each player's strength is read from his wins and losses")
    assert details[1] == (
        "Players have habits of their own in the cards they keep (some hoard wilds): this "
        "week the players tested differed by about 0.6 cards (one SD) in their games without "
        "their partners, and the test allows for it."
    )


@pytest.mark.parametrize(
    ("style", "chinese"),
    [
        (0.0, ["本周被检验的玩家不与搭档同桌时，剩牌与各自实力相符，看不出因人而异的留牌习惯。"]),
        (None, []),  # a flag stored before the test read the players' habits
    ],
)
def test_the_players_habits_are_said_as_the_week_showed_them(
    style: float | None, chinese: list[str]
) -> None:
    evidence = {key: value for key, value in KEPT.items() if key != "style"}
    if style is not None:
        evidence["style"] = style
    details = words(evidence, "zh-hans")[2]
    assert details[1:] == [*chinese, "以上局数包括审计窗口之前 7 天里的对局。"]


@pytest.mark.parametrize(
    ("kept", "expected", "chinese", "english"),
    [
        # the feeder is the stronger: his strength says he should have kept fewer cards
        (
            0.52,
            -0.61,
            "多剩 0.5 张牌；按两人的实力本该少剩 0.6 张",
            "0.5 cards more than 白雪 on average; their strengths say 0.6 fewer",
        ),
        # he kept fewer cards than his partner, though not as few as his strength says
        (
            -0.48,
            -2.04,
            "少剩 0.5 张牌；按两人的实力本该少剩 2 张",
            "0.5 cards fewer than 白雪 on average; their strengths say 2 fewer",
        ),
    ],
)
def test_fewer_cards_are_said_as_fewer(
    kept: float, expected: float, chinese: str, english: str
) -> None:
    evidence = {**KEPT, "kept": kept, "expected": expected}
    assert words(evidence, "zh-hans")[1] == (
        f"黑土与白雪同桌都没出完的 17 局里，黑土平均比白雪{chinese}（q = 2.4×10⁻⁵）"
    )
    assert words(evidence, "en")[1] == (
        "In the 17 games at one table that neither 黑土 nor 白雪 won, 黑土 kept "
        f"{english} (q = 2.4×10⁻⁵)"
    )


def test_evidence_of_another_shape_is_shown_as_it_is() -> None:
    label, headline, details = words({"games": 17}, "zh-hans")
    assert label == "替搭档扛牌"
    assert details == ["games: 17"]
