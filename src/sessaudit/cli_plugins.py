"""The command-line options format plugins declare (FormatPlugin.options): added to the commands that take
them, their values parsed by the plugin into VerifyOptions extras, or (a takeover flag) the whole command
handed to the plugin."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperCommand

from sessaudit.plugin import OptionError, PluginOption
from sessaudit.registry import registry

# the plugin options given to the running command, with their values
_GIVEN: ContextVar[tuple[tuple[PluginOption, Any], ...]] = ContextVar("plugin_options", default=())


class PluginCommand(TyperCommand):
    """A command that also takes the options the installed format plugins declare for it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        declared = [option for _, option in registry().options(self.name or "")]
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


def _parameters(declared: list[PluginOption]) -> list[Any]:
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
    """The VerifyOptions extras of the plugin options given (each parsed by its plugin); an unusable
    value is `fail`ed with the option's name (a usage error)."""
    extras: dict[str, Any] = {}
    for option, value in _GIVEN.get():
        if option.parse is None or value is None or value is False:
            continue
        try:
            extras.update(option.parse(value))
        except OptionError as error:
            fail(f"{option.flag}: {error}")
    return extras


def plugin_takeover() -> PluginOption | None:
    """The takeover flag given (e.g. `seed --native`), if any: the plugin answers instead of sessaudit."""
    return next((option for option, value in _GIVEN.get() if option.takeover is not None and value), None)
