"""The ``naivegraph`` command.

naivegraph tour              # the reference example in both modes, and every figure
naivegraph figures           # redraw the committed figures (make figures)
naivegraph render [NAME...]  # draw the built-in example graphs, or saved graph files
naivegraph export FILE       # export a graph file saved with g.save to ONNX
naivegraph check [LESSON]    # run a lesson of your working copy and report its exercises
naivegraph lessons           # open your working copy of the lessons in JupyterLab
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import tracemalloc
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from . import __version__, examples
from . import static as ns
from .export import to_onnx
from .lessons import workcopy
from .lessons.checking import TEACHER
from .lessons.notebooks import DamagedNotebook
from .lessons.teacher import write_nbgrader_course

# Relative to where the command runs: `make figures` runs at the repo root.
DEFAULT_FIGURES = Path("figures")


class CommandError(Exception):
    """A problem the user can fix: printed as one ``naivegraph: error:`` line, no traceback."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


#: Import name -> what to ``pip install`` for the packages the drawing commands use.
PACKAGES = {
    "graphviz": "graphviz",
    "pygraphviz": "pygraphviz",
    "matplotlib": "matplotlib",
    "PIL": "pillow",
}


def _require(*modules: str) -> None:
    """Fail before any work when a package a command needs cannot be imported."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as error:  # name the package that is really missing
            raise _missing_package((error.name or name).split(".")[0], error) from error


def _missing_package(name: str, error: Exception) -> CommandError:
    package = PACKAGES.get(name, name)
    return CommandError(
        f"this command needs the Python package {package!r}, which cannot be "
        f"imported ({error}); install it with `pip install {package}`",
        1,
    )


def _writable_folder(out: str) -> Path:
    """``--out`` as a folder that exists and accepts files, or a CommandError saying why not."""
    folder = Path(out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as error:
        reason = error.strerror or str(error)
        raise CommandError(
            f"cannot write into --out {out}: {reason}; pass --out with a folder you can write to"
        ) from error
    return folder


def _step(message: str, index: int, total: int) -> None:
    print(f"[{index}/{total}] {message}", flush=True)


# ------------------------------------------------------------------------- the example
def reference_dynamic(x: np.ndarray) -> dict:
    """The example in dynamic mode, forward and backward: loss and leaf gradients."""
    env = examples.reference_dynamic(x)
    env["loss"].backward()
    return {"loss": env["loss"].item(), **{w: env[w].grad.item() for w in ("w1", "w2", "w3")}}


def build_reference_static():
    """The same model as a static graph, compiled once: returns ``f(x) -> [loss, grads]``."""
    graph, loss, nodes = examples.reference_static()
    with graph:
        grads = ns.gradients(loss, [nodes["w1"], nodes["w2"], nodes["w3"]])
    return graph.compile(inputs=[nodes["input"]], outputs=[loss, *grads], optimize=True)


def _per_call(fn: Callable[[], object], repeats: int = 7, inner: int = 200) -> float:
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - start) / inner)
    return statistics.median(samples)


def _peak_bytes(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def tour_table(x: np.ndarray) -> tuple[list[tuple[str, str, str]], dict]:
    """Rows of (quantity, dynamic, static) for the reference example fed ``x``."""
    dynamic = reference_dynamic(x)
    compiled = build_reference_static()
    loss, g1, g2, g3 = (float(np.asarray(v)) for v in compiled(x))
    static = {"loss": loss, "w1": g1, "w2": g2, "w3": g3}
    t_dyn = _per_call(lambda: reference_dynamic(x))
    t_sta = _per_call(lambda: compiled(x))
    m_dyn = _peak_bytes(lambda: reference_dynamic(x))
    m_sta = _peak_bytes(lambda: compiled(x))
    rows = [("loss", f"{dynamic['loss']:g}", f"{static['loss']:g}")]
    rows += [(f"dloss/d{w}", f"{dynamic[w]:g}", f"{static[w]:g}") for w in ("w1", "w2", "w3")]
    rows += [
        (
            "time per forward+backward",
            f"{t_dyn * 1e6:.1f} us (rebuilt)",
            f"{t_sta * 1e6:.1f} us (compiled)",
        ),
        ("peak traced memory", f"{m_dyn / 1024:.1f} KiB", f"{m_sta / 1024:.1f} KiB"),
    ]
    return rows, {
        "dynamic": dynamic,
        "static": static,
        "time": (t_dyn, t_sta),
        "memory": (m_dyn, m_sta),
    }


def format_table(rows: Sequence[tuple[str, str, str]]) -> str:
    head = ("", "dynamic (eager)", "static (build, then run)")
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(3)]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()
    return "\n".join([line(head), "  ".join("-" * w for w in widths), *map(line, rows)])


# ------------------------------------------------------------------------- commands
def cmd_tour(args: argparse.Namespace) -> int:
    _require("graphviz", "matplotlib", "PIL")
    out = _writable_folder(args.out or str(workcopy.default_folder() / "tour"))
    total = 4
    print(
        "naivegraph tour: l1 = input*w1; l2 = l1 + w2; l3 = l1*w3; l4 = l2*l3; "
        "loss = mean(l4)\nwith input = ones(2, 2), w1 = 2, w2 = 3, w3 = 4.\n"
    )
    _step("running the example in both modes", 1, total)
    rows, _ = tour_table(np.ones((2, 2)))
    print(format_table(rows))
    print(
        "\nDynamic mode rebuilds the graph on every run and frees it after backward;\n"
        "static mode built it once, optimised it, and replays it.\n"
    )
    written = _write_figures(out, first_step=2, total=total)
    _print_written(written)
    return 0


def _write_figures(
    out: Path, first_step: int = 1, total: int = 3, course_out: Path | None = None
) -> list[Path]:
    """Every drawing, plot and animation, with a progress line per group; the animations'
    GIFs, which the lessons show, go to ``course_out`` when given."""
    _step(f"drawing the example graphs into {out}/", first_step, total)
    written = _render_examples(out, None)
    _step(f"plotting the lesson figures into {out}/", first_step + 1, total)
    written += _plot_figures(out)
    _step(f"animating a training step in both modes into {out}/", first_step + 2, total)
    written += _animations(out, course_out or out)
    return written


def _print_written(written: list[Path]) -> None:
    frames = [p for p in written if p.parent.name.startswith("animation_")]
    print(f"\nwrote {len(written)} files ({len(frames)} of them animation frames):")
    for path in written:
        if path not in frames:
            print(f"  {path}")


def _render_examples(out: Path, names) -> list[Path]:
    from .render.examples import render_examples  # needs graphviz

    return [Path(p) for p in render_examples(out, names=names)]


def _plot_figures(out: Path) -> list[Path]:
    from .lessons.plots import make_all_figures  # needs matplotlib

    return [Path(p) for p in make_all_figures(out)]


def _animations(out: Path, gifs: Path) -> list[Path]:
    from .render.animate import animate_dynamic_step, animate_static_runs  # needs pillow

    written = animate_dynamic_step(
        gifs / "animation_dynamic_step.gif", out / "animation_dynamic_step"
    )
    written += animate_static_runs(
        gifs / "animation_static_runs.gif", out / "animation_static_runs"
    )
    return [Path(p) for p in written]


def cmd_figures(args: argparse.Namespace) -> int:
    _require("graphviz", "matplotlib", "PIL")
    course_out = _writable_folder(args.course_out) if args.course_out else None
    _print_written(_write_figures(_writable_folder(args.out), course_out=course_out))
    return 0


def _example_names() -> tuple[str, ...]:
    from .render.examples import EXAMPLES  # needs graphviz

    return EXAMPLES


def cmd_render(args: argparse.Namespace) -> int:
    _require("graphviz")
    files = [name for name in args.names if os.path.isfile(name)]
    unknown = [name for name in args.names if name not in _example_names() and name not in files]
    missing = [name for name in unknown if _looks_like_a_path(name)]
    if missing:
        raise CommandError(
            f"file not found: {', '.join(missing)}; give the path of a graph file saved with g.save"
        )
    if unknown:
        raise CommandError(
            f"unknown example {', '.join(map(repr, unknown))}; choose from "
            f"{', '.join(_example_names())}, or give a graph file saved with g.save "
            f"(see `naivegraph render --help`)"
        )
    out = _writable_folder(args.out)
    for file in files:
        print(_render_saved_graph(file, out))
    examples = [name for name in args.names if name not in files]
    if examples or not files:
        for path in _render_examples(out, examples or None):
            print(path)
    return 0


def _listed(names: list[str], most: int = 40) -> str:
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return ", ".join(names[:most]) + more


def _looks_like_a_path(name: str) -> bool:
    """A name with a folder or a file suffix is a file, not an example's name."""
    return os.sep in name or "/" in name or Path(name).suffix != ""


def _load_graph(file: str) -> ns.Graph:
    try:
        return ns.load(file)
    except ns.GraphFileError as error:
        raise CommandError(str(error)) from None


def cmd_export(args: argparse.Namespace) -> int:
    graph = _load_graph(args.file)
    outputs = _names(args.outputs, "--outputs", graph) or _natural_outputs(graph)
    inputs = _names(args.inputs, "--inputs", graph) or None
    try:
        if inputs is None:  # every placeholder the outputs need, in the graph's order
            inputs = _placeholders_needed(graph, outputs)
        model = to_onnx(graph, inputs, outputs, path=args.onnx)
    except (KeyError, ValueError, TypeError, NotImplementedError) as error:
        raise CommandError(f"cannot export {args.file}: {error}") from None
    exported = ", ".join(o.name for o in model.graph.output)
    print(f"{args.onnx}: inputs {', '.join(inputs)}; outputs {exported}")
    return 0


def _names(given: str | None, option: str, graph: ns.Graph) -> list[str]:
    """The node names of ``--inputs`` / ``--outputs``, each checked against the graph."""
    if not given:
        return []
    names = [name.strip() for name in given.split(",")]
    if option == "--inputs":
        valid = [node.name for node in graph.placeholders]
    else:
        valid = [node.name for node in graph.nodes if node.kind != "placeholder"]
    unknown = [name for name in names if name not in valid]
    if unknown:
        raise CommandError(
            f"{option}: {graph.name} has no {'placeholder' if option == '--inputs' else 'node'} "
            f"named {', '.join(map(repr, unknown))}; its names: {_listed(valid)}"
        )
    return names


def _natural_outputs(graph: ns.Graph) -> list[str]:
    """The nodes nothing else uses.  An ONNX model has no state: an update (assign node)
    is exported as the new value it would store, an extra output."""
    outputs = []
    for node in graph.sinks():
        if node.kind != "operation" or node.op.name == "group":
            continue
        outputs.append(node.inputs[1].name if node.op.name == "assign" else node.name)
    return list(dict.fromkeys(outputs))


def _placeholders_needed(graph: ns.Graph, outputs: list[str]) -> list[str]:
    needed = ns.executor.ancestors([graph.resolve(o) for o in outputs])
    return [n.name for n in graph.placeholders if n in needed]


def _render_saved_graph(file: str, out: Path) -> str:
    """Draw a graph file written by ``g.save`` as ``<out>/<file name>.svg``."""
    from .render.examples import render  # needs graphviz

    graph = _load_graph(file)
    target = out / (Path(file).stem + ".svg")
    return render(graph).render(outfile=target)


def _working_folder(given: str | None) -> Path:
    """The learner's working copy: ``--dir`` when given, else the default one, which the
    first run fills with the course."""
    if given is not None:
        return Path(given)
    folder = workcopy.default_folder()
    _say(_prepared(folder), file=sys.stderr)  # stdout is the report (maybe JSON)
    return folder


def _prepared(folder: Path) -> list[str]:
    try:
        return workcopy.prepare(folder)
    except workcopy.WorkCopyError as error:
        raise CommandError(str(error)) from None


def _find_lesson(name: str | None, folder: Path) -> list[Path]:
    try:
        return workcopy.find(folder, name)
    except workcopy.WorkCopyError as error:
        raise CommandError(str(error)) from None


def _say(lines: list[str], file=None) -> None:
    for line in lines:
        print(line, file=file or sys.stdout, flush=True)


def cmd_check(args: argparse.Namespace) -> int:
    notebooks = _find_lesson(args.lesson, _working_folder(args.dir))
    if args.reveal or args.solutions:
        _refuse_in_a_student_copy(notebooks, "--reveal" if args.reveal else "--solutions")
    if args.reveal:
        return _reveal(notebooks)
    runs = ((path, _run_lesson(path, args.solutions)) for path in notebooks)  # one at a time
    return _report_json(runs) if args.json else _report_text(runs, len(notebooks))


def _refuse_in_a_student_copy(notebooks: list[Path], option: str) -> None:
    for path in notebooks:
        try:
            student = workcopy.is_student_copy(path)
        except ValueError:  # not JSON: reading it later says so, in one line
            continue
        if student:
            raise CommandError(
                f"{path.name} is a student copy: it has no solutions, so {option} cannot "
                f"show them ({TEACHER})"
            )


def _run_lesson(path: Path, solutions: bool):
    """Run one lesson notebook, every cell, errors included."""
    from .lessons.exercises import run_notebook  # needs nbclient

    return run_notebook(path, solutions=solutions, allow_errors=True)


#: An exercise's status in ``check --json``, from the outcome of its run.
JSON_STATUS = {"pass": "correct", "fail": "wrong", "todo": "not-done", "error": "error"}


def _report_text(runs, total: int) -> int:
    from .lessons.exercises import cell_errors

    symbols = {"pass": "✓", "fail": "✗", "todo": "○", "error": "✗"}
    counts = dict.fromkeys(symbols, 0)
    for i, (path, run) in enumerate(runs, 1):
        _step(f"running {path.name}", i, total)
        for outcome in run.results:
            counts[outcome.status] += 1
            print(f"    {symbols[outcome.status]} [{outcome.exercise}] {outcome.message}")
        for error in cell_errors(run.notebook):
            print(f"    ! {error}")
    print(
        f"\n{counts['pass']} correct, {counts['fail']} not yet right, "
        f"{counts['todo']} not done yet, {counts['error']} raised an error"
    )
    return 1 if counts["fail"] or counts["error"] else 0


def _report_json(runs) -> int:
    """One JSON object a lesson, one a line: its number and each exercise's outcome."""
    failed = False
    for path, run in runs:
        exercises = [
            {
                "id": outcome.exercise,
                "status": JSON_STATUS[outcome.status],
                "message": outcome.message,
                "line": outcome.line,
            }
            for outcome in run.results
        ]
        failed = failed or any(e["status"] in ("wrong", "error") for e in exercises)
        report = {"lesson": int(path.name[:2]), "exercises": exercises}
        print(json.dumps(report, ensure_ascii=False), flush=True)
    return 1 if failed else 0


def _reveal(notebooks: list[Path]) -> int:
    """Print each exercise's answer and its solution cell (no notebook runs)."""
    from .lessons.exercises import ANSWERS, read_notebook

    for path in notebooks:
        cells = read_notebook(path).cells
        print(path.stem)
        for cell in cells:
            meta = cell.get("metadata", {}).get("naivegraph", {})
            if "exercise" not in meta:
                continue
            exercise = meta["exercise"]
            print(f"\n  [{exercise}] {ANSWERS.get(exercise, '')}".rstrip())
            print(textwrap.indent(meta.get("solution", ""), "      "))
    return 0


def _jupyterlab() -> list[str] | None:
    """The command that starts JupyterLab: on PATH, beside this Python (an unactivated
    venv), or this Python's ``-m jupyterlab`` (installed without its scripts on PATH).

    Only ``jupyter-lab`` counts: the bare ``jupyter`` command comes with the notebook
    runner too and fails with "'lab' is not a Jupyter command" without JupyterLab.
    """
    beside = Path(sys.executable).with_name("jupyter-lab")
    program = shutil.which("jupyter-lab") or (str(beside) if beside.exists() else None)
    if program is not None:
        return [program]
    if importlib.util.find_spec("jupyterlab") is not None:
        return [sys.executable, "-m", "jupyterlab"]
    return None


def cmd_lessons(args: argparse.Namespace) -> int:
    if args.student is not None or args.nbgrader is not None:
        try:
            if args.student is not None:
                _say(workcopy.write_student_copy(Path(args.student)))
            if args.nbgrader is not None:
                _say(write_nbgrader_course(Path(args.nbgrader)))
        except workcopy.WorkCopyError as error:
            raise CommandError(str(error)) from None
        return 0
    if args.copy is not None:
        folder = Path(args.copy)
        _say(_prepared(folder) or [f"{folder} already holds every lesson; nothing copied"])
        print(f"open them with `naivegraph lessons --dir {folder}`")
        return 0
    folder = Path(args.dir) if args.dir is not None else workcopy.default_folder()
    if args.reset is not None:
        try:
            print(workcopy.reset(folder, args.reset))
        except workcopy.WorkCopyError as error:
            raise CommandError(str(error)) from None
        return 0
    _say(_prepared(folder))
    _find_lesson(None, folder)  # a folder JupyterLab would open empty fails here, not there
    command = _jupyterlab()
    if command is None:
        print(_no_jupyterlab(folder), file=sys.stderr)
        return 1
    # Containers and CI machines often run as root, which JupyterLab refuses by default.
    as_root = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
    return subprocess.call([*command, *as_root, *args.jupyter_args, str(folder)])


def _no_jupyterlab(folder: Path) -> str:
    """How to get JupyterLab: naivegraph's ``notebook`` extra, or the packages it names."""
    pip = Path(sys.executable).with_name("pip")
    packages = " ".join(f"'{r}'" for r in _extra("notebook")) or "jupyterlab ipykernel"
    return (
        "JupyterLab is not installed beside this naivegraph. Install naivegraph's notebook\n"
        f"extra: `{pip} install '.[notebook]'` in the naivegraph folder (`make lab` does it),\n"
        f"or its packages alone: `{pip} install {packages}`.\n"
        f"Then run `naivegraph lessons` again, or open the notebooks in {folder} with any "
        "Jupyter front end."
    )


def _extra(name: str) -> list[str]:
    """The requirements of one of naivegraph's extras, as its metadata lists them."""
    from importlib import metadata

    try:
        requirements = metadata.requires("naivegraph") or []
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return []
    marker = f'extra == "{name}"'
    return [r.split(";")[0].strip() for r in requirements if marker in r]


DESCRIPTION = """\
naivegraph, a teaching lab for computational graphs and reverse-mode autodiff.
Run naivegraph COMMAND --help for the options of one command."""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="naivegraph",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"naivegraph {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")
    tour = sub.add_parser("tour", help="the reference example in both modes, and every figure")
    tour.add_argument(
        "--out", help="folder for the figures (default: tour/ in your lessons working copy)"
    )
    tour.set_defaults(run=cmd_tour)
    figures = sub.add_parser("figures", help="redraw every figure (make figures)")
    figures.add_argument("--out", default=str(DEFAULT_FIGURES))
    figures.add_argument(
        "--course-out",
        metavar="DIR",
        help="folder for the animations the lessons show (default: --out)",
    )
    figures.set_defaults(run=cmd_figures)
    render = sub.add_parser(
        "render",
        help="draw the built-in example graphs, or graph files saved with g.save",
        epilog=f"examples: {_example_list()}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    render.add_argument(
        "names",
        nargs="*",
        metavar="NAME",
        help="examples to draw (default: all; listed below) or graph files (g.save)",
    )
    render.add_argument("--out", default=str(DEFAULT_FIGURES))
    render.set_defaults(run=cmd_render)
    export = sub.add_parser("export", help="export a graph file saved with g.save to ONNX")
    export.add_argument("file", help="a graph file written by g.save")
    export.add_argument("--onnx", required=True, metavar="OUT.onnx", help="where to write")
    export.add_argument("--inputs", help="placeholder names, comma-separated (default: all needed)")
    export.add_argument(
        "--outputs", help="node names, comma-separated (default: the nodes nothing else uses)"
    )
    export.set_defaults(run=cmd_export)
    check = sub.add_parser(
        "check", help="run a lesson of your working copy and report each exercise"
    )
    check.add_argument("lesson", nargs="?", help="lesson number or name (default: all)")
    _add_dir_option(check)
    check.add_argument(
        "--solutions", action="store_true", help="run with the reference solutions filled in"
    )
    shown = check.add_mutually_exclusive_group()
    shown.add_argument(
        "--reveal", action="store_true", help="print the answers instead of checking"
    )
    shown.add_argument(
        "--json",
        action="store_true",
        help='print {"lesson": N, "exercises": [{"id", "status", "message", "line"}]}, one '
        "line a lesson; status is correct, wrong, not-done or error; exit 1 if any is wrong "
        "or error",
    )
    check.set_defaults(run=cmd_check)
    lessons = sub.add_parser(
        "lessons",
        help="open your working copy of the lessons in JupyterLab",
        epilog="Arguments after -- go to jupyter-lab, e.g. "
        "naivegraph lessons -- --no-browser --port 8899",
    )
    _add_dir_option(lessons)
    lessons.add_argument(
        "--copy", metavar="DIR", help="write a working copy of the course into DIR and exit"
    )
    lessons.add_argument(
        "--student",
        metavar="DIR",
        help="write the course for students into DIR (no solutions, reveal off) and exit",
    )
    lessons.add_argument(
        "--nbgrader",
        metavar="DIR",
        help="write the course as nbgrader source assignments into DIR/source and exit",
    )
    lessons.add_argument(
        "--reset",
        metavar="N",
        help="put back lesson N as the course has it, keeping yours beside it, and exit",
    )
    lessons.add_argument("jupyter_args", nargs="*", help=argparse.SUPPRESS)
    lessons.set_defaults(run=cmd_lessons)
    return parser


def _add_dir_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--dir",
        "--lessons",
        dest="dir",
        metavar="DIR",
        help="your working copy of the lessons (default: work/ in a naivegraph checkout, "
        f"else ~/{workcopy.HOME_FOLDER}; the first run copies the course there)",
    )


def _example_list() -> str:
    try:
        return ", ".join(_example_names())
    except ImportError as error:  # the drawing packages are missing: say so in --help
        return f"(cannot list them: {error})"


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``naivegraph`` command; problems the user can fix print one line, no traceback.

    >>> main(["check", "--lessons", "/no/such/folder"])
    2
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except CommandError as error:
        return _fail(parser, str(error), error.status)
    except DamagedNotebook as error:  # a file that is no notebook: say how to get it back
        lesson = f"`naivegraph lessons --dir {error.path.parent} --reset {error.path.name[:2]}`"
        return _fail(parser, f"{error}; {lesson} puts the lesson back, keeping your file", 2)
    except ImportError as error:
        if (error.name or "").split(".")[0] == "naivegraph":
            raise  # a bug in naivegraph itself, not a missing package
        return _fail(parser, str(_missing_package((error.name or "?").split(".")[0], error)), 1)
    except OSError as error:  # a file vanished or filled the disk while the command ran
        where = f"{error.filename}: " if error.filename else ""
        return _fail(
            parser,
            f"{where}{error.strerror or error}; check the path, its permissions and the free space",
            1,
        )


def _fail(parser: argparse.ArgumentParser, message: str, status: int) -> int:
    print(f"{parser.prog}: error: {message}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
