"""README.md's Python runs as written: each block in a fresh interpreter, and each pastes
into the interactive interpreter.

A block that goes on from the one before it says so on the line above its fence with
``<!-- continues the previous block -->``; it runs in the same interpreter as the blocks
it continues.  Its install lines say ``pip install .`` (naivegraph is on no package
index) and quote extras.
"""

from __future__ import annotations

import codeop
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import NamedTuple

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
CONTINUES = "<!-- continues the previous block -->"
FENCE = re.compile(r"^```(\w*)\s*$")


class Block(NamedTuple):
    line: int  # of the opening fence, counting from 1
    code: str
    continues: bool


def python_blocks(markdown: str) -> list[Block]:
    """The ```python blocks of a Markdown text, in order."""
    blocks, lines = [], markdown.splitlines()
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
        if opening.group(1) == "python":
            above = lines[i - 1].strip() if i > 0 else ""
            code = "\n".join(lines[i + 1 : end]) + "\n"
            blocks.append(Block(i + 1, code, above == CONTINUES))
        i = end + 1
    return blocks


def programs(blocks: list[Block]) -> list[list[Block]]:
    """The blocks grouped into programs: a block and those that continue it."""
    grouped: list[list[Block]] = []
    for block in blocks:
        if block.continues:
            if not grouped:
                raise ValueError(f"line {block.line}: the first block cannot continue another")
            grouped[-1].append(block)
        else:
            grouped.append([block])
    return grouped


def paste_errors(code: str) -> list[str]:
    """What the interactive interpreter would reject if ``code`` were pasted into it line
    by line: it runs each statement when the statement is complete, and a compound
    statement (``with``, ``for``) is complete only at a blank line."""
    errors, buffer = [], []
    for number, line in enumerate(code.splitlines(), 1):
        buffer.append(line)
        try:
            complete = codeop.compile_command("\n".join(buffer), "<stdin>", "single")
        except SyntaxError as error:
            errors.append(f"line {number}: {error.msg}: {line!r}")
            buffer = []
            continue
        if complete is not None:
            buffer = []
    return errors


BLOCKS = python_blocks(README.read_text(encoding="utf-8"))


def test_readme_has_the_dynamic_static_tf1_and_saving_blocks():
    assert len(BLOCKS) == 4
    assert [b.continues for b in BLOCKS] == [False, False, False, True]


@pytest.mark.parametrize("program", programs(BLOCKS), ids=lambda p: f"line{p[0].line}")
def test_readme_program_runs_as_written_in_a_fresh_interpreter(program, tmp_path):
    script = tmp_path / "readme_block.py"
    script.write_text("".join(block.code for block in program), encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, f"README line {program[0].line}:\n{done.stderr}"


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: f"line{b.line}")
def test_readme_block_pastes_into_the_interactive_interpreter(block):
    assert paste_errors(block.code) == []


def test_paste_check_rejects_a_statement_right_after_a_with_block():
    pasted = "with open('f') as f:\n    x = 1\nprint(x)\n"
    assert paste_errors(pasted) == ["line 3: invalid syntax: 'print(x)'"]
    assert paste_errors(pasted.replace("\nprint", "\n\nprint")) == []


def test_blocks_that_continue_run_with_the_block_before_them():
    markdown = (
        "```python\nx = 1\n```\n\n"
        f"{CONTINUES}\n```python\ny = x + 1\n```\n"
        "```sh\nmake lab\n```\n"
        "```python\nz = 3\n```\n"
    )
    blocks = python_blocks(markdown)
    assert [(b.code, b.continues) for b in blocks] == [
        ("x = 1\n", False),
        ("y = x + 1\n", True),
        ("z = 3\n", False),
    ]
    assert [[b.code for b in p] for p in programs(blocks)] == [
        ["x = 1\n", "y = x + 1\n"],
        ["z = 3\n"],
    ]
    with pytest.raises(ValueError, match="the first block cannot continue another"):
        programs(python_blocks(f"{CONTINUES}\n```python\nx = 1\n```\n"))


def test_readme_installs_from_the_checkout_and_quotes_extras():
    text = README.read_text(encoding="utf-8")
    assert "pip install ." in text
    assert not re.search(r"pip install naivegraph\b", text), "naivegraph is on no index"
    for extra in re.findall(r"pip install (\S*\[[^\]]*\]\S*)", text):
        assert extra[0] in "'\"", f"unquoted extra {extra} (zsh expands brackets)"
