"""A refused hand in people's words (the console's ``ServiceError.say``): which card, whose
hand and where. ``CardError`` (``tournaments.domain.cards``) speaks English only, for the
API's message; pages say the same facts in the page's language."""

from collections.abc import Mapping, Sequence

from django.utils.translation import gettext as _

from tournaments.domain.cards import CardError, CardTable


def hand_refusal(
    exc: CardError,
    where: str,
    keys: Sequence[str],
    hands: Mapping[str, Sequence[str]],
    table: CardTable,
) -> str:
    """``exc`` said at ``where`` (the game, already in words: "对局 X", "2 号桌第 3 局"), for
    the players ``keys`` (by seat) holding ``hands`` under the card table ``table``."""
    facts: dict[str, object] = {"where": where, "card": exc.code}
    if exc.seat is not None:
        facts["player"] = keys[exc.seat]
        if isinstance(hands[keys[exc.seat]], str):
            return _("%(where)s，%(player)s：手牌须为牌码的列表。") % facts
        if not isinstance(exc.code, str):
            return _("%(where)s，%(player)s：牌码须为文字，填的是 %(card)s。") % facts
        return _("%(where)s，%(player)s：本赛事的牌表没有 %(card)s 这张牌。") % facts
    if exc.code is None:
        facts["cards"] = sum(len(hands[key]) for key in keys)
        facts["deck"] = table.size
        return _("%(where)s：各手牌共 %(cards)s 张，超过整副牌的 %(deck)s 张。") % facts
    facts["count"] = sum(list(hands[key]).count(str(exc.code)) for key in keys)
    facts["copies"] = table.copies.get(str(exc.code), 0)
    return _("%(where)s：%(card)s 出现了 %(count)s 次，但整副牌只有 %(copies)s 张。") % facts
