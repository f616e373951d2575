"""docs/recipes.md's pipelines work as written: every YAML block parses (yaml.safe_load, as GitHub and GitLab
read it), and every `reportgen ...` command in the page's code blocks, in the CI files' shell steps too, goes
through the command line's own argument parser (click), so a misspelt or renamed option or a bad choice fails
here, not in a user's pipeline."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest
import yaml

from reportgen.cli import main

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "recipes.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
SHELL_OPS = {"|", "||", "&&", ";", ">", ">>", "<", "2>", "&", "2>&1", ")", "("}


def blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(PAGE.read_text(encoding="utf-8"))]


def _strings(node) -> list[str]:
    """Every string in a parsed YAML document (the shell steps of a CI file are strings at any depth)."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


def commands(script: str) -> list[list[str]]:
    """The arguments of each `reportgen` command in a shell script: continued lines joined, comments dropped,
    the command cut at the first shell operator (a pipe, `||`, a redirection)."""
    script = script.replace("\\\n", " ")
    out = []
    for line in script.splitlines():
        line = re.sub(r"(?<=\s)\d+(?=>)", " ", line)  # `2> log`: the descriptor goes with the redirection
        lex = shlex.shlex(line, posix=True, punctuation_chars=True)
        lex.whitespace_split = True
        lex.commenters = "#"
        try:
            words = list(lex)
        except ValueError:  # an unbalanced quote in a line that is not ours (heredocs, jq programs)
            continue
        for i, w in enumerate(words):
            if w == "reportgen" and (i == 0 or words[i - 1] in SHELL_OPS or words[i - 1] in ("then", "do")):
                args = []
                for a in words[i + 1:]:
                    if a in SHELL_OPS or re.fullmatch(r">+&?\d*|&>", a):
                        break
                    args.append(a)
                out.append(args)
    return out


def test_yaml_blocks_parse():
    parsed = [yaml.safe_load(text) for lang, text in blocks() if lang == "yaml"]
    ci = [d for d in parsed if isinstance(d, dict) and ("jobs" in d or any(
        isinstance(v, dict) and "script" in v for v in d.values()))]
    assert len(ci) >= 2  # a GitHub Actions workflow and a GitLab CI job
    gh = next(d for d in ci if "jobs" in d)
    steps = [s for job in gh["jobs"].values() for s in job["steps"]]
    assert all(isinstance(s, dict) and ("run" in s or "uses" in s) for s in steps)
    gl = next(d for d in ci if "jobs" not in d)
    job = next(v for v in gl.values() if isinstance(v, dict) and "script" in v)
    assert job["artifacts"]["reports"]["junit"]  # the JUnit files become the merge request's test report


def all_commands() -> list[list[str]]:
    cmds = []
    for lang, text in blocks():
        if lang == "yaml":
            for s in _strings(yaml.safe_load(text)):
                cmds += commands(s)
        else:
            cmds += commands(text)
    return cmds


def test_the_pipelines_call_the_pipeline_options():
    flags = {a for c in all_commands() for a in c if a.startswith("--")}
    assert {"--junit", "--summary-md", "--report-url", "--max-increase", "--mlflow-uri",
            "--mlflow-experiment"} <= flags


def parse(args: list[str]) -> None:
    """Parse one command line as `reportgen` would (the command's options converted and checked), without
    running it; raises click.UsageError."""
    ctx = click.Context(main, info_name="reportgen", **main.context_settings)  # -h as well as --help: click caches
    # each command's help option from the first context that asks, and the generated CLI reference reads it
    cmd = main.get_command(ctx, args[0]) if args else None
    if cmd is None:
        raise click.UsageError(f"no such command {args[:1]}")
    cmd.make_context(args[0], list(args[1:]), parent=ctx).close()


@pytest.mark.parametrize("args", all_commands(), ids=lambda a: " ".join(a)[:60])
def test_every_command_parses(args):
    """click parses the group's and the command's options and converts every value (choices, numbers)."""
    try:
        parse(args)
    except click.ClickException as e:
        pytest.fail(f"`reportgen {' '.join(args)}`: {e.format_message()}")


def test_the_parser_check_catches_a_wrong_option():
    (args,) = commands("reportgen run spec.yaml --out x --junitt j.xml || true")
    assert args == ["run", "spec.yaml", "--out", "x", "--junitt", "j.xml"]
    with pytest.raises(click.UsageError, match="junitt"):
        parse(args)
    with pytest.raises(click.UsageError, match="nosuch"):
        parse(["nosuch", "x"])
