"""Prose in the right place: a module's docstring says what it does and why, in a few
lines; measurements, the commits they compare and their tables live in
``benchmarks/README.md``, each beside the command that produces it.

Read from the source (``ast`` for docstrings, ``tokenize`` for comments), so a failure
names the file and line.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "naivegraph"

# The longest module docstrings that teach rather than log (``naivegraph.func``'s, 43
# lines with its examples; the fast modules' explanations of their tricks, ~40) fit;
# the benchmark logs this replaced were 65-136 lines.
MAX_MODULE_DOCSTRING_LINES = 45

# A commit hash as prose cites one: 7 to 40 hex digits with at least one letter and one
# digit, standing alone (not inside a word, a hex literal or a decimal like 9.99999996e-13).
COMMIT_HASH = re.compile(r"(?<![\w.])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\w.])")

# A table in reStructuredText (``====  ====``) or Markdown (``| a | b |``).
TABLE_RULE = re.compile(r"^\s*(=+( +=+)+|\|.*\|.*\|)\s*$")


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def _docstrings(tree: ast.Module):
    """(line, text) of the module's docstring and every class's and function's."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                if isinstance(body[0].value.value, str):
                    yield body[0].lineno, body[0].value.value


def _comments(source: str):
    """(line, text) of every comment."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string


def _prose(path: Path):
    source = path.read_text(encoding="utf-8")
    yield from _docstrings(ast.parse(source))
    yield from _comments(source)


def _hashes(text: str) -> list[str]:
    return COMMIT_HASH.findall(text)


def test_no_docstring_or_comment_cites_a_commit_hash():
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {', '.join(_hashes(text))}"
        for path in _sources()
        for line, text in _prose(path)
        if _hashes(text)
    ]
    assert found == [], "commit hashes belong in benchmarks/README.md, beside their figures"


def test_no_docstring_holds_a_table():
    found = [
        f"{path.relative_to(PACKAGE.parent)}:{line}"
        for path in _sources()
        for line, text in _docstrings(ast.parse(path.read_text(encoding="utf-8")))
        if any(TABLE_RULE.match(row) for row in text.splitlines())
    ]
    assert found == [], "tables of measurements belong in benchmarks/README.md"


def test_module_docstrings_are_a_few_paragraphs():
    too_long = []
    for path in _sources():
        docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False)
        lines = len(docstring.splitlines()) if docstring else 0
        if lines > MAX_MODULE_DOCSTRING_LINES:
            too_long.append(f"{path.relative_to(PACKAGE.parent)}: {lines} lines")
    assert too_long == [], f"a module docstring has at most {MAX_MODULE_DOCSTRING_LINES} lines"


def test_the_checks_find_what_they_look_for():
    assert _hashes("built at 8c5bb93, compared with a9d08a7f") == ["8c5bb93", "a9d08a7f"]
    assert _hashes("1e-12 (9.99999996e-13 as a double), 0xdeadbeef1, 12345678, deadbeef") == []
    assert TABLE_RULE.match("=====  =====  =====")
    assert TABLE_RULE.match("| before | after |")
    assert not TABLE_RULE.match("a | b, the union")
