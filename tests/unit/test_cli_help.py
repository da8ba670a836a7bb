"""forge-server's flags stay as they were while build_parser is split into
one function per argument group (issue 37): its --help text, byte for byte,
and every argument's settings, against fixtures taken from the parser
before the split.

The help text depends on argparse's layout, which changes between Python
versions (3.13 lists options differently, 3.14 colours them), so that
comparison runs on the Python the fixture was taken with; the argument
settings, which are all the help is made from, are compared on every
version. After a deliberate change to the flags, rewrite both fixtures:

    .venv/bin/python -m tests.unit.test_cli_help
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
HELP = FIXTURES / "forge_server_help.txt"
ARGUMENTS = FIXTURES / "forge_server_arguments.json"
# The Python the help fixture was taken with (argparse's layout is its own).
HELP_PYTHON = (3, 11)


def _clean_environment() -> dict[str, str]:
    """The environment without the FORGE_* defaults, a fixed width and no colour."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("FORGE_")}
    env.update(COLUMNS="100", NO_COLOR="1")
    env.pop("FORCE_COLOR", None)
    return env


@pytest.fixture
def parser(monkeypatch: pytest.MonkeyPatch) -> Iterator[argparse.ArgumentParser]:
    for key in [k for k in os.environ if k.startswith("FORGE_")] + ["FORCE_COLOR"]:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    from forge_server.cli import build_parser

    yield build_parser()


def describe(parser: argparse.ArgumentParser) -> list[dict[str, Any]]:
    """Every argument with what --help is made from, group by group, in order."""
    out = []
    for group in parser._action_groups:
        for action in group._group_actions:
            out.append(
                {
                    "group": group.title,
                    "group_description": group.description,
                    "options": list(action.option_strings),
                    "dest": action.dest,
                    "action": type(action).__name__,
                    "default": repr(action.default),
                    "type": getattr(action.type, "__name__", repr(action.type)),
                    "choices": None if action.choices is None else list(action.choices),
                    "metavar": action.metavar,
                    "nargs": action.nargs,
                    "required": action.required,
                    "help": action.help,
                }
            )
    return out


def test_every_argument_is_as_it_was(parser: argparse.ArgumentParser) -> None:
    assert describe(parser) == json.loads(ARGUMENTS.read_text())


@pytest.mark.skipif(
    sys.version_info[:2] != HELP_PYTHON,
    reason=f"the help fixture holds Python {HELP_PYTHON}'s argparse layout",
)
def test_help_is_byte_identical(parser: argparse.ArgumentParser) -> None:
    assert parser.format_help() == HELP.read_text()


def _write_fixtures() -> None:
    os.environ.clear()
    os.environ.update(_clean_environment())
    from forge_server.cli import build_parser

    parser = build_parser()
    FIXTURES.mkdir(exist_ok=True)
    ARGUMENTS.write_text(json.dumps(describe(parser), indent=1) + "\n")
    if sys.version_info[:2] == HELP_PYTHON:
        HELP.write_text(parser.format_help())


if __name__ == "__main__":
    _write_fixtures()
