"""A "better together" flag in the reviewer's words (issue 28): the player, the partner and
each side's games together and apart, in Chinese."""

from django.utils import translation

from integrity.models import Flag
from web.case_evidence import flag_words


def test_a_together_flag_reads_as_sentences() -> None:
    flag = Flag(
        detector="together",
        player_keys=["a", "b"],
        q_value=0.004,
        evidence={
            "player": "b",
            "direction": "worse",
            "tests": 4,
            "sides": [
                {
                    "player": "a",
                    "together": 23,
                    "apart": 13,
                    "mean_together": -2.5,
                    "mean_apart": 4.0,
                },
                {
                    "player": "b",
                    "together": 23,
                    "apart": 32,
                    "mean_together": 70.0,
                    "mean_apart": -15.5,
                },
            ],
        },
    )
    names = {"a": "白雪", "b": "黑土"}
    with translation.override("zh-hans"):
        words = flag_words(flag, names.__getitem__)
    assert words.label == "同桌时成绩异常"
    assert words.headline.startswith("黑土与白雪同桌时，剩余牌分明显高于其他对局（q = ")
    assert words.details == [
        "白雪：同桌 23 局，剩余牌分比陌生对手平均 -2.5；其他 13 局平均 +4。",
        "黑土：同桌 23 局，剩余牌分比陌生对手平均 +70；其他 32 局平均 -15.5。",
        "剩余牌分与同桌一位陌生对手（搭档和常一起排队的人不计）相比；负数表示比他少。",
    ]
