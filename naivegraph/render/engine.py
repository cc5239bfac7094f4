"""Turn DOT source into SVG/PNG/PDF bytes without requiring a system install.

The chain, tried in order:

1. ``dot`` on PATH (the Graphviz program), run as a subprocess;
2. ``pygraphviz``, whose wheel bundles Graphviz and lays the graph out in-process.

If neither can run, :class:`GraphvizUnavailable` says how to get one.  The plain
``graphviz`` Python package is only used to *build* DOT: it can only render by calling
``dot``, and its Jupyter display silently shows text when ``dot`` is missing.

>>> data = pipe("digraph { a -> b }", "svg")
>>> data[:5] in (b"<?xml", b"<svg ")
True
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import tempfile
from typing import Callable, Iterator

#: Output formats every engine of the chain can write (a deliberate, tested subset).
FORMATS = ("svg", "png", "pdf", "jpg", "jpeg", "gif", "ps", "eps", "json", "dot", "plain")

#: Names accepted by ``backend=``; ``None`` / ``"auto"`` means "first that works".
BACKENDS = ("dot", "pygraphviz")

INSTALL_HINT = (
    "Install one of them:\n"
    "  pip install pygraphviz      (its wheel bundles Graphviz: nothing else to install)\n"
    "  apt-get install graphviz    (or brew install graphviz; puts `dot` on PATH)\n"
    "The DOT text is still available as `.source`.")


class GraphvizUnavailable(RuntimeError):
    """Neither the ``dot`` program nor ``pygraphviz`` could render a drawing."""


class RenderError(RuntimeError):
    """An engine was found but failed on this DOT source (a bug in the drawing)."""


def check_format(fmt: str) -> str:
    """Validate an output format early, so no engine reports it confusingly.

    >>> check_format("PNG")
    'png'
    """
    if not isinstance(fmt, str) or fmt.lower() not in FORMATS:
        raise ValueError(f"unsupported output format {fmt!r}; use one of {', '.join(FORMATS)}")
    return fmt.lower()


def dot_program() -> str | None:
    """Path of the Graphviz ``dot`` program on PATH, or None."""
    return shutil.which("dot")


def _pipe_dot(source: str, fmt: str) -> bytes:
    program = dot_program()
    if program is None:
        raise GraphvizUnavailable("the Graphviz `dot` program is not on PATH")
    try:
        done = subprocess.run([program, f"-T{fmt}"], input=source.encode("utf-8"),
                              capture_output=True, timeout=120)
    except OSError as error:  # found but not runnable (broken install, wrong arch)
        raise GraphvizUnavailable(f"`{program}` could not run: {error}") from error
    if done.returncode != 0:
        raise RenderError(f"`dot -T{fmt}` failed: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def _pipe_pygraphviz(source: str, fmt: str) -> bytes:
    try:
        import pygraphviz
    except Exception as error:  # ImportError, or a wheel whose shared library fails to load
        raise GraphvizUnavailable(f"pygraphviz cannot be imported: {error}") from error
    with _captured_stderr() as messages:
        try:
            graph = pygraphviz.AGraph(string=source)
            return graph.draw(format=fmt, prog="dot")
        except Exception as error:
            detail = messages().strip()
            raise RenderError(f"pygraphviz failed to render {fmt}: {error}"
                              + (f"\nGraphviz said: {detail}" if detail else "")) from error


@contextlib.contextmanager
def _captured_stderr() -> Iterator[Callable[[], str]]:
    """Collect what in-process Graphviz writes to file descriptor 2.

    The wheel's fontconfig complains about the system's newer font configuration on
    every call ("unknown element reset-dirs"): harmless, but noise in a notebook.
    Messages are kept for the error raised when a render really fails.
    """
    try:
        saved = os.dup(2)
    except OSError:  # no usable stderr (some embedded interpreters): nothing to hide
        yield lambda: ""
        return
    with tempfile.TemporaryFile(mode="w+b") as sink:
        os.dup2(sink.fileno(), 2)
        try:
            yield lambda: (sink.seek(0), sink.read().decode(errors="replace"))[1]
        finally:
            os.dup2(saved, 2)
            os.close(saved)


_ENGINES: dict[str, Callable[[str, str], bytes]] = {
    "dot": _pipe_dot,
    "pygraphviz": _pipe_pygraphviz,
}


def available_backends() -> list[str]:
    """The engines of the chain that can run here, in the order they are tried."""
    found = []
    if dot_program() is not None:
        found.append("dot")
    try:
        import pygraphviz  # noqa: F401
        found.append("pygraphviz")
    except Exception:
        pass
    return found


def pipe(source: str, fmt: str = "svg", backend: str | None = None) -> bytes:
    """Render DOT ``source`` to ``fmt`` bytes with the first engine that works.

    ``backend`` forces one engine ("dot" or "pygraphviz"); a forced engine that is
    missing raises :class:`GraphvizUnavailable` instead of trying the other one.
    """
    fmt = check_format(fmt)
    if backend in (None, "auto"):
        names = list(BACKENDS)
    elif backend in _ENGINES:
        names = [backend]
    else:
        raise ValueError(f"unknown backend {backend!r}; use one of {', '.join(BACKENDS)} or None")
    reasons, failures = [], []
    for name in names:
        try:
            return _ENGINES[name](source, fmt)
        except GraphvizUnavailable as missing:
            reasons.append(str(missing))
        except RenderError as failure:
            # e.g. a system `dot` built without the png plugin: the next engine may work
            failures.append(failure)
    if failures:
        raise failures[0]
    raise GraphvizUnavailable(
        "cannot render the drawing: no Graphviz engine is available ("
        + "; ".join(reasons) + ").\n" + INSTALL_HINT)
