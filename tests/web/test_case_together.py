"""A "better together" flag in the reviewer's words (issue 28): the player, the partner and
each side's games together and apart, in Chinese."""

from django.utils import translation

from integrity.models import Flag
from web.case_evidence import flag_words

#: One player's games together and apart, as the flag row stores them (without the shares).
COUNTS = {
    "player": "a",
    "together": 23,
    "apart": 13,
    "won_together": 6,
    "lost_together": 5,
    "won_apart": 3,
    "lost_apart": 4,
}


def test_a_together_flag_reads_as_sentences() -> None:
    flag = Flag(
        detector="together",
        player_keys=["a", "b"],
        q_value=0.004,
        evidence={
            "player": "b",
            "direction": "worse",
            "tests": 4,
            "shared": 23,
            "weight": 2.1,
            "sides": [
                {**COUNTS, "heavier_together": 0.375, "heavier_apart": 0.5},
                {
                    "player": "b",
                    "together": 23,
                    "apart": 32,
                    "won_together": 0,
                    "lost_together": 9,
                    "won_apart": 8,
                    "lost_apart": 7,
                    "heavier_together": 0.96,
                    "heavier_apart": None,
                },
            ],
        },
    )
    names = {"a": "白雪", "b": "黑土"}
    with translation.override("zh-hans"):
        words = flag_words(flag, names.__getitem__)
    assert words.label == "同桌时成绩异常"
    assert words.headline.startswith("黑土与白雪同桌时，对陌生对手的战绩明显差于其他对局（q = ")
    assert words.details == [
        "白雪：同桌 23 局，胜陌生对手 6 次、负 5 次，同输时牌分多于陌生对手的比例 38%；"
        "其他 13 局，胜 3 次、负 4 次，同输时 50%。",
        "黑土：同桌 23 局，胜陌生对手 0 次、负 9 次，同输时牌分多于陌生对手的比例 96%；"
        "其他 32 局，胜 8 次、负 7 次，同输时 —。",
        "每局与同桌的陌生对手比较（搭档和常一起排队的人不计）：比谁先出完（陌生对手的强弱按其审查期内的平均得分估计）；"
        "他没出完时，比他与没出完的陌生对手的剩余牌分（相同算一半）。",
    ]


def test_a_flag_stored_before_the_shares_reads_without_them() -> None:
    """A together-1 flag (mean hand differences, no shares) still reads; the shares show —."""
    side = {**COUNTS, "hands_together": -2.5, "hands_apart": 4.0}
    flag = Flag(
        detector="together",
        player_keys=["a", "b"],
        q_value=0.004,
        evidence={"player": "a", "direction": "better", "tests": 2, "sides": [side]},
    )
    with translation.override("zh-hans"):
        words = flag_words(flag, {"a": "白雪", "b": "黑土"}.__getitem__)
    assert words.details[0] == (
        "白雪：同桌 23 局，胜陌生对手 6 次、负 5 次，同输时牌分多于陌生对手的比例 —；"
        "其他 13 局，胜 3 次、负 4 次，同输时 —。"
    )
