"""Tests for tournaments.domain.advancement: quotas, union of lists, no passing down (SPEC §2)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tournaments.domain.advancement import (
    Basis,
    Quota,
    RankedRow,
    StandingRow,
    advance,
    basis_for,
    explain,
)
from tournaments.domain.leaderboard import Standing, rank

WEEKLY_QUALIFIER = Quota(national=0, per_province=100)  # 周预赛 → 周赛
WEEKLY_FINAL = Quota(national=100, per_province=10)  # 周赛 → 月赛 (the monthly final)


@dataclass(frozen=True)
class Row:
    """A plain stand-in for a leaderboard row (what the database layer hands over)."""

    player: str
    province: str
    rank: int | None
    province_rank: int | None
    games: int = 15


def field_from_provinces(provinces: list[str]) -> list[Row]:
    """Rows ranked 1..len in the given order of provinces, with province ranks counted."""
    counts: dict[str, int] = {}
    rows = []
    for position, province in enumerate(provinces, start=1):
        counts[province] = counts.get(province, 0) + 1
        rows.append(Row(f"p{position:07d}", province, position, counts[province]))
    return rows


def monthly_field() -> list[Row]:
    """300 ranked players: ranks 1-100 alternate 江苏/浙江; 101, 102 are 江苏, 浙江; then
    上海, 安徽, 江苏, 浙江 in turn. 上海 and 安徽 have nobody in the national top 100."""
    top = ["江苏", "浙江"] * 50
    rest = ["江苏", "浙江"] + ["上海", "安徽", "江苏", "浙江"] * 49 + ["上海", "安徽"]
    return field_from_provinces(top + rest)


def test_weekly_qualifier_sends_top_100_of_each_province() -> None:
    rows = field_from_provinces(["江苏"] * 150 + ["浙江"] * 80 + ["上海"] * 120)
    result = advance(rows, WEEKLY_QUALIFIER)
    by_province = {
        province: sum(1 for row in rows if row.player in result and row.province == province)
        for province in ("江苏", "浙江", "上海")
    }
    assert by_province == {"江苏": 100, "浙江": 80, "上海": 100}
    assert len(result) == 280
    assert all(basis.by_province and not basis.by_national for basis in result.values())
    assert result["p0000001"].reason == "province rank 1 ≤ 100"


def test_monthly_union_takes_one_place_per_player_and_passes_nothing_down() -> None:
    rows = monthly_field()
    assert len(rows) == 300
    result = advance(rows, WEEKLY_FINAL)

    national = {row.player for row in rows if row.rank is not None and row.rank <= 100}
    provincial = {
        row.player for row in rows if row.province_rank is not None and row.province_rank <= 10
    }
    assert len(national) == 100
    assert len(provincial) == 40
    assert len(national & provincial) == 20  # 江苏 and 浙江's top 10 are all national top 100
    assert set(result) == national | provincial
    assert len(result) == 120  # not 140: the 20 overlapping players take one place each

    # Nobody below a cut-off moves up into the spare places.
    assert "p0000101" not in result  # national 101, 江苏 province rank 51
    assert "p0000102" not in result  # national 102, 浙江 province rank 51
    below = [row for row in rows if row.province in ("江苏", "浙江") and row not in rows[:100]]
    assert len(below) == 100
    assert not any(row.player in result for row in below)

    # 上海's top 10 come in on the provincial list only.
    shanghai = [row for row in rows if row.province == "上海"]
    assert [row.player in result for row in shanghai[:11]] == [True] * 10 + [False]
    assert list(result) == sorted(result, key=lambda player: result[player].national_rank)


def test_basis_reasons() -> None:
    both = basis_for(Row("p1", "江苏", 37, 2), WEEKLY_FINAL)
    assert both == Basis("p1", 37, 2, by_national=True, by_province=True, quota=WEEKLY_FINAL)
    assert both.reason == "national rank 37 ≤ 100; province rank 2 ≤ 10"
    national_only = basis_for(Row("p2", "江苏", 60, 30), WEEKLY_FINAL)
    assert national_only is not None
    assert (national_only.by_national, national_only.by_province) == (True, False)
    assert national_only.reason == "national rank 60 ≤ 100; province rank 30 > 10"
    provincial_only = basis_for(Row("p3", "西藏", 2400, 1), WEEKLY_FINAL)
    assert provincial_only is not None
    assert provincial_only.reason == "national rank 2400 > 100; province rank 1 ≤ 10"
    assert basis_for(Row("p4", "江苏", 150, 12), WEEKLY_FINAL) is None


def test_unranked_never_advances() -> None:
    rows = [
        Row("p1", "西藏", None, None, games=14),
        Row("p2", "西藏", 1, 1),
        Row("p3", "澳门", None, None, games=0),
    ]
    for quota in (WEEKLY_QUALIFIER, WEEKLY_FINAL, Quota(national=10_000, per_province=10_000)):
        assert set(advance(rows, quota)) == {"p2"}


def test_unranked_from_the_leaderboard_never_advances() -> None:
    standings = [
        Standing("p1", "西藏", games=14, kept=(900,), total=900, best=900),
        Standing("p2", "西藏", games=15, kept=(1,), total=1, best=1),
    ]
    ranked = rank(standings, minimum_games=15)
    assert set(advance(ranked, WEEKLY_QUALIFIER)) == {"p2"}
    verdict = explain(ranked[1], WEEKLY_QUALIFIER, minimum_games=15)
    assert (verdict.player, verdict.advances, verdict.reason) == (
        "p1",
        False,
        "unranked: 14 games, 15 needed",
    )


def test_leaderboard_rows_satisfy_the_protocols() -> None:
    ranked = rank([Standing("p1", "江苏", games=15)], minimum_games=15)
    row: StandingRow = ranked[0]
    ranked_row: RankedRow = ranked[0]
    assert row.games == 15
    assert ranked_row.rank == 1


@pytest.mark.parametrize(
    ("quota", "expected"),
    [
        (Quota(national=0, per_province=0), set()),
        (Quota(national=3, per_province=0), {"p0000001", "p0000002", "p0000003"}),
        (Quota(national=0, per_province=1), {"p0000001", "p0000002", "p0000004"}),
        (Quota(national=2, per_province=1), {"p0000001", "p0000002", "p0000004"}),
    ],
)
def test_quotas_are_settings(quota: Quota, expected: set[str]) -> None:
    rows = field_from_provinces(["江苏", "浙江", "江苏", "上海", "浙江"])
    assert set(advance(rows, quota)) == expected


@pytest.mark.parametrize(
    ("national", "per_province"), [(-1, 10), (100, -1), (True, 10), (100, 1.5)]
)
def test_quota_rejects_bad_values(national: int, per_province: int) -> None:
    with pytest.raises(ValueError, match="must be an integer >= 0"):
        Quota(national=national, per_province=per_province)


def test_duplicate_player_is_rejected() -> None:
    rows = [Row("p1", "江苏", 1, 1), Row("p1", "江苏", 2, 2)]
    with pytest.raises(ValueError, match="p1 appears more than once"):
        advance(rows, WEEKLY_FINAL)


def test_rank_without_province_rank_is_rejected() -> None:
    with pytest.raises(ValueError, match="no province rank"):
        advance([Row("p1", "江苏", 1, None)], WEEKLY_FINAL)


@pytest.mark.parametrize(
    ("row", "quota", "advances", "reason"),
    [
        (
            Row("p1", "江苏", 37, 2),
            WEEKLY_FINAL,
            True,
            "national rank 37 ≤ 100; province rank 2 ≤ 10",
        ),
        (
            Row("p2", "江苏", None, None, games=14),
            WEEKLY_FINAL,
            False,
            "unranked: 14 games, 15 needed",
        ),
        (
            Row("p3", "江苏", None, None, games=20),
            WEEKLY_FINAL,
            False,
            "unranked: not ranked despite 20 games (15 needed)",
        ),
        (
            Row("p4", "江苏", 150, 12),
            WEEKLY_FINAL,
            False,
            "below both cut-offs: national rank 150 > 100, province rank 12 > 10",
        ),
        (
            Row("p5", "江苏", 150, 120),
            WEEKLY_QUALIFIER,
            False,
            "below the cut-off: province rank 120 > 100",
        ),
        (
            Row("p6", "江苏", 1, 1),
            Quota(national=0, per_province=0),
            False,
            "no places: the quota is 0 national and 0 per province",
        ),
    ],
)
def test_explain(row: Row, quota: Quota, advances: bool, reason: str) -> None:
    verdict = explain(row, quota, minimum_games=15)
    assert verdict.advances is advances
    assert verdict.reason == reason
    assert str(verdict) == reason
    assert (verdict.basis is not None) is advances
    assert verdict.player == row.player


standings_strategy = st.lists(
    st.builds(
        Standing,
        st.text(alphabet="p0123456789", min_size=1, max_size=4),
        st.sampled_from(["江苏", "浙江", "上海", "西藏"]),
        games=st.integers(min_value=0, max_value=20),
        total=st.integers(min_value=-30, max_value=30),
    ),
    max_size=40,
    unique_by=lambda standing: standing.player,
)


@given(
    field=standings_strategy,
    national=st.integers(min_value=0, max_value=12),
    per_province=st.integers(min_value=0, max_value=4),
)
def test_advance_is_exactly_the_union(
    field: list[Standing], national: int, per_province: int
) -> None:
    ranked = rank(field, minimum_games=15)
    quota = Quota(national=national, per_province=per_province)
    result = advance(ranked, quota)
    by_national = {row.player for row in ranked if row.rank is not None and row.rank <= national}
    by_province = {
        row.player
        for row in ranked
        if row.province_rank is not None and row.province_rank <= per_province
    }
    assert set(result) == by_national | by_province
    assert len(result) <= national + 4 * per_province
    for player, basis in result.items():
        assert basis.by_national is (player in by_national)
        assert basis.by_province is (player in by_province)
    for row in ranked:
        assert explain(row, quota, minimum_games=15).advances is (row.player in result)
