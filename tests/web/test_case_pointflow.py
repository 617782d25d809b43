"""A point-flow flag in the reviewer's words (SPEC §7: collusion): the partner's wins, the
feeder's hands in them and apart, and the test that decided, in Chinese and English."""

from django.utils import translation

from integrity.models import Flag
from tests.web.cases import RANK_FLOW
from web.case_evidence import flag_words


def words(
    evidence: dict[str, object], language: str, version: str = "pointflow-3"
) -> tuple[str, list[str]]:
    flag = Flag(
        detector="pointflow",
        version=version,
        player_keys=["b", "h"],
        q_value=0.003,
        evidence=evidence,
    )
    names = {"b": "白雪", "h": "黑土"}
    with translation.override(language):
        said = flag_words(flag, names.__getitem__)
    return said.headline, said.details


def test_a_rank_tested_flag_names_the_games_apart() -> None:
    headline, details = words(RANK_FLOW, "zh-hans")
    assert headline.startswith(
        "白雪赢的 9 局里黑土平均剩 154.2 分手牌，不和白雪同桌的输局平均只剩 71.5 分（q = "
    )
    assert details == [
        "其中 7 局黑土的手牌不比任何没出完的陌生对手轻（常一起排队的人不算陌生对手），"
        "随机预期 3 局。",
        "这些局里黑土共输给白雪 1388 分；黑土赢白雪的 1 局里，白雪输给黑土 12 分。",
        "检验：黑土在这些局的手牌与其不和白雪同桌的 41 局输局比较（秩和检验）。",
    ]
    headline, details = words(RANK_FLOW, "en")
    assert headline.startswith(
        "In 白雪's 9 wins 黑土 kept 154.2 points in hand on average, against 71.5 in "
        "lost games without 白雪 at the table (q = "
    )
    assert details[-1] == (
        "Test: 黑土's hands in these games against 黑土's 41 lost games without 白雪 at "
        "the table (rank sum)."
    )


def test_a_flag_without_games_apart_says_the_sign_test_decided() -> None:
    evidence = {**RANK_FLOW, "test": "sign", "baseline_games": 0, "feeder_baseline": None}
    headline, details = words(evidence, "zh-hans")
    assert headline.startswith("白雪赢的 9 局里黑土都在同桌，平均剩 154.2 分手牌（q = ")
    assert details[-1] == (
        "检验：数黑土手牌不比陌生对手轻的局数（黑土不和白雪同桌的输局太少，不够比较）。"
    )
    headline, details = words(evidence, "en")
    assert (details[0], details[-1]) == (
        "In 7 of them 黑土's hand was no lighter than any losing stranger's (players who "
        "often queue together are no strangers); 3 expected by chance.",
        "Test: the games in which 黑土's hand was no lighter than the losing strangers' "
        "(黑土 has too few lost games without 白雪 to compare with).",
    )


def test_a_flag_of_an_older_version_is_said_in_its_own_terms() -> None:
    """pointflow-2 counted the heaviest of all the losing hands and put the games both lost
    in the feeder's baseline."""
    _, details = words(RANK_FLOW, "zh-hans", version="pointflow-2")
    assert (details[0], details[-1]) == (
        "其中 7 局黑土的手牌在输家中最重，随机预期 3 局。",
        "检验：黑土在这些局的手牌与其另外 41 局输局比较（秩和检验）。",
    )
    evidence = {**RANK_FLOW, "test": "sign", "baseline_games": 0, "feeder_baseline": None}
    _, details = words(evidence, "en", version="pointflow-2")
    assert details[-1] == (
        "Test: the count of games where 黑土 held the heaviest hand (too few other lost "
        "games to compare)."
    )


def test_a_flag_of_a_run_that_read_the_week_before_says_its_counts_include_it() -> None:
    evidence = {**RANK_FLOW, "history_days": 7}
    _, details = words(evidence, "zh-hans", "pointflow-5")
    assert details[-1] == "以上局数包括审计窗口之前 7 天里的对局。"
    _, details = words(evidence, "en", "pointflow-5")
    assert details[-1] == "These counts include the games of the 7 days before the audit's window."
    # A run that read no history says nothing of it.
    _, details = words({**RANK_FLOW, "history_days": 0}, "zh-hans", "pointflow-5")
    assert details == words(RANK_FLOW, "zh-hans")[1]
