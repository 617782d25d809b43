"""A soft-play flag in the reviewer's words (issue 28): the actor, the target, the chances
of each kind (to punish, to challenge a +4, to hand over a better hand with a 7), in Chinese
and in English."""

from django.utils import translation

from integrity.models import Flag
from web.case_evidence import flag_words

EVIDENCE = {
    "actor": "b",
    "target": "h",
    "chances": 19,
    "punished": 0,
    "chances_others": 61,
    "punished_others": 38,
    "kinds": [
        {
            "kind": "punish",
            "chances": 12,
            "punished": 0,
            "chances_others": 40,
            "punished_others": 30,
            "p": 1e-6,
        },
        {
            "kind": "challenge",
            "chances": 3,
            "punished": 0,
            "chances_others": 9,
            "punished_others": 3,
            "p": 0.3,
        },
        {
            "kind": "swap",
            "chances": 4,
            "punished": 0,
            "chances_others": 12,
            "punished_others": 5,
            "p": 0.1,
        },
    ],
}


def _flag(evidence: dict[str, object]) -> Flag:
    return Flag(detector="softplay", player_keys=["b", "h"], q_value=3.2e-5, evidence=evidence)


def test_a_soft_play_flag_reads_kind_by_kind() -> None:
    names = {"b": "白雪", "h": "黑土"}
    with translation.override("zh-hans"):
        words = flag_words(_flag(EVIDENCE), names.__getitem__)
    assert words.headline.startswith(
        "白雪对黑土手下留情：19 次机会只用了 0 次，对其他人的 61 次机会用了 38 次（q = "
    )
    assert words.details == [
        "惩罚：对黑土的 12 次机会用了 0 次，对其他人的 40 次用了 30 次。",
        "质疑 +4：黑土打出的 +4 有 3 次可质疑，质疑了 0 次；其他人的 9 次质疑了 3 次。",
        "出 7 换牌：4 次能把更少的手牌换给黑土，0 次换给了别人；"
        "对其他人的 12 次里 5 次没换给对方。",
        "机会：下家只剩两张牌以内、手里有可出的 +2、跳过、反转或 +4 时（惩罚）；对方的 +4 "
        "可以质疑时（质疑）；出 7 换牌、对方手牌比自己多时（换牌）。",
    ]
    with translation.override("en"):
        english = flag_words(_flag(EVIDENCE), names.__getitem__)
    assert english.details[1] == (
        "Challenge a +4: 0 of the 3 +4s of 黑土 that could be challenged were; 3 of 9 of "
        "everyone else's."
    )


def test_a_flag_stored_without_kinds_keeps_its_headline() -> None:
    old = {key: value for key, value in EVIDENCE.items() if key != "kinds"}
    with translation.override("zh-hans"):
        words = flag_words(_flag(old), {"b": "白雪", "h": "黑土"}.__getitem__)
    assert words.headline.startswith("白雪对黑土手下留情：19 次机会只用了 0 次")
    assert len(words.details) == 1
