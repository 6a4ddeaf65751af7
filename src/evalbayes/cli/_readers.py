"""The readers' options as command-line flags, generated from :func:`evalbayes.io.reader_options`.

Every option a format declares (``docs/io.md``, "reader protocol") becomes one flag: the name
with dashes (``task_prefix`` -> ``--task-prefix``), its help text (with the formats that take
it when not all do), its choices and its ``convert`` for the string given. A boolean option is
``--flag`` / ``--no-flag``; a list option takes several values. A new reader option appears
here without a CLI edit. Only ``system`` has a command-line syntax of its own: one NAME, or
OLD=NEW renames (repeatable), which become the ``system=`` string or mapping.

Building the flags imports the reader modules (pandas and xarray, never PyMC); it happens only
for the commands that read data.
"""

from __future__ import annotations

import argparse
import functools
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

__all__ = ["add_reader_args", "flag", "reader_flags", "reader_options", "reader_specs"]


@dataclass(frozen=True)
class FlagSpec:
    """One reader option merged over the formats that take it."""

    spec: Any  # evalbayes.io._protocol.OptionSpec with the union of the formats' choices
    formats: tuple[str, ...]
    everywhere: bool


def flag(name: str) -> str:
    """The flag of an option name: ``task_prefix`` -> ``--task-prefix``."""
    return "--" + name.replace("_", "-")


@functools.cache
def reader_specs() -> dict[str, FlagSpec]:
    """Every reader option of every format, in order of first appearance."""
    from evalbayes.io import reader_options as io_reader_options

    per_format: dict[str, list[Any]] = io_reader_options()
    merged: dict[str, tuple[Any, list[str]]] = {}
    for fmt, specs in per_format.items():
        for spec in specs:
            if spec.name not in merged:
                merged[spec.name] = (spec, [fmt])
                continue
            first, formats = merged[spec.name]
            formats.append(fmt)
            if first.choices is not None and spec.choices is not None:
                union = tuple(dict.fromkeys((*first.choices, *spec.choices)))
                merged[spec.name] = (replace(first, choices=union), formats)
            elif spec.choices is None:
                merged[spec.name] = (replace(first, choices=None), formats)
    return {
        name: FlagSpec(spec, tuple(formats), len(formats) == len(per_format))
        for name, (spec, formats) in merged.items()
    }


def reader_flags() -> dict[str, str]:
    """Option name -> its flag, for every reader option (messages name the flag).

    A command whose own flag takes the name offers the option as ``--reader-<name>``.
    """
    return {name: flag(name) for name in reader_specs()}


def _argtype(spec: Any) -> Callable[[str], Any]:
    def convert(text: str) -> Any:
        try:
            return spec.convert(text)
        except ValueError as err:
            # argparse names the flag itself ("argument --threshold: ...")
            raise argparse.ArgumentTypeError(str(err).removeprefix(f"--{spec.name}: ")
                                             ) from None

    convert.__name__ = spec.name
    return convert


def add_reader_args(parser: argparse.ArgumentParser) -> None:
    """One flag per reader option, in a group "reader options".

    Call it after the command's own arguments (``evalbayes.cli.build_parser`` does): a
    reader option whose flag the command already uses (e.g. ``--metric``) is offered as
    ``--reader-<name>`` instead. The values land in ``args.reader_<name>``.
    """
    group = parser.add_argument_group(
        "reader options (passed to the log/table reader; [formats] that take each one)"
    )
    for name in reader_specs():
        try:
            _add_one(group, name, flag(name))
        except argparse.ArgumentError:  # the command has this flag: a prefixed one
            _add_one(group, name, "--reader-" + flag(name)[2:])


def _add_one(group: Any, name: str, option: str) -> None:
    merged = reader_specs()[name]
    dest = "reader_" + name
    spec = merged.spec
    text = spec.help.replace("%", "%%")
    if not merged.everywhere:
        text += f" [{', '.join(merged.formats)}]"
    if name == "system":
        group.add_argument(option, dest=dest, action="append", metavar="NAME|OLD=NEW",
                           help=f"{text}; here: one NAME, or OLD=NEW renames (repeat)")
    elif spec.kind is bool and not spec.multiple:
        group.add_argument(option, dest=dest, action=argparse.BooleanOptionalAction,
                           default=None, help=text)
    elif spec.multiple:
        group.add_argument(option, dest=dest, nargs="+", action="extend",
                           metavar=name.upper(), type=_argtype(spec), help=text)
    else:
        metavar = "{" + ",".join(map(str, spec.choices)) + "}" if spec.choices else None
        group.add_argument(option, dest=dest, type=_argtype(spec),
                           metavar=metavar or name.upper(), help=text)


def reader_options(args: argparse.Namespace, error: type[Exception] = ValueError
                   ) -> dict[str, Any]:
    """Keyword arguments for :func:`evalbayes.io.read` from the reader flags that were given."""
    options: dict[str, Any] = {}
    for key in reader_specs():
        value = getattr(args, "reader_" + key, None)
        if value is not None:
            options[key] = value
    if "system" in options:
        names = options["system"]
        pairs = [item.split("=", 1) for item in names if "=" in item]
        if (pairs and len(pairs) != len(names)) or (not pairs and len(names) > 1):
            raise error("--system takes one NAME, or OLD=NEW renames (repeatable)")
        options["system"] = dict(pairs) if pairs else names[0]
    return options
