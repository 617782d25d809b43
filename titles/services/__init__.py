"""Title services (SPEC §6, §8), by concept: the ledger (:mod:`.ledger`), World Cup
representation (:mod:`.world_cup`), review (:mod:`.review`), revocation
(:mod:`.revocation`) and the daily jobs (:mod:`.jobs`).

Every write takes the players' title locks first (:func:`titles.recompute.titles_lock`,
player id order), then the qualification rows (id order); a write that changes which
qualifications count recomputes the players' titles in the same transaction. Approval
takes the integrity audit's answer from its caller: ``flows.grants`` asks the integrity app
and calls these services.
"""

from titles.services.jobs import REMINDER_DAYS, reminders_due, titles_expire, titles_remind
from titles.services.ledger import (
    DEFAULT_RULES,
    achievement_record,
    achievement_withdraw,
    international_master_enter,
    qualification_enter,
    rules_ensure_defaults,
)
from titles.services.review import (
    AuditCheck,
    BulkOutcome,
    player_is_held,
    qualification_approve,
    qualification_reject,
    qualifications_auto_approve,
    qualifications_bulk_approve,
)
from titles.services.revocation import titles_restore, titles_revoke
from titles.services.world_cup import world_cup_representative_enter, world_cup_snapshot

__all__ = [
    "DEFAULT_RULES",
    "REMINDER_DAYS",
    "AuditCheck",
    "BulkOutcome",
    "achievement_record",
    "achievement_withdraw",
    "international_master_enter",
    "player_is_held",
    "qualification_approve",
    "qualification_enter",
    "qualification_reject",
    "qualifications_auto_approve",
    "qualifications_bulk_approve",
    "reminders_due",
    "rules_ensure_defaults",
    "titles_expire",
    "titles_remind",
    "titles_restore",
    "titles_revoke",
    "world_cup_representative_enter",
    "world_cup_snapshot",
]
