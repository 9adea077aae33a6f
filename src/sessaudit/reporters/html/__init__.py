"""The HTML incident report (`verify --report html=FILE`, `--format html`): one self-contained page (no
network, no CDN: the CSS and the script are inline, seeds are data URLs) that opens from a USB stick on an
air-gapped laptop. The answer comes first: the effects of unknown outcome, then each source's verdict,
then a timeline per session (drawn by the page's own script from the timelines' JSON, `sessaudit show
--format json`, when its section is opened or scrolled to, so a corpus of thousands of runs stays usable),
the findings by severity with their rules' texts, the seeds, the usage ledger (a chart of tokens per model
and day, and a table), and what decided the audit (the settings, each file's bytes and sha256).

Every string from a log is untrusted: the template is rendered by Jinja2 with autoescaping, the timelines
travel as JSON in a `<script type="application/json">` (Jinja's `tojson` escapes `<`, `>`, `&` and `'`),
the script writes text with `textContent` only, and the page's Content-Security-Policy allows no request
and only the page's own script and style (by their sha256), so a `<script>` or an `onerror=` from a log
could not run even if it reached the markup."""

from __future__ import annotations

import base64
import hashlib
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib.resources import files
from typing import Any, Final

from sessaudit.model import Finding, PendingEffect, Report, Run, Source
from sessaudit.outputsafety import safe
from sessaudit.reporters.console.sections import open_runs, owned_findings
from sessaudit.reporters.console.words import describe_recovery, location, outcome_unknown
from sessaudit.rules import find_rule

ARGUMENTS_LIMIT: Final = 4000  # characters of an effect's arguments shown in its row
SEVERITIES: Final = ("error", "warning", "note")
CHART_WIDTH: Final = 900
CHART_BAR_HEIGHT: Final = 22


@dataclass(frozen=True, slots=True)
class SeedFile:
    """A seed the page offers for download: the file name `--seeds-dir` would give it, and its text."""

    source: str
    run_id: str
    name: str
    text: str


def render_html(
    report: Report,
    timelines: Mapping[str, Any],
    *,
    seeds: Sequence[SeedFile] = (),
    exit_status: int | None = None,
    generated_at: datetime | None = None,
) -> str:
    """The page for `report`; `timelines`: sessaudit.timeline.timelines_json of the same audit."""
    import jinja2
    import markupsafe

    here = files(__package__)
    style = here.joinpath("report.css").read_text(encoding="utf-8")
    script = here.joinpath("report.js").read_text(encoding="utf-8")
    environment = jinja2.Environment(
        autoescape=True,
        # every value shown: control characters and bidi overrides written as escapes (`safe`), so a log
        # cannot reorder what a person reads ("Trojan Source") or hide text; the page's own markup is Markup
        finalize=lambda value: (
            value if isinstance(value, markupsafe.Markup) or not isinstance(value, str) else shown(value)
        ),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    # the timelines' JSON without spaces (tojson still escapes <, >, & and ' for the script element)
    environment.policies["json.dumps_kwargs"] = {"sort_keys": False, "separators": (",", ":")}
    template = environment.from_string(here.joinpath("report.html.j2").read_text(encoding="utf-8"))
    moment = (generated_at or datetime.now(UTC)).astimezone(UTC)
    return template.render(
        page=_page(report, timelines, seeds, exit_status),
        generated_at=moment.strftime("%Y-%m-%d %H:%M:%S UTC"),
        timelines=compact(timelines),
        style=style,
        script=script,
        policy=_policy(style, script),
    )


def shown(text: str) -> str:
    """`safe` for a page: every control character and bidi override escaped, but line feeds and tabs,
    which a page shows as the layout they are (in `<pre>`) or as a space."""
    return "\n".join("\t".join(safe(part) for part in line.split("\t")) for line in text.split("\n"))


_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_MILLISECOND: Final = timedelta(milliseconds=1)
KINDS: Final = ("user", "model-request", "model", "compaction", "abort", "resume", "tool", "finding", "end")
DETAIL_KEPT: Final = 300  # characters of a settled call's arguments the page keeps (an open call's: all)
KEPT_NEAR_END: Final = 8  # the events before a log's end whose calls keep their arguments


def compact(timelines: Mapping[str, Any]) -> dict[str, Any]:
    """The timelines as the page carries them (report.js `decode` reads them back), a few MB for a
    10,000-run corpus. Shared tables: `strings`, and `labels` (each event's label, kind, status and rule,
    as indices). Per session, one array per event field: `t` milliseconds since the event before, `e` the
    label's index, `ln`/`b`/`s` line, byte offset and seq each as the difference from the one before (None
    stays None), `r` the runs' indices as [index (-1: none), events] runs of equal ones, `u` each tool
    call's duration in ms (0: none), in order; runs' times as ms since `t0`; the open calls `x`,
    and sparse `d` (details: whole for open calls and findings, DETAIL_KEPT characters for failed calls and
    the last KEPT_NEAR_END events before the log ends, none for the other settled calls) and `rw` (rowids)."""
    strings: dict[str, int] = {}
    labels: dict[tuple[int, int, int, int], int] = {}

    def ref(text: str | None) -> int:
        return -1 if text is None else strings.setdefault(text, len(strings))

    # every string the page's script shows is `shown` here (it writes them as text, as they come)

    sessions = []
    for session in timelines.get("sessions", []):
        runs = session["runs"]
        events = session["events"]
        index = {run["run_id"]: number for number, run in enumerate(runs)}
        times: list[int | None] = []
        entries: list[int] = []
        owners: list[list[int]] = []
        durations: list[int] = []
        details: dict[str, str] = {}
        rowids: dict[str, int] = {}
        unknown = []
        previous = None
        for number, item in enumerate(events):
            at = _ms(item["at"])
            times.append(None if at is None else at - (previous if previous is not None else at))
            previous = at if at is not None else previous
            key = (ref(item["label"]), KINDS.index(item["kind"]), ref(item["status"]), ref(item["rule"]))
            entries.append(labels.setdefault(key, len(labels)))
            owner = index.get(item["run_id"], -1)
            if owners and owners[-1][0] == owner:
                owners[-1][1] += 1
            else:
                owners.append([owner, 1])
            if item["kind"] == "tool":
                until = _ms(item["until"])
                durations.append(0 if until is None or at is None else until - at)
            if item["unknown"]:
                unknown.append(number)
            if item["rowid"] is not None:
                rowids[str(number)] = item["rowid"]
            detail = item["detail"]
            if detail is None:
                continue
            if not (item["unknown"] or item["kind"] != "tool"):
                if item["status"] != "failed" and number < len(events) - KEPT_NEAR_END:
                    continue
                detail = detail if len(detail) <= DETAIL_KEPT else detail[:DETAIL_KEPT] + "…"
            details[str(number)] = shown(detail)
        start = next((_ms(item["at"]) for item in events if item["at"] is not None), None)
        sessions.append(
            {
                "t0": start,
                "runs": [
                    [
                        shown(run["run_id"]),
                        ref(run["kind"]),
                        ref(run["state"]),
                        ref(run["condition"]),
                        _since(run["started_at"], start),
                        _since(run["last_at"], start),
                        run["first_seq"],
                        run["last_seq"],
                        run["pending_effects"],
                    ]
                    for run in runs
                ],
                "t": times,
                "e": entries,
                "ln": _differences(item["line"] for item in events),
                "b": _differences(item["byte_offset"] for item in events),
                "s": _differences(item["seq"] for item in events),
                "r": owners,
                "u": durations,
                "x": unknown,
                "d": details,
                "rw": rowids,
            }
        )
    return {
        "kinds": list(KINDS),
        "strings": [shown(text) for text in strings],
        "labels": [list(key) for key in labels],
        "sessions": sessions,
    }


def _since(text: str | None, start: int | None) -> int | None:
    """A time as milliseconds since the session's first event (its `t0`)."""
    moment = _ms(text)
    return None if moment is None or start is None else moment - start


def _differences(values: Iterable[int | None]) -> list[int | None]:
    """Each value less the last one that was not None (the first less 0); None stays None."""
    found: list[int | None] = []
    last = 0
    for value in values:
        if value is None:
            found.append(None)
        else:
            found.append(value - last)
            last = value
    return found


def _ms(text: str | None) -> int | None:
    """An ISO time of the timelines (UTC, milliseconds) as epoch milliseconds."""
    if text is None:
        return None
    return (datetime.fromisoformat(text) - _EPOCH) // _MILLISECOND


def _policy(style: str, script: str) -> str:
    """No request at all; only this page's own style and script run (by hash); images only as data."""

    def digest(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"

    return (
        f"default-src 'none'; style-src {digest(style)}; script-src {digest(script)}; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )


def _page(
    report: Report, timelines: Mapping[str, Any], seeds: Sequence[SeedFile], exit_status: int | None
) -> dict[str, Any]:
    runs = open_runs(report)
    unknown = _unknown_effects(runs)
    owned = owned_findings(report)
    links = [_seed_link(item, number) for number, item in enumerate(seeds)]
    # each seed's data once, in the seeds section; the rows that name it link there
    seed_links = {(item.source, item.run_id): link for item, link in zip(seeds, links, strict=True)}
    return {
        "version": report.tool.version,
        "exit_status": exit_status,
        "headline": _headline(report, len(runs), unknown),
        "verdicts": report.summary.verdicts,
        "unknown": [{**row, "seed": seed_links.get((row["source"], row["run"]))} for row in unknown],
        "open_runs": [
            {
                "source": source.path,
                "run": run.run_id,
                "kind": run.kind,
                "condition": run.recovery.condition if run.recovery is not None else None,
                "last_written_at": run.last_written_at,
                "words": describe_recovery(run, effects=False, source_format=source.format),
                "seed": seed_links.get((source.path, run.run_id)),
            }
            for source, run in runs
        ],
        "sources": [_source(source, owned[source.path]) for source in report.sources],
        "skipped": [{"path": item.path, "reason": item.reason} for item in report.skipped],
        "findings": _findings(report.findings),
        "seeds": links,
        "usage": _usage(timelines),
        "settings": report.settings.model_dump(mode="json"),
        "baseline": report.baseline.model_dump(mode="json", exclude={"matched"}) if report.baseline else None,
        "sessions": [
            {
                "index": index,
                "source": item["source"],
                "session_id": item["session_id"],
                "format": item["format"],
                "verdict": item["verdict"],
                "events": len(item["events"]),
                "open": any(run["state"] == "open" for run in item["runs"]),
                "started_at": item["started_at"],
                "ended_at": item["ended_at"],
                "note": item["note"],
            }
            for index, item in enumerate(timelines.get("sessions", []))
        ],
    }


def _headline(report: Report, runs: int, unknown: list[dict[str, Any]]) -> str:
    sources = len(report.sources)
    if unknown:
        sessions = len({(row["source"], row["session"]) for row in unknown})
        return (
            f"{len(unknown)} effect(s) of unknown outcome in {sessions} session(s): each may or may not have "
            "happened. Check them in the world before anything is re-run."
        )
    if runs:
        return f"No effect of unknown outcome; {runs} run(s) left open in {sources} source(s)."
    if not sources:
        return "No session log was found."
    clean = report.summary.verdicts.get("clean", 0)
    if clean == sources:
        return f"All {sources} source(s) verified clean; no run is left open."
    return f"No run is left open; {sources - clean} of {sources} source(s) are not clean (see the verdicts)."


def _unknown_effects(runs: Sequence[tuple[Source, Run]]) -> list[dict[str, Any]]:
    rows = []
    for source, run in runs:
        if run.recovery is None:
            continue
        session = _session_of(source, run)
        for effect in run.recovery.pending_effects:
            if outcome_unknown(effect):
                rows.append(
                    {
                        "tool": effect.tool_name,
                        "call": effect.tool_call_id,
                        "arguments": _arguments(effect),
                        "source": source.path,
                        "format": source.format,
                        "session": session,
                        "run": run.run_id,
                        "kind": run.kind,
                        "condition": run.recovery.condition,
                        "last_written_at": run.last_written_at,
                        "intent": effect.intent_id,
                        "check": _what_to_check(effect),
                    }
                )
    return rows


def _session_of(source: Source, run: Run) -> str | None:
    for session in source.sessions:
        if any(item.run_id == run.run_id for item in session.runs):
            return session.session_id
    return None


def _arguments(effect: PendingEffect) -> str:
    import json

    if effect.arguments is None:
        return "(arguments not recorded)"
    text = json.dumps(effect.arguments, indent=2, ensure_ascii=False, sort_keys=False)
    return text if len(text) <= ARGUMENTS_LIMIT else text[: ARGUMENTS_LIMIT - 1] + "…"


def _what_to_check(effect: PendingEffect) -> str:
    key = f" (its replay key: {effect.replay_key})" if effect.replay_key else ""
    return (
        f"Did {effect.tool_name} run? Its start is recorded, its result is not. Look at what it would "
        f"have changed (files, a remote system, messages sent) before anything is re-run{key}."
    )


def _source(source: Source, findings: list[Finding]) -> dict[str, Any]:
    counts: defaultdict[str, int] = defaultdict(int)
    for item in findings:
        counts[item.severity.value] += 1
    return {
        "path": source.path,
        "format": source.format,
        "version": source.format_version,
        "verdict": source.verdict.value,
        "sessions": len(source.sessions),
        "open_runs": sum(1 for session in source.sessions for run in session.runs if run.state == "open"),
        "findings": dict(counts),
        "files": [{"path": item.path, "bytes": item.bytes, "sha256": item.sha256} for item in source.files],
        "bytes": sum(item.bytes for item in source.files),
        "sha256": source.sha256,
        "unchanged": source.evidence_unchanged,
    }


def _findings(findings: Sequence[Finding]) -> list[dict[str, Any]]:
    """By severity, most severe first; each rule's text once per group."""
    groups = []
    for severity in SEVERITIES:
        chosen = [item for item in findings if item.severity.value == severity]
        if not chosen:
            continue
        rules: dict[str, dict[str, str]] = {}
        for item in chosen:
            rule = find_rule(item.rule)
            if item.rule not in rules:
                rules[item.rule] = {
                    "code": item.rule,
                    "name": item.name,
                    "summary": rule.summary if rule is not None else "",
                    "doc": rule.doc if rule is not None else "",
                    "fix": rule.fix if rule is not None else "",
                }
        groups.append(
            {
                "severity": severity,
                "count": len(chosen),
                "rules": list(rules.values()),
                "entries": [
                    {
                        "rule": item.rule,
                        "name": item.name,
                        "message": item.message,
                        "path": item.location.path,
                        "place": location(item),
                    }
                    for item in chosen
                ],
            }
        )
    return groups


def _seed_link(item: SeedFile, number: int) -> dict[str, str]:
    encoded = base64.b64encode(item.text.encode("utf-8")).decode("ascii")
    return {
        "name": item.name,
        "href": f"data:application/json;base64,{encoded}",
        "anchor": f"seed-{number}",
        "run": item.run_id,
        "source": item.source,
        "bytes": f"{len(item.text.encode('utf-8')):,}",
    }


def _usage(timelines: Mapping[str, Any]) -> dict[str, Any]:
    """Tokens per model and day (UTC): the table's rows and the chart's bars."""
    totals: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
    for session in timelines.get("sessions", []):
        for point in session.get("usage", []):
            day = point["at"][:10] if point["at"] else "(no time)"
            sums = totals[(day, point["model"] or "(model not recorded)")]
            sums[0] += point["input_total"]
            sums[1] += point["output"]
            sums[2] += point["cache_read"]
            sums[3] += point["cache_write"]
            sums[4] += 1
    rows: list[dict[str, Any]] = [
        {
            "day": day,
            "model": model,
            "input_total": values[0],
            "output": values[1],
            "cache_read": values[2],
            "cache_write": values[3],
            "answers": values[4],
            "tokens": values[0] + values[1],
        }
        for (day, model), values in sorted(totals.items())
    ]
    models = sorted({row["model"] for row in rows})
    largest = max((row["tokens"] for row in rows), default=0)
    bars = []
    for index, row in enumerate(rows):
        width = 0 if not largest else max(1, round(row["tokens"] / largest * (CHART_WIDTH - 460)))
        bars.append(
            {
                **row,
                "y": index * CHART_BAR_HEIGHT,
                "width": width,
                "colour": models.index(row["model"]) % 8,
            }
        )
    return {
        "rows": rows,
        "bars": bars,
        "models": models,
        "height": len(rows) * CHART_BAR_HEIGHT,
        "width": CHART_WIDTH,
        "bar_height": CHART_BAR_HEIGHT - 6,
    }
