"""The exports read the same small tour as the pages (``tests.web.tour``)."""

from tests.web.conftest import built_tour, frozen, tour  # noqa: F401 - fixtures shared with tests/web
