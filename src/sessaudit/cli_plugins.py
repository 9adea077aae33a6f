"""The command-line options format plugins declare (FormatPlugin.options): added to the commands that take
them, their values parsed by the plugins into VerifyOptions extras, or (a takeover flag) the whole command
handed to the plugin whose source the named path is.

Several formats may declare one flag (`--current`, `seed --native`; the registry has checked that their
declarations agree on its shape): the command gets one option, whose help is theirs joined. Its value is
handed to every declaring plugin's `parse` and the extras merged (each plugin writes its own keys); it is a
usage error only when every one of them refuses it, and then each one's reason is named. A takeover is
answered by the declaring format that the named path is a source of, as discovery recognises it."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
import typer.main
from typer.core import TyperCommand

from sessaudit.discovery import discover
from sessaudit.plugin import FormatPlugin, OptionError, PluginOption
from sessaudit.registry import registry


@dataclass(frozen=True, slots=True)
class SharedOption:
    """One option of a command and the formats that declare it for that command (registry order)."""

    command: str
    flag: str
    declarations: tuple[tuple[FormatPlugin, PluginOption], ...]

    @property
    def first(self) -> PluginOption:
        return self.declarations[0][1]

    @property
    def is_flag(self) -> bool:
        return self.first.is_flag

    @property
    def dest(self) -> str:
        return self.first.dest

    @property
    def takeover(self) -> bool:
        return self.first.takeover is not None

    @property
    def help(self) -> str:
        """One declaration's help as it is; several, each after its format's title (a text they share,
        once)."""
        texts = [option.help for _, option in self.declarations]
        if len(set(texts)) == 1:
            return texts[0]
        return " ".join(
            f"{plugin.title or plugin.name}: {_lowered(item.help)}" for plugin, item in self.declarations
        )

    def formats(self) -> str:
        return ", ".join(plugin.name for plugin, _ in self.declarations)


def _lowered(text: str) -> str:
    """A sentence continued after a colon: "The current..." -> "the current..." (not "SQLite", "MCP")."""
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def shared_options(command: str) -> list[SharedOption]:
    """The plugin options a command takes, one per flag, in the order of their first declarations."""
    grouped: dict[str, list[tuple[FormatPlugin, PluginOption]]] = {}
    for plugin, option in registry().options(command):
        grouped.setdefault(option.flag, []).append((plugin, option))
    return [SharedOption(command, flag, tuple(declarations)) for flag, declarations in grouped.items()]


# the plugin options given to the running command, with their values
_GIVEN: ContextVar[tuple[tuple[SharedOption, Any], ...]] = ContextVar("plugin_options", default=())


class PluginCommand(TyperCommand):
    """A command that also takes the options the installed format plugins declare for it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        declared = shared_options(self.name or "")
        self.params.extend(_parameters(declared))
        original = self.callback
        assert original is not None

        def callback(**values: Any) -> Any:
            given = tuple((option, values.pop(option.dest, None)) for option in declared)
            token = _GIVEN.set(given)
            try:
                return original(**values)
            finally:
                _GIVEN.reset(token)

        self.callback = callback


def _parameters(declared: list[SharedOption]) -> list[Any]:
    """The options as typer itself makes them (its help panels and value handling), from a function with
    one parameter per option, built for the purpose."""
    if not declared:
        return []
    parameters = []
    for option in declared:
        kind: Any = bool if option.is_flag else Path | None
        annotation = Annotated[kind, typer.Option(option.flag, help=option.help)]
        default = False if option.is_flag else None
        keyword = inspect.Parameter.KEYWORD_ONLY
        parameters.append(inspect.Parameter(option.dest, keyword, default=default, annotation=annotation))

    def declared_options(**_: Any) -> None:
        """The plugin options."""

    declared_options.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    declared_options.__annotations__ = {item.name: item.annotation for item in parameters}
    holder = typer.Typer(add_completion=False)
    holder.command()(declared_options)
    made: list[Any] = typer.main.get_command(holder).params
    return made


def plugin_extras(fail: Callable[[str], Any]) -> dict[str, Any]:
    """The VerifyOptions extras of the plugin options given, each value parsed by every plugin that
    declares its option; a value all of them refuse is `fail`ed with the option's name and each one's
    reason (a usage error). One that some accept and others refuse is the accepting ones' kind of file:
    the refusals are not shown."""
    extras: dict[str, Any] = {}
    given = {option.flag for option, value in _GIVEN.get() if value is not None and value is not False}
    for option, value in _GIVEN.get():
        if option.takeover or value is None or value is False:
            continue
        needed = sorted(
            {item.needs for _, item in option.declarations if item.needs and item.needs not in given}
        )
        if needed:
            fail(f"{option.flag} is used only with {' and '.join(needed)}")
        parsers = [(plugin, item) for plugin, item in option.declarations if item.parse is not None]
        refusals: list[str] = []
        for plugin, item in parsers:
            assert item.parse is not None
            try:
                extras.update(item.parse(value))
            except OptionError as error:
                refusals.append(_refusal(plugin, item, error, alone=len(parsers) == 1))
        if parsers and len(refusals) == len(parsers):
            fail(f"{option.flag}: {'; '.join(refusals)}")
    return extras


def _refusal(plugin: FormatPlugin, option: PluginOption, error: OptionError, *, alone: bool) -> str:
    """A plugin's reason for refusing a value: its own words when it is the only one asked, else after
    what it takes ("not a tool table: ...")."""
    if alone:
        return str(error)
    said = f"not {option.refusal}" if option.refusal else plugin.title or plugin.name
    return f"{said}: {error}"


def plugin_takeover() -> str | None:
    """The takeover flag given (e.g. `seed --native`), if any: a plugin answers instead of sessaudit."""
    return next((option.flag for option, value in _GIVEN.get() if option.takeover and value), None)


def take_over(
    flag: str, path: str, run: str | None, sequence: int | None, fail: Callable[[str], NoReturn]
) -> int:
    """Hand the command to the takeover of the declaring format whose source `path` is (as discovery
    recognises it), with the extras of the other plugin options given; its exit status. A path that is
    no source of a declaring format, or holds sources of several, is `fail`ed (a usage error), and so is
    the plugin's own OptionError. When only one format declares the flag it answers for every path (its
    own refusal says more than the core could)."""
    option = next(item for item, _ in _GIVEN.get() if item.flag == flag)
    _, declared = _answering(option, path, fail)
    extras = plugin_extras(fail)
    assert declared.takeover is not None
    try:
        return declared.takeover(path, run, sequence, extras)
    except OptionError as error:
        fail(f"{flag}: {error}")


def _answering(
    option: SharedOption, path: str, fail: Callable[[str], NoReturn]
) -> tuple[FormatPlugin, PluginOption]:
    """The declaration whose format owns the sources under `path`."""
    if len(option.declarations) == 1:
        return option.declarations[0]
    candidates = discover([path]).candidates
    found = [item.format for item in candidates if item.problem is None and item.format is not None]
    declaring = {plugin.name: (plugin, declared) for plugin, declared in option.declarations}
    owners = [name for name in declaring if name in found]  # in registry order
    if len(owners) == 1:
        return declaring[owners[0]]
    takes = f"{option.command} {option.flag}"
    if owners:
        fail(
            f"{option.flag}: {path} holds sources of several formats that take {takes} "
            f"({', '.join(owners)}): name one source"
        )
    problems = [item.detail for item in candidates if item.problem is not None and item.detail]
    others = sorted(set(found))
    said = f": {problems[0]}" if problems and not others else ""
    held = f"; it holds {', '.join(others)} sources" if others else ""
    formats = option.formats()
    fail(f"{option.flag}: {path} is no source of a format that takes {takes} ({formats}){said}{held}")
