"""Today on the tour's clock (:mod:`core.domain.clock`), from Django's ``timezone.now``."""

from datetime import date

from django.utils import timezone

from core.domain.clock import TOUR_TZ, tour_day

__all__ = ["TOUR_TZ", "tour_day", "tour_today"]


def tour_today() -> date:
    """Today in the tour's time zone (Asia/Shanghai)."""
    return tour_day(timezone.now())
