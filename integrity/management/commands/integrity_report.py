"""``manage.py integrity_report --players N --weeks W --cheaters F --seed S`` (or ``--seeds
S1,S2,…``) ``[--models M]``: the detectors measured on simulated seasons (SPEC
§7), in memory — no database.

Per seed, simulates a season with ``F`` × ``N`` injected cheaters and the honest-only season
of the same seed (``integrity.simulation``; ``--models``: the varied models of issue 28, the
default, the first simulator's, the stress tests of the nulls or the ``stronger`` pairs:
``integrity.report.MODELS``), audits both with the detectors ``audit_run`` uses and
prints: recall of farms and colluding pairs with >= 20 shared games (cased and flagged),
boosters per booster model (flagged and in cases; all of them, those with >= 30 games of
the hired player, and those with also >= 10 of the owner), precision@k among the top k cases
(k = injected farms and pairs), the honest cases and whether they rank below every true
case, the false discoveries of each statistical detector (a false boosting flag with the
honest models of its account), and the honest season's flags and cases. With several seeds,
a summary per seed follows. Definitions: ``integrity.report``.
"""

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from integrity.conf import audit_params
from integrity.report import MIN_BOOSTED, MIN_OWNER, MIN_SHARED, MODELS, report
from tournaments.domain.rules import ruleset_from_text


def _q(value: float | None) -> str:
    """A near miss's q-value, or "-" when the test gave none below 1."""
    return "-" if value is None else f"{value:.2g}"


def _ratio(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _count(found: dict[str, Any]) -> str:
    return f"{found['cased']}/{found['injected']} = {_ratio(found['recall_cased'])}"


class Command(BaseCommand):
    help = "Measure the integrity detectors on a simulated injected season and an honest one."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--players", type=int, default=20_000)
        parser.add_argument("--weeks", type=int, default=4)
        parser.add_argument(
            "--history-weeks",
            type=int,
            default=0,
            help="weeks simulated before the audited ones: the audit's history (boosting's "
            "owner baseline and the pairs' earlier games, as the database audit reads the "
            "days before its window)",
        )
        parser.add_argument("--cheaters", type=float, default=0.005)
        parser.add_argument("--seed", type=int, default=2021)
        parser.add_argument(
            "--seeds", help="several seeds, comma-separated (each run in turn; overrides --seed)"
        )
        parser.add_argument("--models", choices=sorted(MODELS), default="varied")
        parser.add_argument("--json", dest="json_path", help="also write the figures here")
        parser.add_argument(
            "--logs",
            metavar="RULESET",
            help="play the games out with move logs under these rules of play (a preset or a "
            "JSON spec) and audit soft play from them",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            seeds = (
                [int(seed) for seed in options["seeds"].split(",")]
                if options["seeds"]
                else [options["seed"]]
            )
            rules = None if options["logs"] is None else ruleset_from_text(options["logs"])
            runs = []
            for seed in seeds:
                figures = report(
                    players=options["players"],
                    weeks=options["weeks"],
                    history_weeks=options["history_weeks"],
                    cheaters=options["cheaters"],
                    seed=seed,
                    params=audit_params(),
                    rules=rules,
                    models=options["models"],
                )
                self._print(figures)
                runs.append(figures)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if len(runs) > 1:
            self._summary(runs)
        if options["json_path"]:
            data = (
                runs[0]
                if len(runs) == 1
                else {"seeds": {str(s): f for s, f in zip(seeds, runs, strict=True)}}
            )
            Path(options["json_path"]).write_text(
                json.dumps(data, indent=2, ensure_ascii=False), encoding="utf-8"
            )
            self.stdout.write(f"written {options['json_path']}")

    def _boosters(self, boosters: dict[str, Any], indent: str = "  ") -> None:
        after, testable = f"after_{MIN_BOOSTED}", f"after_{MIN_BOOSTED}_owner_{MIN_OWNER}"
        for model, b in boosters.items():
            self.stdout.write(
                f"{indent}boosters {model}: in cases {_count(b['all'])}, flagged "
                f"{b['all']['flagged']}; with >= {MIN_BOOSTED} games after the change in cases "
                f"{_count(b[after])} (flagged {b[after]['flagged']}); and >= {MIN_OWNER} of "
                f"the owner {_count(b[testable])}"
            )

    def _summary(self, runs: list[dict[str, Any]]) -> None:
        out = self.stdout.write
        out("\n[summary per seed]")
        for figures in runs:
            injected, honest = figures["injected"], figures["honest"]
            c = injected["cases"]
            out(
                f" seed {figures['params']['seed']}: cases {c['total']} ({c['true']} true, "
                f"{c['false']} honest, honest below every true case: {c['false_below_true']}); "
                f"honest season: flags "
                + ", ".join(
                    f"{name} {d['flags']}"
                    for name, d in honest["detectors"].items()
                    if "flags" in d
                )
                + f", boosting false by model {honest['detectors']['boosting']['false_models']}, "
                f"cases {honest['cases']['total']}"
            )
            self._boosters(injected["boosters"], indent="   ")

    def _print(self, figures: dict[str, Any]) -> None:
        out = self.stdout.write
        p = figures["params"]
        out(
            f"integrity_report: {p['players']} players, {p['weeks']} weeks"
            + (f" (+ {p['history_weeks']} of history)" if p["history_weeks"] else "")
            + ", cheaters "
            f"{p['cheaters']}, seed {p['seed']}, models {p['models']}, q {p['q']} "
            f"(pair tests {p['pair_q']}), degree cap {p['max_degree']}"
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
                for model, r in g["by_model"].items():
                    out(
                        f"    {model}: cased {r['found']}/{r['eligible']} = "
                        f"{_ratio(r['recall'])} (injected {r['injected']})"
                    )
                for model, b in g.get("bound", {}).items():
                    out(
                        f"    {model}, bound (skills and model known): "
                        + ", ".join(
                            f"p <= {level} {n}/{b['eligible']}" for level, n in b["found"].items()
                        )
                    )
                for miss in g.get("near_misses", []):
                    out(
                        f"    missed {miss['model']} pair, {miss['shared_games']} shared games; "
                        "smallest q: "
                        + ", ".join(
                            f"{test} {_q(miss['q'].get(test))}"
                            for test in ("pointflow", "together", "fed", "kept")
                        )
                    )
            self._boosters(f["boosters"])
            c = f["cases"]
            out(
                f"  cases: {c['total']} ({c['true']} true, {c['false']} honest; honest below "
                f"every true case: {c['false_below_true']}); precision@k (k={c['k']}): "
                f"{c['hits_top_k']}/{c['k']} = {_ratio(c['precision_at_k'])}; scores: lowest "
                f"true {c['lowest_true_score']}, highest false {c['highest_false_score']}; "
                f"review queue {c['review_queue']} flags"
            )
            for detector in (
                "coseating",
                "pointflow",
                "boosting",
                "together",
                "fed",
                "kept",
                "softplay",
            ):
                if detector not in f["detectors"]:
                    continue
                d = f["detectors"][detector]
                models = (
                    f" (false by model: {', '.join(d['false_models'])})"
                    if d.get("false_models")
                    else ""
                )
                about = f", day ICC {d['day_icc']:.4f}" if "day_icc" in d else ""
                about += f", style τ² {d['style']:.3f}" if "style" in d else ""
                out(
                    f"  {detector}: family m={d['family_size']}{about}, flags {d['flags']}, "
                    f"false {d['false']}, realised FDP {d['fdp']:.3f}{models}"
                )
            s = f["detectors"]["sessions"]
            out(
                f"  sessions: clusters {s['clusters']}, same-table links "
                f"{s['same_table_links']}, shared addresses dropped {s['dropped_ips']}, "
                f"devices dropped {s['dropped_devices']}"
            )
