"""The command-line reference of the user guide, read from the command's argparse parser (given
by the caller, binlog_grammar/cli/docs.py): every command and sub-command, every option of every
argument group with its help, default and choices, the options that exclude each other, and each
command's usage as `--help` prints it at a fixed width. Nothing here is written per option: an
option added to the parser is on the page at the next `binlog-grammar docs`."""
from __future__ import annotations

import argparse
import re

from .blocks import C, CODE, H, L, P, ROW, T, TABLE, Page, join
from .guide_text import inline

USAGE_WIDTH = 100  # the usage lines' width: fixed, so the page does not follow the terminal


def _formatter(parser) -> argparse.HelpFormatter:
    return argparse.HelpFormatter(prog=parser.prog, width=USAGE_WIDTH, max_help_position=32)


def usage(parser) -> str:
    f = _formatter(parser)
    f.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return f.format_help().strip()


def shown(action) -> bool:
    """An action a user gives: not --help's hidden ones, not the sub-command list itself."""
    return action.help is not argparse.SUPPRESS and not isinstance(action, argparse._SubParsersAction)


def option_text(parser, action) -> str:
    """`-p, --password [PASSWORD]`, as --help writes the option and its argument."""
    f = _formatter(parser)
    if not action.option_strings:
        return f._format_args(action, action.dest)
    if action.nargs == 0:
        return ", ".join(action.option_strings)
    arg = f._format_args(action, action.dest.upper())
    return ", ".join(action.option_strings) + " " + arg


def help_text(parser, action) -> str:
    if not action.help:
        return ""
    return " ".join(_formatter(parser)._expand_help(action).split())


def default_text(action):
    """The default a user sees, or None (no value: off, empty, or worked out when it runs)."""
    d = action.default
    if d is None or d is argparse.SUPPRESS or action.nargs == 0 or d == [] or d == "":
        return None
    if isinstance(d, (list, tuple)):
        return " ".join(str(x) for x in d)
    return str(d)


def sub_commands(parser):
    """(name, help, sub-parser) of a parser's sub-commands, in the order --help lists them."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sp in action.choices.items():
                out.append((name, helps.get(name) or "", sp))
    return out


def command_anchor(path) -> str:
    return "cmd-" + "-".join(path) if path else "cmd"


def option_anchor(path, action) -> str:
    name = max(action.option_strings, key=len) if action.option_strings else action.dest
    return command_anchor(path) + "-" + re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def option_rows(parser, path, actions, search):
    rows = []
    for action in actions:
        if not shown(action):
            continue
        default = default_text(action)
        text = help_text(parser, action)
        what = inline(text)
        if action.choices is not None and not isinstance(action.choices, dict):
            what += [T(("" if not text or text.endswith(".") else ".") + " One of: ")]
            what += join([[C(str(c))] for c in action.choices])
            what.append(T("."))
        if action.required and action.option_strings:
            what.append(T(("" if not text or text.endswith(".") else ".") + " Required."))
        anchor = option_anchor(path, action)
        rows.append(ROW([[C(option_text(parser, action))], [C(default)] if default else [],
                         what], anchor=anchor, cls="option"))
        label = max(action.option_strings, key=len) if action.option_strings else action.dest
        search.append((f"{' '.join(path)} {label}".strip(), anchor, "command-line option",
                       help_text(parser, action)[:160]))
    return rows


def command_blocks(parser, path, summary, search, level=2):
    """A command's section: its summary, usage, argument groups, exclusive options, sub-commands."""
    anchor = command_anchor(path)
    title = " ".join(["binlog-grammar", *path])
    blocks = [H(level, [C(title)], anchor)]
    search.append((title, anchor, "command", summary or parser.description or ""))
    if summary:
        end = "" if summary.endswith(".") else "."
        blocks.append(P(inline(summary[:1].upper() + summary[1:] + end)))
    if parser.description and parser.description != summary:
        blocks.append(P(inline(parser.description)))
    blocks.append(CODE(usage(parser), "text"))
    for group in parser._action_groups:
        actions = [a for a in group._group_actions if shown(a)]
        if not actions:
            continue
        title = group.title or "options"
        group_anchor = f"{anchor}-group-{re.sub(r'[^a-z0-9]+', '-', title.lower()).strip('-')}"
        blocks.append(H(4, title[:1].upper() + title[1:], group_anchor))
        if group.description:
            blocks.append(P(inline(group.description)))
        blocks.append(TABLE(["Option", "Default", "What it does"],
                            option_rows(parser, path, actions, search), cls="options",
                            name=" ".join(path) + ": " + title))
    for group in parser._mutually_exclusive_groups:
        names = [max(a.option_strings, key=len) if a.option_strings else a.dest
                 for a in group._group_actions if shown(a)]
        if len(names) > 1:
            blocks.append(P(T("At most one of " if not group.required else "Exactly one of "),
                            *join([[C(n)] for n in names]), T(".")))
    for name, help_, sp in sub_commands(parser):
        blocks += command_blocks(sp, [*path, name], help_, search, level=min(level + 1, 4))
    return blocks


def cli_page(parser) -> Page:
    search = []
    commands = sub_commands(parser)
    blocks = [H(1, "Command-line reference"),
              P(T("Every command of "), C("binlog-grammar"), T(" and every option, as its argument "
                  "parser defines them: this page is generated from the parser by "),
                C("binlog-grammar docs"), T(", so it lists what "), C("--help"),
                T(" prints, grouped as there, with each option's default.")),
              TABLE(["Command", "What it does"],
                    [ROW([[L(name, "guide/cli", command_anchor([name]))], inline(help_)])
                     for name, help_, _sp in commands], cls="commands")]
    blocks += command_blocks(parser, [], parser.description or "", search)
    return Page("guide/cli", "Command-line reference", blocks, nav="Command line", group="guide",
                search=search)


__all__ = ["cli_page", "command_anchor", "default_text", "help_text", "option_anchor",
           "option_text", "shown", "sub_commands", "usage"]
