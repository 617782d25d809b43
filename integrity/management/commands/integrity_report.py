"""``manage.py integrity_report --players N --weeks W --cheaters F --seed S``: the detectors
measured on simulated seasons (SPEC §7), in memory — no database.

Simulates a season with ``F`` × ``N`` injected cheaters and the honest-only season of the
same seed (``integrity.simulation``), audits both with the detectors ``audit_run`` uses and
prints: recall of farms and colluding pairs with >= 20 shared games (cased and flagged),
boosters separately, precision@k among the top k cases (k = injected farms and pairs), the
false discoveries of each statistical detector, and the honest season's flags and cases.
Definitions: ``integrity.report``.
"""

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from integrity.conf import audit_params
from integrity.report import MIN_SHARED, report
from tournaments.domain.rules import ruleset_from_text


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


class Command(BaseCommand):
    help = "Measure the integrity detectors on a simulated injected season and an honest one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--players", type=int, default=20_000)
        parser.add_argument("--weeks", type=int, default=4)
        parser.add_argument("--cheaters", type=float, default=0.005)
        parser.add_argument("--seed", type=int, default=2021)
        parser.add_argument("--json", dest="json_path", help="also write the figures here")
        parser.add_argument(
            "--logs",
            metavar="RULESET",
            help="play the games out with move logs under these rules of play (a preset or a "
            "JSON spec) and audit soft play from them",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            rules = None if options["logs"] is None else ruleset_from_text(options["logs"])
            figures = report(
                players=options["players"],
                weeks=options["weeks"],
                cheaters=options["cheaters"],
                seed=options["seed"],
                params=audit_params(),
                rules=rules,
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        self._print(figures)
        if options["json_path"]:
            Path(options["json_path"]).write_text(
                json.dumps(figures, indent=2, ensure_ascii=False), encoding="utf-8"
            )
            self.stdout.write(f"written {options['json_path']}")

    def _print(self, figures: dict[str, Any]) -> None:
        out = self.stdout.write
        p = figures["params"]
        out(
            f"integrity_report: {p['players']} players, {p['weeks']} weeks, cheaters "
            f"{p['cheaters']}, seed {p['seed']}, q {p['q']}, degree cap {p['max_degree']}"
        )
        for name in ("injected", "honest"):
            f = figures[name]
            size = f["size"]
            out(
                f"\n[{name} season] {size['games']} games, {size['seats']} seats, "
                f"{size['players']} players; seconds {f['seconds']}"
            )
            for group in ("farms", "pairs"):
                g = f[group]
                cased, flagged = g["cased"], g["flagged"]
                out(
                    f"  {group}: injected {cased['injected']}, with >= {MIN_SHARED} shared games "
                    f"{cased['eligible']} (shared {g['shared_games']['min']}-"
                    f"{g['shared_games']['max']}); recall cased {cased['found']}/"
                    f"{cased['eligible']} = {_ratio(cased['recall'])}, flagged "
                    f"{flagged['found']}/{flagged['eligible']} = {_ratio(flagged['recall'])}; "
                    f"not cased (shared games): {g['not_cased_shared_games']}"
                )
            b = f["boosters"]
            out(
                f"  boosters: injected {b['injected']}, flagged {b['flagged']} "
                f"(recall {_ratio(b['recall_flagged'])}), in cases {b['cased']}"
            )
            c = f["cases"]
            out(
                f"  cases: {c['total']} ({c['true']} true); precision@k (k={c['k']}): "
                f"{c['hits_top_k']}/{c['k']} = {_ratio(c['precision_at_k'])}; scores: lowest "
                f"true {c['lowest_true_score']}, highest false {c['highest_false_score']}; "
                f"review queue {c['review_queue']} flags"
            )
            for detector in ("coseating", "pointflow", "boosting", "softplay"):
                if detector not in f["detectors"]:
                    continue
                d = f["detectors"][detector]
                out(
                    f"  {detector}: family m={d['family_size']}, flags {d['flags']}, false "
                    f"{d['false']}, realised FDP {d['fdp']:.3f}"
                )
            s = f["detectors"]["sessions"]
            out(
                f"  sessions: clusters {s['clusters']}, same-table links "
                f"{s['same_table_links']}, shared addresses dropped {s['dropped_ips']}, "
                f"devices dropped {s['dropped_devices']}"
            )
