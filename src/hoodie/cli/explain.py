"""``hoodie explain``: would compaction, cleaning and archival run now, and why (not)?

One line per service, from the pure planning functions and with their reasons verbatim:
:func:`~hoodie.services.compaction.plan_compaction`,
:func:`~hoodie.services.clean_plan.plan_clean` and
:func:`~hoodie.services.archival.plan_archive`, with settings from the ``-o`` options (so
``-o hoodie.compact.inline.max.delta.commits=3`` answers "and with a threshold of 3?").
Nothing is written. Work already pending (a scheduled compaction, an unfinished clean) is
mentioned on the service's line.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

from rich.text import Text

from hoodie.cli.clean import plan_reason
from hoodie.cli.options import CommandConfig, note_unused, service_settings
from hoodie.cli.output import print_json, progress, stdout_console
from hoodie.services import (
    archive_settings,
    clean_settings,
    compaction_settings,
    pending_cleans,
    pending_compactions,
    plan_archive,
    plan_clean,
    plan_compaction,
)
from hoodie.table import HoodieTable

WOULD_RUN = "would run"
WOULD_NOT_RUN = "would not run"
DOES_NOT_APPLY = "does not apply"
STYLES = {WOULD_RUN: "green", WOULD_NOT_RUN: "yellow", DOES_NOT_APPLY: "dim"}


@dataclass(frozen=True)
class Verdict:
    service: str
    status: str  # WOULD_RUN, WOULD_NOT_RUN or DOES_NOT_APPLY
    reason: str
    pending: list[str]  # instants of this service's work already pending

    def line(self) -> str:
        text = f"{self.service}: {self.status}: {self.reason}"
        if self.pending:
            text += f" [pending: {', '.join(self.pending)}]"
        return text


def explain(table: HoodieTable, config: CommandConfig) -> list[Verdict]:
    """The three verdicts, in Hudi's order of the services: compaction, clean, archive."""
    compaction = service_settings(compaction_settings, config)
    cleaning = service_settings(clean_settings, config)
    archival = service_settings(archive_settings, config)
    verdicts = []
    with progress(f"Planning the table services of {table.name}") as display:
        task = display.add_task("services", total=3)

        decision = plan_compaction(table, compaction)
        if table.table_type != "MERGE_ON_READ":
            verdicts.append(Verdict("compaction", DOES_NOT_APPLY, decision.reason, []))
        else:
            pending = [i.timestamp for i, _ in pending_compactions(table)]
            verdicts.append(Verdict("compaction", WOULD_RUN if decision.should_run else WOULD_NOT_RUN, decision.reason, pending))
        display.advance(task)

        unfinished = [i.timestamp for i in pending_cleans(table)]
        if unfinished:
            # clean() finishes an unfinished clean before planning anything new
            verdicts.append(Verdict("clean", WOULD_RUN, f"clean {unfinished[0]} is unfinished and would be completed first", unfinished))
        else:
            plan = plan_clean(table, cleaning)
            verdicts.append(Verdict("clean", WOULD_RUN if plan.should_run else WOULD_NOT_RUN, plan_reason(plan), []))
        display.advance(task)

        archive_plan = plan_archive(table, archival)
        verdicts.append(Verdict("archive", WOULD_RUN if archive_plan.should_run else WOULD_NOT_RUN, archive_plan.reason, []))
        display.advance(task)
    return verdicts


def print_explain(table: HoodieTable, config: CommandConfig, as_json: bool) -> None:
    verdicts = explain(table, config)
    note_unused(config, "explain")
    if as_json:
        print_json([asdict(v) for v in verdicts])
        return
    console = stdout_console()
    for v in verdicts:
        line = Text(f"{v.service}: ")
        line.append(v.status, style=STYLES[v.status])
        line.append(v.line()[len(v.service) + 2 + len(v.status):])
        console.print(line, soft_wrap=True)
