"""tiny-agent's native recovery plan (runs[].recovery.native_plan) in words, for the console."""

from __future__ import annotations

from typing import Any

from sessaudit.reporters.console.text import short_json


def describe_plan(plan: dict[str, Any]) -> str:
    """A native plan in words."""
    kind = plan.get("type")
    if kind == "appendSynthetic":
        parts = [
            f"{item.get('reason')} result for {item.get('toolName')} ({item.get('toolCallId')})"
            for item in plan.get("results", [])
        ]
        return "append " + ", ".join(parts)
    if kind == "startStep":
        return f"start model step (attempt {plan.get('attempt')}, {plan.get('stepKind')})"
    if kind == "startTool":
        verb = "re-run" if plan.get("mode") == "replay" else "start"
        return f"{verb} tool {plan.get('toolName')} with {short_json(plan.get('arguments'))}"
    if kind == "closeAttempt":
        return "close the open model attempt as aborted"
    if kind == "finish":
        detail = f"/{plan['completion']}" if "completion" in plan else ""
        error = f" ({plan['error'].get('code')})" if isinstance(plan.get("error"), dict) else ""
        return f"finish the run as {plan.get('outcome')}{detail}{error}"
    if kind == "blocked":
        return f"blocked: {plan.get('reason')} (nothing can be appended until the configuration is restored)"
    return str(kind)
