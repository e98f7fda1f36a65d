"""The command line's parser: argparse, less two habits that put a password on the screen.

- Abbreviations: argparse takes `--pass` or `--password` for `--password-env` when no other
  option starts so, and so `stream --password SECRET` read SECRET as a variable name and named it
  in its error. Here an option is matched by its full name only (allow_abbrev=False, which
  sub-parsers inherit since they are made by this class too).
- Echoes: argparse's errors quote what it refused ("unrecognized arguments: --password SECRET",
  "invalid choice: 'SECRET'"). Here an error names the refused options by their name alone (the
  part before `=`; `-p` of `-pSECRET`) and never shows a bare value, which may be the password
  meant for an option that does not exist.

Errors keep argparse's form otherwise: the usage line, `PROG: error: ...`, exit status 2. A
sub-parser reports its own unrecognized arguments (with its own usage line). A --password-env
naming no variable is reported without the name unless it looks like one (unset_variable).
"""
from __future__ import annotations

import argparse
import os
import re
import sys

NOT_SHOWN = "not shown, it may be a secret"
PROMPT = "\0prompt"  # cli/login.py: the value of a bare -p / --password (no argv word holds a NUL)
# argparse's messages that quote a value the user typed (Python 3.11 to 3.13)
_QUOTED_VALUE = (
    re.compile(r"(invalid choice: )(.*?)( \(choose from )", re.S),
    re.compile(r"(ignored explicit argument )(.*)()$", re.S),
)
_AMBIGUOUS = re.compile(r"(ambiguous option: )(\S+)( could match)")
_VARIABLE_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")  # MYSQL_PWD, REPL_PASSWORD: what is shown


def option_name(arg: str) -> str:
    """What of a refused command-line word may be shown: `--name` of `--name=value`, `-p` of
    `-pSECRET`, nothing of a bare value (None)."""
    if arg.startswith("--") and len(arg) > 2:
        return arg.split("=", 1)[0]
    if arg.startswith("-") and len(arg) > 1 and not arg[1].isdigit() and arg[1] != ".":
        return arg[:2]
    return None


def describe_refused(words, known=()) -> str:
    """The error for arguments no option takes: the options by name (with the nearest of the
    `known` option strings, when one is close), the values counted."""
    import difflib

    names, hidden = [], 0
    longs = [k for k in known if k.startswith("--")]
    for w in words:
        name = option_name(w)
        if name is None:
            hidden += 1
            continue
        text = name + (f" (its value {NOT_SHOWN})" if name != w else "")
        near = difflib.get_close_matches(name, longs if name.startswith("--") else known, 1, 0.7)
        if near:
            text += f" (did you mean {near[0]}?)"
        names.append(text)
    parts = []
    if names:
        parts.append(("unrecognized option " if len(names) == 1 else "unrecognized options ")
                     + ", ".join(names))
    if hidden:
        parts.append(f"{hidden} unexpected argument{'s' if hidden > 1 else ''} ({NOT_SHOWN})")
    return "; ".join(parts)


def scrub(message: str) -> str:
    """An argparse error without the values it quotes."""
    for pattern in _QUOTED_VALUE:
        message = pattern.sub(lambda m: f"{m[1]}({NOT_SHOWN}){m[3]}", message)
    return _AMBIGUOUS.sub(lambda m: f"{m[1]}{option_name(m[2]) or '(' + NOT_SHOWN + ')'}{m[3]}",
                          message)


def unset_variable(var: str, option: str):
    """The error for a --password-env VAR whose variable is not set (None when it is set). The
    name is shown when it looks like one (capitals, digits, underscores); other words may be the
    password itself, typed where its variable's name goes."""
    if var in os.environ:
        return None
    if _VARIABLE_NAME.fullmatch(var):
        return f"the environment variable {var} ({option}) is not set"
    return (f"the environment variable named by {option} is not set (the name is {NOT_SHOWN}: "
            f"it does not look like a variable's name)")


class Parser(argparse.ArgumentParser):
    """argparse.ArgumentParser matching options by full name only and echoing no value."""

    def __init__(self, *args, allow_abbrev=False, **kwargs):
        super().__init__(*args, allow_abbrev=allow_abbrev, **kwargs)

    def parse_known_args(self, args=None, namespace=None):
        words = list(sys.argv[1:] if args is None else args)
        prompt = getattr(self, "prompt_words", None)
        if prompt:  # cli/login.py: a bare -p / --password asks, the word after it is not taken
            end = words.index("--") if "--" in words else len(words)
            words = [f"{prompt[-1]}={PROMPT}" if i < end and w in prompt else w
                     for i, w in enumerate(words)]
            args = words
        self._words = words
        namespace, extras = super().parse_known_args(args, namespace)
        if extras:
            self.error(describe_refused(extras, list(self._option_string_actions)))
        return namespace, extras

    def error(self, message):
        whole = getattr(self, "whole", None)
        if whole is not None:  # a parser of one command (cli.build_parser): the whole one's error
            whole().parse_args(getattr(self, "_words", None))
        if _QUOTED_VALUE[0].search(message):
            # a value refused by its choices (the command's name, most often) may be the value of
            # an unknown option before it (`--password SECRET stream`): name that option instead
            unknown = self.unknown_options_before_a_value()
            if unknown:
                message = describe_refused(unknown, list(self._option_string_actions))
        super().error(scrub(message))

    def unknown_options_before_a_value(self):
        """The words, up to the first bare value no known option takes, that look like options
        this parser does not know."""
        unknown, words = [], iter(getattr(self, "_words", ()))
        for w in words:
            name = option_name(w)
            if name is None or w == "--":
                break
            action = self._option_string_actions.get(w.split("=", 1)[0] if w.startswith("--") else w)
            if action is None:
                unknown.append(w)
            elif action.nargs != 0 and "=" not in w:
                next(words, None)
        return unknown


__all__ = ["PROMPT", "Parser", "describe_refused", "option_name", "scrub", "unset_variable"]
