"""Players' notices, the reads (issue #27)."""

from django.db.models import Count, QuerySet

from accounts.models import Player
from notices.models import Notice, NoticeDelivery

#: Notices a player's page shows.
FEED_LENGTH = 50


def player_notices(*, player: Player, limit: int = FEED_LENGTH) -> QuerySet[Notice]:
    """``player``'s notices, newest first (written last first), at most ``limit``."""
    return Notice.objects.filter(player=player).order_by("-created_at", "-id")[:limit]


def delivery_states() -> dict[tuple[str, str], int]:
    """How many notice deliveries are in each (channel, state): ``sent`` counts only the
    delivered ones (an e-mail the backend accepted, a webhook the partner answered 2xx)."""
    rows = NoticeDelivery.objects.values_list("channel", "state").annotate(n=Count("pk"))
    return {(channel, state): n for channel, state, n in rows.order_by("channel", "state")}
