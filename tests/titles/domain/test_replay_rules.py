"""A Lifetime rule that confers even without a valid Master (SPEC §6: "unless an admin's
rule says so"), per qualification."""

from datetime import date

from titles.domain.replay import IGNORED, LIFETIME, LIFETIME_CONFERRED, Qualification, replay


def test_a_lifetime_qualification_may_confer_without_a_valid_master() -> None:
    strict = Qualification(source="nc", on=date(2021, 11, 20), confers=LIFETIME)
    open_rule = Qualification(
        source="cm", on=date(2021, 12, 1), confers=LIFETIME, requires_valid_master=False
    )
    assert [c.kind for c in replay([strict]).changes] == [IGNORED]
    history = replay([strict, open_rule])
    assert [c.kind for c in history.changes] == [IGNORED, LIFETIME_CONFERRED]
    assert (history.lifetime_since, history.lifetime_source) == (date(2021, 12, 1), "cm")
    assert history.status_on(date(2021, 12, 1)) == "lifetime"


def test_requires_valid_master_defaults_to_true() -> None:
    assert Qualification(source="nc", on=date(2021, 1, 1), confers=LIFETIME).requires_valid_master
