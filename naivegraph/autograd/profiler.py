"""``ng.autograd.profiler``: where the time of a piece of dynamic-mode code goes, as
``torch.autograd.profiler.profile`` reports it (enough for the tutorials that use it).

While a ``profile`` is active, every op a tensor method or function dispatches (``aten::``
and the op's name, as torch names its kernels), every ``backward`` call and every
``record_function`` block is timed.  ``prof.key_averages().table(sort_by=...)`` prints one
row per name with torch's columns.  The numbers are this machine's timings of numpy, so
they are never torch's; the operators that the fast layer runs inline (``x + y`` of two
tensors) are not seen one by one.

>>> import naivegraph as ng
>>> from naivegraph.autograd.profiler import profile, record_function
>>> x = ng.ones(3, requires_grad=True)
>>> with profile() as prof:
...     with record_function("forward"):
...         y = x.exp().sum(0)
>>> sorted(e.key for e in prof.key_averages())
['aten::exp', 'aten::sum', 'forward']
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..dynamic import tensor as _tensor
from ..ops import core as _core


@dataclass
class FunctionEvent:
    """One timed call: its name, and its total and own ("self") time in microseconds."""

    name: str
    start_us: float
    end_us: float = 0.0
    children_us: float = 0.0

    @property
    def cpu_time_total(self) -> float:
        return self.end_us - self.start_us

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - self.children_us


@dataclass
class FunctionEventAvg:
    """The calls of one name, added up (a row of ``key_averages()``)."""

    key: str
    count: int = 0
    cpu_time_total: float = 0.0
    self_cpu_time_total: float = 0.0

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total / max(self.count, 1)

    def add(self, event: FunctionEvent) -> None:
        self.count += 1
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total


def _time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class EventList(list):
    """Events (or their averages) with torch's ``table`` and ``self_cpu_time_total``."""

    @property
    def self_cpu_time_total(self) -> float:
        return sum(e.self_cpu_time_total for e in self)

    def table(self, sort_by: str | None = None, row_limit: int = 100, **ignored) -> str:
        """The rows as torch prints them; ``sort_by`` names a column attribute such as
        ``"self_cpu_time_total"``, ``"cpu_time_total"`` or ``"count"`` (largest first);
        device columns (``"cuda_time_total"``, ...) sort by nothing here (CPU only)."""
        rows = list(self)
        key = (sort_by or "").replace("cpu_time_avg", "cpu_time")
        if rows and hasattr(rows[0], key):
            rows.sort(key=lambda e: getattr(e, key), reverse=True)
        if row_limit is not None and row_limit > 0:
            rows = rows[:row_limit]
        total_self = self.self_cpu_time_total or 1.0
        headers = [
            "Name",
            "Self CPU %",
            "Self CPU",
            "CPU total %",
            "CPU total",
            "CPU time avg",
            "# of Calls",
        ]
        width = max([len(headers[0]), *(len(e.key) for e in rows)])
        line = "-" * width + "  " + "  ".join("-" * 12 for _ in headers[1:]) + "  "
        text = [line, headers[0].rjust(width) + "  " + "  ".join(h.rjust(12) for h in headers[1:])]
        text.append(line)
        for e in rows:
            cells = [
                f"{100 * e.self_cpu_time_total / total_self:.2f}%",
                _time(e.self_cpu_time_total),
                f"{100 * e.cpu_time_total / total_self:.2f}%",
                _time(e.cpu_time_total),
                _time(e.cpu_time),
                str(e.count),
            ]
            text.append(e.key.rjust(width) + "  " + "  ".join(c.rjust(12) for c in cells) + "  ")
        text.append(line)
        text.append(f"Self CPU time total: {_time(self.self_cpu_time_total)}")
        return "\n".join(text) + "\n"

    def __str__(self) -> str:
        return self.table()


@dataclass
class _Recorder:
    events: list = field(default_factory=list)
    stack: list = field(default_factory=list)

    def begin(self, name: str) -> FunctionEvent:
        event = FunctionEvent(name, time.perf_counter() * 1e6)
        self.stack.append(event)
        return event

    def end(self, event: FunctionEvent) -> None:
        event.end_us = time.perf_counter() * 1e6
        self.stack.remove(event)
        if self.stack:
            self.stack[-1].children_us += event.cpu_time_total
        self.events.append(event)


_active: list[_Recorder] = []


def _timed(name: str, run, *args, **kwargs):
    if not _active:
        return run(*args, **kwargs)
    recorder = _active[-1]
    event = recorder.begin(name)
    try:
        return run(*args, **kwargs)
    finally:
        recorder.end(event)


class profile:
    """Time the dynamic-mode ops run inside ``with profile() as prof:``; then
    ``prof.key_averages().table(sort_by="self_cpu_time_total")``.  ``enabled=False``
    records nothing; the other arguments of torch's (``use_cuda``, ``record_shapes``,
    ``profile_memory``, ...) are accepted: naivegraph has the CPU only."""

    def __init__(self, enabled: bool = True, **options) -> None:
        self.enabled = enabled
        self._recorder = _Recorder()
        self._saved: dict = {}

    def __enter__(self) -> "profile":
        if self.enabled:
            if not _active:
                self._install()
            _active.append(self._recorder)
        return self

    def __exit__(self, *exc) -> None:
        if self.enabled:
            _active.remove(self._recorder)
            if not _active:
                self._uninstall()

    def _install(self) -> None:
        """Wrap the dynamic backend and the engine's backward while profiling."""
        apply, backward = _tensor.Tensor._ng_apply, _tensor.Tensor.backward
        # None: Tensor inherits backward (from TensorAutograd), to inherit it again after
        self._saved = {"apply": apply, "backward": vars(_tensor.Tensor).get("backward")}

        def timed_apply(op, args, attrs):
            return _timed(f"aten::{op.name}", apply, op, args, attrs)

        def timed_backward(self_, *args, **kwargs):
            return _timed("autograd::engine::evaluate_function", backward, self_, *args, **kwargs)

        _tensor.Tensor._ng_apply = staticmethod(timed_apply)
        _tensor.Tensor.backward = timed_backward
        _core._backend_by_type.clear()  # ops.call re-reads it (Parameter's too)

    def _uninstall(self) -> None:
        _tensor.Tensor._ng_apply = staticmethod(self._saved["apply"])
        if self._saved["backward"] is None:
            del _tensor.Tensor.backward
        else:
            _tensor.Tensor.backward = self._saved["backward"]
        _core._backend_by_type.clear()

    def events(self) -> EventList:
        """Every timed call, in the order they ended."""
        return EventList(self._recorder.events)

    function_events = property(events)

    def key_averages(self, group_by_input_shape: bool = False, **ignored) -> EventList:
        """One row per name: calls counted, times added up."""
        rows: dict[str, FunctionEventAvg] = {}
        for event in self._recorder.events:
            rows.setdefault(event.name, FunctionEventAvg(event.name)).add(event)
        return EventList(rows.values())

    def table(self, **kwargs) -> str:
        return self.key_averages().table(**kwargs)

    @property
    def self_cpu_time_total(self) -> float:
        return self.key_averages().self_cpu_time_total


class record_function:
    """Name a block of code in the profile (``with record_function("model_inference"):``)."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self._event: FunctionEvent | None = None

    def __enter__(self) -> "record_function":
        if _active:
            self._event = _active[-1].begin(self.name)
        return self

    def __exit__(self, *exc) -> None:
        if self._event is not None and _active:
            _active[-1].end(self._event)
        self._event = None


__all__ = ["EventList", "FunctionEvent", "FunctionEventAvg", "profile", "record_function"]
