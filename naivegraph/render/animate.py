"""Animations of one training step, in both modes (GIF plus the frames as PNG).

Dynamic mode (:func:`dynamic_step_frames`): the graph *grows* op by op while the
forward pass runs, gradients then flow back node by node (each frame is drawn from a
tensor hook, i.e. while backward is really running), the values the nodes saved are
freed, and only the leaves remain, updated by one SGD step.

Static mode (:func:`static_run_frames`): the graph is built once, with no values; then
on every run the values flow through the very same graph, node by node in execution
order.

Every frame is rendered to PNG through the engine chain (``dot`` or pygraphviz) and
the frames are assembled with Pillow.

>>> frames = dynamic_step_frames()            # the l1..l4 reference example
>>> len(frames) > 10 and frames[0].mode == "RGB"
True
"""

from __future__ import annotations

import html
import io
import os
from typing import Any, Callable, Sequence

import numpy as np
from PIL import Image

from ..dynamic.grad_mode import no_grad
from ..examples import REFERENCE_STEPS, Step, reference_leaves, reference_static
from .dot import Item, Sketch, emit, format_value
from .drawing import new_drawing
from .dynamic import _Context, backward_sketch, forward_sketch, names_from
from .static import _roots_within, add_graph


def reference_steps() -> tuple[dict, list[Step]]:
    """Leaves and forward steps of the reference example (loss 40; grads 28 / 8 / 10)."""
    return reference_leaves(), list(REFERENCE_STEPS)


# ----------------------------------------------------------------------------- frames


def to_image(drawing: Any, backend: str | None = None) -> Image.Image:
    """Render a drawing to PNG through the engine chain and open it with Pillow."""
    data = drawing.pipe("png", backend=backend)
    return Image.open(io.BytesIO(data)).convert("RGB")


def _frame(sketch: Sketch, title: str, backend: str | None, rankdir: str = "TB") -> Image.Image:
    drawing = new_drawing(title, rankdir, backend)
    emit(sketch, drawing, max_nodes=None, legend=True)
    return to_image(drawing, backend)


def _append_line(describe: Callable, line: str) -> Callable:
    """A describe function that adds ``line`` (bold red) under the original label."""

    def wrapped(item: Item) -> tuple[str, str]:
        label, tooltip = describe(item)
        extra = f'<br/><font point-size="10" color="#c62828"><b>{html.escape(line)}</b></font>'
        return label[:-1] + extra + ">", tooltip

    return wrapped


def _short(value: Any) -> str:
    array = np.asarray(getattr(value, "_data", value))
    text = format_value(array)
    if text is None:  # too big to print: a representative entry and the shape
        text = f"{np.ravel(array)[0]:.4g}… {tuple(array.shape)}"
    return text


# ----------------------------------------------------------------------------- dynamic


def dynamic_step_frames(
    leaves: dict | None = None,
    steps: Sequence[Step] | None = None,
    lr: float = 0.01,
    backend: str | None = None,
) -> list[Image.Image]:
    """Frames of one dynamic training step: grow, flow back, free, update.

    ``leaves`` maps names to leaf tensors; ``steps`` are ``(name, formula, fn)`` where
    ``fn(env)`` computes the tensor ``name`` from the tensors computed so far; the last
    step is the loss.  Default: the reference example of the notes.
    """
    if steps is None:
        leaves, steps = reference_steps()
    env = dict(leaves)
    frames = []
    computed = []
    for k, (name, formula, fn) in enumerate(steps, 1):
        env[name] = fn(env)
        computed.append(env[name])
        ctx = _Context(names_from(env), True, computed)
        sketch = Sketch()
        forward_sketch(sketch, computed[::-1], ctx)
        for item in sketch.items:  # only the newest result is "the output" in this frame
            if item.style == "output" and item.payload[0] is not env[name]:
                item.style = "tensor"
        frames.append(
            _frame(
                sketch,
                f"forward {k}/{len(steps)}: {formula}  (eager: computed and recorded at once)",
                backend,
            )
        )
    loss = env[steps[-1][0]]
    frames.extend(_backward_frames(env, loss, backend))
    names = names_from(env)
    ctx = _Context(names, True, [loss])
    sketch = Sketch()
    backward_sketch(sketch, [loss], ctx)
    frames.append(
        _frame(
            sketch,
            "after backward(): the saved values are freed (dotted); leaves keep .grad",
            backend,
        )
    )
    frames.append(_after_step_frame(env, leaves, lr, backend))
    return frames


def _backward_frames(env: dict, loss: Any, backend: str | None) -> list[Image.Image]:
    """One frame each time a gradient reaches a non-leaf tensor, drawn from its hook."""
    names = names_from(env)
    by_fn = {id(t.grad_fn): (n, t) for n, t in env.items() if getattr(t, "grad_fn", None)}
    done: dict[int, str] = {}
    frames: list[Image.Image] = []

    def draw(current_fn: Any, grad: Any) -> None:
        name = by_fn[id(current_fn)][0]
        done[id(current_fn)] = f"∂loss/∂{name} = {_short(grad)}"
        ctx = _Context(names, True, [loss])
        sketch = Sketch()
        backward_sketch(sketch, [loss], ctx)
        for item in sketch.items:
            if item.style not in ("grad_fn", "accumulate"):
                continue
            fn = item.payload[0]
            if fn is current_fn:
                item.style = "active"
            elif id(fn) not in done:
                item.style = "pending"
            if id(fn) in done:
                item.describe = _append_line(item.describe, done[id(fn)])
        frames.append(
            _frame(
                sketch,
                f"backward: the gradient reaches {name} ({current_fn.name()} runs next)",
                backend,
            )
        )

    handles = [
        t.register_hook(lambda g, fn=t.grad_fn: draw(fn, g))
        for n, t in env.items()
        if getattr(t, "grad_fn", None) is not None
    ]
    try:
        loss.backward()
    finally:
        for handle in handles:
            handle.remove()
    return frames


def _after_step_frame(env: dict, leaves: dict, lr: float, backend: str | None) -> Image.Image:
    with no_grad():
        for t in leaves.values():
            if t.requires_grad and t._grad is not None:
                t -= lr * t._grad
    ctx = _Context(names_from(leaves), True, [])
    sketch = Sketch()
    forward_sketch(sketch, list(leaves.values())[::-1], ctx)
    return _frame(
        sketch,
        f"optimizer step w ← w − {lr}·grad: only the leaves remain; "
        "the next forward builds a new graph",
        backend,
    )


# ----------------------------------------------------------------------------- static


def static_reference_graph() -> tuple[Any, Any, dict]:
    """The reference example built once as a static graph: ``(graph, loss, nodes)``."""
    return reference_static()


def static_run_frames(
    graph: Any = None, feeds: Sequence[dict] | None = None, backend: str | None = None
) -> list[Image.Image]:
    """Frames of a static graph: built once (no values), then values flowing on each run.

    ``feeds`` is one feed dict (placeholder name -> array) per run; by default the
    reference graph is run on ``ones``, ``2 * ones`` and ``3 * ones``.
    """
    if graph is None:
        graph, _, _ = static_reference_graph()
        feeds = [{"input": np.full((2, 2), float(r))} for r in (1, 2, 3)]
    order = list(graph.nodes)
    allowed = set(order)
    roots = _roots_within(order, allowed)[::-1]

    def sketch_with(known: set | None) -> Sketch:
        sketch = Sketch()
        add_graph(sketch, order, allowed, roots, show_values=known is not None)
        if known is not None:
            for item in sketch.items:
                node = item.payload[0]
                if node not in known:  # not computed yet in this run: hide its value
                    item.payload = (node, False)
                    if node.kind == "operation":
                        item.style = "pending"
        return sketch

    frames = [
        _frame(
            sketch_with(None), "static: the graph is built once; nothing is computed yet", backend
        )
    ]
    ops = [n for n in order if n.kind == "operation"]
    for run, feed in enumerate(feeds or [], 1):
        graph.forward(feed)
        leaves = {n for n in order if n.kind != "operation"}
        for k in range(len(ops) + 1):
            text = ", ".join(f"{name}={_short(v)}" for name, v in feed.items())
            frames.append(
                _frame(
                    sketch_with(leaves | set(ops[:k])),
                    f"run {run}: feed {text}; {k}/{len(ops)} ops computed (same graph, new values)",
                    backend,
                )
            )
    return frames


# ----------------------------------------------------------------------------- output


def pad_to_common_size(frames: Sequence[Image.Image]) -> list[Image.Image]:
    """Frames centred on white canvases of the largest width and height (GIFs need one size)."""
    width = max(f.width for f in frames)
    height = max(f.height for f in frames)
    padded = []
    for frame in frames:
        canvas = Image.new("RGB", (width, height), "white")
        canvas.paste(frame, ((width - frame.width) // 2, 0))
        padded.append(canvas)
    return padded


def save_animation(
    frames: Sequence[Image.Image],
    gif_path: str | os.PathLike,
    png_dir: str | os.PathLike | None = None,
    ms_per_frame: int = 1100,
    last_frame_ms: int = 3000,
) -> list[str]:
    """Write ``frames`` as a looping GIF (and as ``frame_000.png`` ... in ``png_dir``).

    Returns the paths written, the GIF first.
    """
    if not frames:
        raise ValueError("no frames to save")
    padded = pad_to_common_size(frames)
    gif_path = os.fspath(gif_path)
    os.makedirs(os.path.dirname(os.path.abspath(gif_path)), exist_ok=True)
    durations = [ms_per_frame] * (len(padded) - 1) + [last_frame_ms]
    padded[0].save(
        gif_path,
        save_all=True,
        append_images=padded[1:],
        duration=durations,
        loop=0,
        optimize=False,
    )
    written = [gif_path]
    if png_dir is not None:
        os.makedirs(png_dir, exist_ok=True)
        for i, frame in enumerate(frames):
            path = os.path.join(os.fspath(png_dir), f"frame_{i:03d}.png")
            frame.save(path)
            written.append(path)
    return written


def animate_dynamic_step(
    gif_path: str | os.PathLike,
    png_dir: str | os.PathLike | None = None,
    backend: str | None = None,
) -> list[str]:
    """GIF (and PNG frames) of one dynamic training step of the reference example."""
    return save_animation(dynamic_step_frames(backend=backend), gif_path, png_dir)


def animate_static_runs(
    gif_path: str | os.PathLike,
    png_dir: str | os.PathLike | None = None,
    backend: str | None = None,
) -> list[str]:
    """GIF (and PNG frames) of the static reference graph built once and run three times."""
    return save_animation(static_run_frames(backend=backend), gif_path, png_dir)
