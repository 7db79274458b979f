"""The documentation matches the program: every `jobcrawl …` command line in README.md and docs/*.md names a
real command and real options of `crawler.cli`, every relative link reaches a file (and a heading), and the
README stays a front door (short, opening with the set-up commands CI runs)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

from conftest import ROOT
from crawler.cli import main

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^\s*(```|~~~)")
INLINE = re.compile(r"`(\$ )?(jobcrawl\s[^`]*)`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
SEPARATOR = set("();<>|&")


def split_text(text: str) -> tuple[list[tuple[int, str]], str]:
    """The lines inside fenced code blocks (numbered from 1), and the prose with code lines blanked (line numbers
    kept)."""
    code, prose, fenced = [], [], False
    for number, line in enumerate(text.split("\n"), 1):
        if FENCE.match(line):
            fenced = not fenced
            prose.append("")
        elif fenced:
            code.append((number, line))
            prose.append("")
        else:
            prose.append(line)
    return code, "\n".join(prose)


def commands_in(line: str) -> list[list[str]]:
    """The argument lists of the `jobcrawl` commands a shell line runs: a leading `$ ` prompt, environment
    assignments, path prefixes (.venv/bin/, ExecStart=/srv/…/) and `# comments` left out, each command ended by
    a pipe, a redirection, `&&` or `;`."""
    lexer = shlex.shlex(line.removeprefix("$ "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    commands, segment = [], []
    for token in [*lexer, ";"]:
        if token and set(token) <= SEPARATOR:
            words = segment
            while words and ASSIGNMENT.match(words[0]) and Path(words[0].split("=", 1)[1]).name != "jobcrawl":
                words = words[1:]
            if words and Path(words[0].split("=", 1)[-1]).name == "jobcrawl":
                commands.append(words[1:])
            segment = []
        else:
            segment.append(token)
    return commands


def command_lines(path: Path) -> dict[int, list[list[str]]]:
    """Line number → the `jobcrawl` commands of that line: shell lines of code blocks and inline code spans
    (which may wrap across lines)."""
    code, prose = split_text(path.read_text(encoding="utf-8"))
    found: dict[int, list[list[str]]] = {}
    for number, line in code:
        if "jobcrawl" in line:
            found.setdefault(number, []).extend(commands_in(line))
    for match in INLINE.finditer(prose):
        number = prose.count("\n", 0, match.start()) + 1
        found.setdefault(number, []).extend(commands_in(" ".join(match.group(2).split())))
    return {number: commands for number, commands in found.items() if commands}


def _options(command: click.Command) -> dict[str, click.Parameter]:
    context = click.Context(command, info_name=command.name)
    return {name: param for param in command.get_params(context) if isinstance(param, click.Option)
            for name in (*param.opts, *param.secondary_opts)}


def _takes_value(param: click.Parameter) -> bool:
    return not (getattr(param, "is_flag", False) or getattr(param, "count", False))


def check_command(args: list[str]) -> list[str]:
    """What is wrong with `jobcrawl ARGS`: a command path that does not exist, an option the command does not
    have. Positional arguments and option values are not checked; `…` ends the check (the rest is elided)."""
    command: click.Command = main
    path = ["jobcrawl"]
    problems: list[str] = []
    rest = iter(args)
    for token in rest:
        if token in ("…", "...", "--"):
            break
        if token.startswith("-") and len(token) > 1:
            options = _options(command)
            name = token.split("=", 1)[0]
            if name in options:
                if _takes_value(options[name]) and "=" not in token:
                    next(rest, None)
                continue
            if not token.startswith("--"):  # a cluster of short options: -qv, -vv, -sNAME=VALUE
                for position, letter in enumerate(token[1:], 1):
                    param = options.get("-" + letter)
                    if param is None:
                        problems.append(f"{' '.join(path)}: no option -{letter} (in {token})")
                        break
                    if _takes_value(param):
                        if position == len(token) - 1:
                            next(rest, None)
                        break
                continue
            problems.append(f"{' '.join(path)}: no option {name}")
        elif isinstance(command, click.Group):
            sub = command.get_command(click.Context(command), token)
            if sub is None:
                problems.append(f"{' '.join(path)}: no command {token!r}")
                break
            command = sub
            path.append(token)
    return problems


def _relative(path: Path) -> str:
    return str(path.relative_to(ROOT))


COMMAND_CASES = [pytest.param(commands, id=f"{_relative(path)}:{number}")
                 for path in DOCS for number, commands in sorted(command_lines(path).items())]


def test_the_docs_show_commands():
    assert len(COMMAND_CASES) > 60
    assert {_relative(p) for p in DOCS if command_lines(p)} >= {"README.md", "docs/ingest.md", "docs/crawling.md",
                                                               "docs/distributed.md", "docs/alerts.md"}


@pytest.mark.parametrize("commands", COMMAND_CASES)
def test_every_command_line_names_real_commands_and_options(commands):
    assert [problem for args in commands for problem in check_command(args)] == []


@pytest.mark.parametrize(("line", "commands"), [
    pytest.param("jobcrawl ingest seeds/ --db jobs.db", [["ingest", "seeds/", "--db", "jobs.db"]], id="plain"),
    pytest.param("$ jobcrawl export --out a.csv   # a comment's quote", [["export", "--out", "a.csv"]], id="prompt"),
    pytest.param(".venv/bin/jobcrawl score --report | head -3 > top.txt", [["score", "--report"]], id="venv-pipe"),
    pytest.param("17 * * * *  cd /srv/jobcrawl && JOBCRAWL_CONTACT=x .venv/bin/jobcrawl crawl --all >> log 2>&1",
                 [["crawl", "--all"]], id="cron"),
    pytest.param("ExecStart=/srv/jobcrawl/.venv/bin/jobcrawl worker --redis redis://r:6379/0",
                 [["worker", "--redis", "redis://r:6379/0"]], id="systemd"),
    pytest.param("jobcrawl watch list; jobcrawl watch deliver", [["watch", "list"], ["watch", "deliver"]],
                 id="two-commands"),
    pytest.param("jobcrawl watch add x --search \"CUDA -Java\"", [["watch", "add", "x", "--search", "CUDA -Java"]],
                 id="quoted"),
    pytest.param("scrapy crawl greenhouse -a boards=gitlab", [], id="not-jobcrawl"),
    pytest.param("# jobcrawl-crawl.service", [], id="comment"),
])
def test_command_lines_are_read_as_a_shell_reads_them(line, commands):
    assert commands_in(line) == commands


@pytest.mark.parametrize(("line", "problems"), [
    pytest.param("jobcrawl ingest --no-such-flag", ["jobcrawl ingest: no option --no-such-flag"], id="made-up-option"),
    pytest.param("jobcrawl ingest seeds/ --db=jobs.db --bogus=1", ["jobcrawl ingest: no option --bogus"],
                 id="made-up-option-with-equals"),
    pytest.param("jobcrawl crawl --all -qx", ["jobcrawl crawl: no option -x (in -qx)"], id="short-cluster"),
    pytest.param("jobcrawl nosuch --db jobs.db", ["jobcrawl: no command 'nosuch'"], id="made-up-command"),
    pytest.param("jobcrawl watch nosuch", ["jobcrawl watch: no command 'nosuch'"], id="made-up-subcommand"),
    pytest.param("jobcrawl sources --health --add", ["jobcrawl sources: no option --add"], id="option-of-a-sub"),
    pytest.param("jobcrawl ingest x.txt --set company=x", ["jobcrawl ingest: no option --set"], id="removed-ingest-set"),
    pytest.param("jobcrawl crawl --all --set DOWNLOAD_TIMEOUT=5", ["jobcrawl crawl: no option --set"],
                 id="removed-crawl-set"),
    pytest.param("jobcrawl serve --writable", ["jobcrawl serve: no option --writable"], id="removed-serve-writable"),
    pytest.param("jobcrawl export --search --open", [], id="option-value-looks-like-an-option"),
    pytest.param("jobcrawl ingest -vv -s A=1 seeds/ … --more", [], id="elided"),
    pytest.param("jobcrawl sources discover https://x.example --add s.toml --allow-private", [], id="nested"),
])
def test_the_checker_reports_made_up_commands_and_options(line, problems):
    assert [problem for args in commands_in(line) for problem in check_command(args)] == problems


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    _, prose = split_text(path.read_text(encoding="utf-8"))
    return {_slug(line.lstrip("#")) for line in prose.split("\n") if re.match(r"#{1,6} ", line)}


def links_in(path: Path) -> list[tuple[int, str]]:
    """(line number, target) of each relative link in the prose of a page."""
    _, prose = split_text(path.read_text(encoding="utf-8"))
    return [(number, target) for number, line in enumerate(prose.split("\n"), 1)
            for target in LINK.findall(line) if not re.match(r"[a-z]+:", target)]


LINK_CASES = [pytest.param(path, target, id=f"{_relative(path)}:{number}:{target}")
              for path in DOCS for number, target in links_in(path)]


@pytest.mark.parametrize(("page", "target"), LINK_CASES)
def test_every_relative_link_reaches_a_file_and_a_heading(page, target):
    file, _, anchor = target.partition("#")
    reached = (page.parent / file).resolve() if file else page
    assert reached.exists(), f"{target}: no such file"
    if anchor and reached.suffix == ".md":
        assert anchor in _anchors(reached), f"{target}: no such heading"


def test_the_readme_is_a_front_door():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    lines = text.split("\n")
    assert len(text.splitlines()) <= 200
    # .ci/run runs line 2 of the first code block verbatim: it must be the README's first code block, right
    # after the title, and hold the two set-up commands
    assert lines[0] == "# jobcrawl" and lines[2] == "```sh" and lines[5] == "```"
    assert lines[3].endswith(".venv/bin/jobcrawl ingest seeds/ --db jobs.db")
    assert lines[4].endswith(".venv/bin/python -m pytest -n auto --dist loadfile")
    linked = {(ROOT / target.partition("#")[0]).resolve() for target in LINK.findall(text)}
    pages = set((ROOT / "docs").glob("*.md"))
    assert pages - linked == set()
