"""Demo data for the embedded default: staff with each role and a field of players.

Deterministic (seeded), so every fresh clone shows the same site; idempotent."""

import random

from django.contrib.auth.models import Group
from django.db import transaction

from accounts.models import Player, User
from accounts.provinces import PROVINCES
from accounts.roles import ORGANISER, REVIEWER, ensure_roles

DEMO_PASSWORD = "demo-password"  # noqa: S105 - documented demo credential, local only
SURNAMES = "王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗"
GIVEN = "伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂"


def _staff() -> None:
    ensure_roles()
    for username, role, superuser in (
        ("demo", None, True),
        ("organiser", ORGANISER, False),
        ("reviewer", REVIEWER, False),
    ):
        user, created = User.objects.get_or_create(
            username=username, defaults={"is_staff": True, "is_superuser": superuser}
        )
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        if role:
            user.groups.add(Group.objects.get(name=role))


def demo_players(count: int, seed: int = 2021) -> list[Player]:
    rng = random.Random(seed)  # noqa: S311 - demo names, not security
    # Population-weighted-ish: the big provinces get more players.
    weights = [3 if p in ("广东", "江苏", "浙江", "山东", "河南", "四川") else 1 for p in PROVINCES]
    return [
        Player(
            external_id=f"p{i:07d}",
            name=rng.choice(SURNAMES) + rng.choice(GIVEN) + rng.choice(GIVEN),
            province=rng.choices(PROVINCES, weights)[0],
        )
        for i in range(1, count + 1)
    ]


@transaction.atomic
def load_demo(*, players: int = 400) -> dict[str, int]:
    _staff()
    Player.objects.bulk_create(demo_players(players), ignore_conflicts=True)
    return {"players": Player.objects.count(), "staff": User.objects.filter(is_staff=True).count()}
