"""The installed formats: plugin objects found through the `sessaudit.formats` entry points (the built-in
formats are registered exactly so, in pyproject.toml), plus any registered by `register()`.

A plugin that cannot be loaded (an import error, not a FormatPlugin, a name or rule code another format
already has) is set aside as broken, with the reason, and never takes the other formats down; the audit
says so and is incomplete (exit 3), since files of its format can no longer be recognised."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Final

from sessaudit.plugin import FormatPlugin, PluginOption
from sessaudit.rulebase import Rule

GROUP: Final = "sessaudit.formats"
RULE_CODE: Final = re.compile(r"SA\d{3}")
NAME: Final = re.compile(r"[a-z][a-z0-9-]*")


@dataclass(frozen=True, slots=True)
class BrokenPlugin:
    """A plugin that was set aside: its entry point (name = module:object) and why."""

    name: str
    target: str
    reason: str


@dataclass(frozen=True, slots=True)
class Registry:
    """The usable plugins, in catalogue order (by their first rule code), and the broken ones."""

    plugins: tuple[FormatPlugin, ...]
    broken: tuple[BrokenPlugin, ...]
    builtin: frozenset[str] = frozenset()  # the names of sessaudit's own formats among `plugins`

    def owner(self, code: str) -> FormatPlugin | None:
        """The format whose rule table holds this code (None: a core rule, or unknown)."""
        return next(
            (plugin for plugin in self.plugins if code in {rule.code for rule in _rules_of(plugin)}), None
        )

    def get(self, name: str | None) -> FormatPlugin | None:
        return next((plugin for plugin in self.plugins if plugin.name == name), None)

    def names(self) -> tuple[str, ...]:
        return tuple(plugin.name for plugin in self.plugins)

    def options(self, command: str) -> list[tuple[FormatPlugin, PluginOption]]:
        """The plugin options a sessaudit command takes, in plugin order (a flag several formats declare
        once per format: `sessaudit.cli_plugins` makes them one option)."""
        return [
            (plugin, option)
            for plugin in self.plugins
            for option in plugin.options
            if command in option.commands
        ]


_registered: list[tuple[FormatPlugin, str]] = []
_current: Registry | None = None


def registry() -> Registry:
    """The registry, loaded once per process (entry points first, then `register()`ed plugins)."""
    global _current
    if _current is None:
        _current = _load()
    return _current


def register(plugin: FormatPlugin, *, origin: str = "register()") -> None:
    """Add a plugin that is not installed as a distribution (an embedding program, a test). It is
    validated like an entry point's, and set aside as broken if it fails; call before the audit."""
    _registered.append((plugin, origin))
    _reset()


def unregister(name: str) -> None:
    """Remove the `register()`ed plugins of this name (entry points stay)."""
    _registered[:] = [(plugin, origin) for plugin, origin in _registered if plugin.name != name]
    _reset()


@contextmanager
def registered(plugin: FormatPlugin) -> Iterator[FormatPlugin]:
    """`register(plugin)` for the duration of a `with` block."""
    register(plugin)
    try:
        yield plugin
    finally:
        unregister(plugin.name)


def ask(plugin: FormatPlugin, hook: str, *arguments: Any) -> Any:
    """Call one of a plugin's hooks (recognising, `conclude`). A third-party plugin whose hook raises
    (anything but the OSError a recogniser may raise by contract) is set aside as broken from then on, and
    the answer is None: a broken plugin never takes the other formats down. sessaudit's own formats are
    called plainly. (`verify_*` is guarded by the engine per source instead.)"""
    method = getattr(plugin, hook)
    if plugin.name in registry().builtin:
        return method(*arguments)
    try:
        return method(*arguments)
    except OSError:
        raise
    except Exception as error:
        set_aside(plugin, f"its {hook}() raised {said(error)}")
        return None


def set_aside(plugin: FormatPlugin, reason: str) -> None:
    """Take a plugin out of the registry for the rest of this process, as broken, with the reason."""
    global _current
    installed = registry()
    if installed.get(plugin.name) is not plugin:
        return
    broken = BrokenPlugin(plugin.name, type(plugin).__module__ + ":" + type(plugin).__name__, reason)
    kept = tuple(item for item in installed.plugins if item is not plugin)
    _current = Registry(kept, (*installed.broken, broken), installed.builtin)
    from sessaudit import rules

    rules.reset_catalogue()


def reload() -> None:
    """Forget the loaded plugins: the next use looks at the entry points again (after a distribution was
    installed in this process, e.g. by a test)."""
    _reset()


def _reset() -> None:
    global _current
    _current = None
    from sessaudit import rules  # the catalogue is built from the registry: rebuilt on next use

    rules.reset_catalogue()


def _load() -> Registry:
    from sessaudit.rules import CORE_CODES

    found: list[tuple[FormatPlugin, str, str]] = []
    broken: list[BrokenPlugin] = []
    own: set[int] = set()  # id() of the objects sessaudit's own entry points gave
    # a distribution's metadata is read once (an email parse each time), not once per entry point
    distributions: dict[int, bool] = {}

    def ours(point: EntryPoint) -> bool:
        key = id(getattr(point, "dist", None))
        if key not in distributions:
            distributions[key] = is_builtin(point)
        return distributions[key]

    points = [(ours(point), point) for point in entry_points(group=GROUP)]
    # sessaudit's own formats first: a third-party plugin that claims their names or rule codes is the one
    # set aside, whatever it is called
    for own_point, point in sorted(points, key=_builtin_first):
        try:
            loaded = point.load()
        except Exception as error:  # a third-party plugin may fail any way at all
            broken.append(BrokenPlugin(point.name, point.value, f"cannot be loaded: {said(error)}"))
            continue
        found.append((loaded, point.name, point.value))
        if own_point:
            own.add(id(loaded))
    found.extend(
        (plugin, plugin.name if isinstance(plugin, FormatPlugin) else "?", origin)
        for plugin, origin in _registered
    )
    plugins: list[FormatPlugin] = []
    builtin: set[str] = set()
    codes: set[str] = set(CORE_CODES)
    for plugin, name, target in found:
        reason = _problem(plugin, plugins, codes, CORE_CODES)
        if reason is not None:
            broken.append(BrokenPlugin(name, target, reason))
            continue
        assert isinstance(plugin, FormatPlugin)
        plugins.append(plugin)
        if id(plugin) in own:
            builtin.add(plugin.name)
        codes.update(rule.code for rule in _rules_of(plugin))
    plugins.sort(key=lambda plugin: (first_code(plugin), plugin.name))
    return Registry(tuple(plugins), tuple(broken), frozenset(builtin))


def _builtin_first(item: tuple[bool, EntryPoint]) -> tuple[bool, str, str]:
    builtin, point = item
    return (not builtin, point.name, point.value)


def is_builtin(point: EntryPoint) -> bool:
    """An entry point of the sessaudit distribution itself (one of its built-in formats)."""
    dist = getattr(point, "dist", None)
    return dist is not None and (dist.metadata["Name"] or "").lower() == "sessaudit"


def _problem(
    plugin: object, accepted: list[FormatPlugin], codes: set[str], core: frozenset[str]
) -> str | None:
    """Why this object cannot be a format plugin next to `accepted` (rule codes `codes` taken), or None."""
    if not isinstance(plugin, FormatPlugin):
        return f"is {type(plugin).__name__}, not a sessaudit.plugin.FormatPlugin"
    if not isinstance(plugin.name, str) or NAME.fullmatch(plugin.name) is None:
        return f"has no usable name ({plugin.name!r}: lower-case letters, digits and '-')"
    if any(other.name == plugin.name for other in accepted):
        return f"names a format already installed ({plugin.name})"
    if plugin.reads not in ("file", "path"):
        return f"reads {plugin.reads!r} (expected 'file' or 'path')"
    try:
        rules = _rules_of(plugin)
    except Exception as error:
        return f"its rule catalogue cannot be loaded: {said(error)}"
    own = [rule.code for rule in rules]
    bad = [code for code in own if RULE_CODE.fullmatch(code) is None]
    if bad:
        return f"has rule codes that are not SAnnn: {', '.join(bad)}"
    taken = sorted((set(own) & codes) | {code for code in own if own.count(code) > 1})
    if taken:
        return f"has rule codes another format or the core already has: {', '.join(taken)}"
    unknown = sorted(set(plugin.shared_rules) - core)
    if unknown:
        return f"shares rules the core does not have: {', '.join(unknown)}"
    taken_extras = sorted({name for other in accepted for name in other.extras} & set(plugin.extras))
    if taken_extras:
        return f"reads VerifyOptions extras another format already has: {', '.join(taken_extras)}"
    flags = [option.flag for option in plugin.options]
    twice = sorted({flag for flag in flags if flags.count(flag) > 1})
    if twice:
        return f"declares an option twice: {', '.join(twice)}"
    for option in plugin.options:
        for other in accepted:
            for theirs in (item for item in other.options if item.flag == option.flag):
                disagreement = _disagreement(option, theirs, other.name)
                if disagreement is not None:
                    return disagreement
    return None


def _disagreement(mine: PluginOption, theirs: PluginOption, other: str) -> str | None:
    """Why a flag another format declares too cannot be one option for both, or None: several formats
    may declare a flag (each parses the value) when the declarations agree on its shape."""

    def shape(option: PluginOption) -> str:
        return "as a flag" if option.is_flag else f"with a value {option.metavar}"

    if shape(mine) != shape(theirs):
        return f"declares {mine.flag} {shape(mine)}, but {other} declares it {shape(theirs)}"
    both = [command for command in mine.commands if command in theirs.commands]
    if both and (mine.takeover is None) != (theirs.takeover is None):

        def role(option: PluginOption) -> str:
            return "as a takeover" if option.takeover is not None else "as an option (not a takeover)"

        return f"declares {mine.flag} on {both[0]} {role(mine)}, but {other} declares it {role(theirs)}"
    return None


def _rules_of(plugin: FormatPlugin) -> list[Rule]:
    return [rule for table in plugin.rule_tables() for rule in table]


def first_code(plugin: FormatPlugin) -> str:
    """The plugin's lowest rule code: formats are listed in rule-code order."""
    return min((rule.code for rule in _rules_of(plugin)), default="SA~")


def code_range(plugin: FormatPlugin) -> str:
    """`SA501–SA546`, or "-" for a format without rules of its own."""
    codes = sorted(rule.code for rule in _rules_of(plugin))
    return f"{codes[0]}–{codes[-1]}" if codes else "-"


def said(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__
