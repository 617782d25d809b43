"""Seeding ``post_migrate`` handlers skip tables a partial ``migrate`` has not created."""

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from titles.models import QualificationRule
from titles.services import DEFAULT_RULES, rules_ensure_defaults

TOURNAMENTS_0003 = ("tournaments", "0003_remove_standing_standing_unique_player_and_more")


def _state_after(node: tuple[str, str]) -> Any:
    return MigrationExecutor(connection).loader.project_state(node, at_end=True).apps


@pytest.mark.django_db
def test_handlers_run_no_query_for_apps_a_partial_migrate_left_out(
    django_assert_num_queries: Any,
) -> None:
    state = _state_after(TOURNAMENTS_0003)

    with django_assert_num_queries(0):
        rules_ensure_defaults(apps=state)


@pytest.mark.django_db
def test_handlers_seed_once_the_tables_exist() -> None:
    QualificationRule.objects.all().delete()
    state = MigrationExecutor(connection).loader.project_state().apps

    rules_ensure_defaults(apps=state)

    keys = sorted(QualificationRule.objects.values_list("key", flat=True))
    assert keys == sorted(key for key, _, _ in DEFAULT_RULES)
