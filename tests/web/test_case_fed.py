"""A fed-account flag in the reviewer's words (SPEC §7: farms): the group's hands in the
account's wins and in the others' wins, the account's wins apart, and the test with its
margin, in Chinese and English."""

from django.utils import translation

from integrity.models import Flag
from tests.web.cases import FED
from web.case_evidence import flag_words


def words(evidence: dict[str, object], language: str) -> tuple[str, str, list[str]]:
    flag = Flag(
        detector="fed", version="fed-1", player_keys=["b", "h"], q_value=4.1e-4, evidence=evidence
    )
    names = {"b": "白雪", "h": "黑土"}
    with translation.override(language):
        said = flag_words(flag, names.__getitem__)
        return str(said.label), said.headline, said.details


def test_a_fed_account_in_chinese() -> None:
    label, headline, details = words(FED, "zh-hans")
    assert label == "养号（一伙人给一个号送分）"
    assert headline == (
        "白雪赢的 12 局里，常和白雪一起排队的黑土平均剩 168.5 分手牌；别人赢的 7 局里只剩 62.4 分"
        "（q = 4.1×10⁻⁴）"
    )
    assert details == [
        "白雪在他们同桌时赢的局里，输家平均剩 121 分；他们不在场时赢的 3 局里，输家平均剩 70 分。",
        "检验：同一伙人在同一类牌桌上，白雪赢时的手牌与别人（同伙或陌生人）赢时比较"
        "（秩和检验），先减去 15 分的余量：有的人赢牌本来就让输家剩得多，送分要比这更重才算。",
    ]


def test_a_fed_account_in_english() -> None:
    label, headline, details = words(FED, "en")
    assert label == "A fed account (a group feeding one account)"
    assert headline == (
        "In 白雪's 12 wins, 黑土, who queue with 白雪, kept 168.5 points in hand on average; "
        "in the 7 games someone else won, only 62.4 (q = 4.1×10⁻⁴)"
    )
    assert details == [
        "In 白雪's wins with them at the table the losers kept 121 points on average; in the "
        "3 wins without them, 70.",
        "Test: the same group's hands at the same tables when 白雪 wins against when someone "
        "else (one of them or a stranger) wins (rank sum), less a margin of 15 points: some "
        "players' wins leave heavy hands anyway, and feeding must weigh more than that.",
    ]


def test_an_account_without_wins_apart_says_so() -> None:
    evidence = {**FED, "apart_wins": 0, "losers_apart": None}
    _, _, details = words(evidence, "zh-hans")
    assert details[0] == "白雪没有他们不在场时赢的局，无从比较白雪平时赢牌时输家剩多少。"
    _, _, details = words(evidence, "en")
    assert details[0] == (
        "白雪 won no game without them at the table: nothing shows how heavy the losers' "
        "hands are when 白雪 wins elsewhere."
    )
