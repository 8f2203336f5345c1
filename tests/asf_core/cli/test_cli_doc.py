"""docs/cli.md and the argument parser agree: every option of every subcommand is in the
synopsis and every option the synopsis (or README.md's and docs/export.md's) names exists,
with the same choices; the "Picking sessions" table lists exactly the picking options, and
``--redact``'s table exactly the kinds the detectors report."""

from __future__ import annotations

import argparse
import itertools
import re

import pytest
from fixture_paths import ROOT

from asf_core.cli.exit_codes import ExitCode, worst
from asf_core.cli.main import _COMMANDS, _subcommand, build_parser
from asf_core.redaction.detectors import KINDS

CLI_DOC = ROOT / "docs" / "cli.md"
_BLOCK = re.compile(r"```\n(.*?)```", re.S)
_OPTION = re.compile(r"(?<![\w-])(--?[a-z][a-z-]*)")
#: ``--format tree|text|markdown``: an option and the values it takes.
_CHOICES = re.compile(r"(--?[a-z][a-z-]*) ([a-z]+(?:\|[a-z]+)+)")


def _synopsis(text: str) -> dict[str, str]:
    """Each subcommand's synopsis in the first fenced block, continuation lines joined, the
    ``# ...`` comments (README.md's) left out."""
    block = _BLOCK.search(text)
    assert block is not None
    found: dict[str, str] = {}
    command = None
    for line in block.group(1).splitlines():
        line = line.split("#", 1)[0]
        words = line.split()
        if words[:1] == ["asf"]:
            command = words[1]
            found[command] = " ".join(words[2:])
        elif command is not None and line.startswith(" "):
            found[command] += " " + line.strip()
    return found


def _picking() -> set[str]:
    """The options of the "Picking sessions" table."""
    section = CLI_DOC.read_text(encoding="utf-8").split("## Picking sessions", 1)[1]
    rows = [line for line in section.split("\n\n", 2)[1].splitlines() if line.startswith("| `")]
    return {opt for row in rows for opt in _OPTION.findall(row.split("|")[1])}


def _parser(command: str) -> argparse.ArgumentParser:
    return _subcommand(build_parser(command), command)


def _options(command: str) -> dict[str, argparse.Action]:
    """Each option string of ``command`` (``--help`` aside) and its action."""
    return {
        option: action
        for action in _parser(command)._actions
        if action.option_strings and "--help" not in action.option_strings
        for option in action.option_strings
    }


def _picking_options(command: str) -> set[str]:
    parser = _parser(command)
    (group,) = (g for g in parser._action_groups if g.title == "picking sessions")
    return {option for action in group._group_actions for option in action.option_strings}


def _named(synopsis: str) -> set[str]:
    """The options a synopsis names, ``PICK`` read as the picking options."""
    named = set(_OPTION.findall(synopsis))
    return named | _picking() if "PICK" in synopsis else named


def test_the_redact_table_lists_the_kinds_found() -> None:
    """Each row of the kinds table under ``--redact`` names its kinds in code in its first
    cell (below the header row); the last row's are the plugins' own."""
    section = CLI_DOC.read_text(encoding="utf-8").split("**`--redact`**", 1)[1]
    rows = [line for line in section.split("\n\n", 2)[1].splitlines() if line.startswith("| ")]
    named = [kind for row in rows[1:] for kind in re.findall(r"`([a-z0-9_]+)`", row.split("|")[1])]
    assert rows[-1].startswith("| what the plugin names |")
    assert sorted(named) == sorted(KINDS)


def test_the_synopsis_names_every_subcommand() -> None:
    assert set(_synopsis(CLI_DOC.read_text(encoding="utf-8"))) == set(_COMMANDS)


def test_the_picking_table_lists_the_picking_options() -> None:
    assert _picking() == _picking_options("list")
    assert _picking_options("show") == _picking_options("convert") == _picking()


@pytest.mark.parametrize("command", sorted(_COMMANDS))
def test_every_option_is_documented_and_every_documented_option_exists(command: str) -> None:
    synopsis = _synopsis(CLI_DOC.read_text(encoding="utf-8"))[command]
    named, options = _named(synopsis), _options(command)
    assert named <= set(options), f"documented, not an option of asf {command}"
    undocumented = {
        action.option_strings[-1]
        for action in options.values()
        if not named & set(action.option_strings)
    }
    assert undocumented == set(), f"options of asf {command} missing from docs/cli.md"


def test_export_md_names_every_option_of_asf_export() -> None:
    """docs/export.md's synopsis is the whole command, as cli.md's is (README.md's is a
    summary)."""
    synopsis = _synopsis((ROOT / "docs" / "export.md").read_text(encoding="utf-8"))["export"]
    named = _named(synopsis)
    missing = {
        action.option_strings[-1]
        for action in _options("export").values()
        if not named & set(action.option_strings)
    }
    assert missing == set(), "options of asf export missing from docs/export.md"


@pytest.mark.parametrize("doc", ["README.md", "docs/cli.md", "docs/export.md"])
def test_documented_options_and_choices_exist(doc: str) -> None:
    for command, synopsis in _synopsis((ROOT / doc).read_text(encoding="utf-8")).items():
        options = _options(command)
        assert _named(synopsis) <= set(options), (doc, command)
        for option, values in _CHOICES.findall(synopsis):
            choices = options[option].choices
            assert choices is not None, (doc, command, option)
            assert set(values.split("|")) == set(choices), (doc, command, option)


def test_every_format_is_named_where_the_help_and_asf_show_name_the_stores(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``asf --help`` lists the places ``asf list`` looks in, README.md's quick start among
    them, and cli.md's ``asf show`` the stores it reads, as ``asf show --help`` does: each of
    the three formats, Codex included."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    (homes,) = re.findall(r"asf list +# your sessions \(([^)]*)\)", readme)
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--help"])
    start = capsys.readouterr().out.split("start here:", 1)[1].split("asf show", 1)[0]
    for home in homes.split(", "):
        assert home in start, home
    show = CLI_DOC.read_text(encoding="utf-8").split("## `asf show`", 1)[1].split("\n\n")[1]
    help_text = _parser("show").format_help()
    for name in ("Hermes", "Claude Code", "Codex"):
        assert name in " ".join(help_text.split()), name
        assert name in " ".join(show.split()), name


def test_documented_defaults() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    assert f"default ./{_parser('convert').get_default('output')})" in text
    assert f"`--format {_parser('show').get_default('format')}` (the default)" in text


def test_the_exit_code_table_and_order_are_exit_code() -> None:
    """The "Exit codes" table lists every ``ExitCode`` by number and name, and the order of
    severity given below it is :func:`worst`'s."""
    section = CLI_DOC.read_text(encoding="utf-8").split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| `([A-Z_]+)` \|", section, re.M)
    assert [(int(code), name) for code, name in rows] == [(c.value, c.name) for c in ExitCode]
    order = re.search(r"in\s+this\s+order:\s+([\d, ]+)\.", section)
    assert order is not None
    documented = [ExitCode(int(code)) for code in order.group(1).split(", ")]
    assert sorted(documented) == sorted(ExitCode)
    for more, less in itertools.pairwise(documented):
        assert worst(more, less) == worst(less, more) == more


def _variables_read() -> set[str]:
    """The environment variables the package's code reads (``os.environ.get`` of a literal, or
    of a constant its module defines as one)."""
    found: set[str] = set()
    for package in ("asf_core", "hermes_plugin", "claude_code_plugin"):
        for path in sorted((ROOT / package).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            constants = dict(re.findall(r'^(\w+)(?:: Final)? = "([A-Z][A-Z0-9_]*)"$', text, re.M))
            for arg in re.findall(r"environ\.get\(\s*([\w\"]+)", text):
                found.add(arg.strip('"') if arg.startswith('"') else constants[arg])
    return found


def test_the_environment_table_lists_every_variable_read() -> None:
    section = CLI_DOC.read_text(encoding="utf-8").split("## Environment", 1)[1]
    listed = set(re.findall(r"^\| `([A-Z][A-Z0-9_]*)", section.split("\n## ", 1)[0], re.M))
    read = _variables_read()
    assert {"ASF_PLUGINS", "HERMES_HOME", "CLAUDE_CONFIG_DIR", "COLUMNS"} <= read
    assert read - listed == set(), "read by asf, missing from docs/cli.md's Environment"
