"""ONNX export of static graphs, in one package above :mod:`naivegraph.static`.

:mod:`~naivegraph.export.onnx_map` says, for every op of the op table, which standard
ONNX operators spell it (or why none can); :mod:`~naivegraph.export.exporter` walks a
static graph and writes the model.  Static mode, below this package, cannot import it:
the exporter is installed as ``ns.to_onnx`` here, and ``import naivegraph`` imports
this package.  ``onnx`` itself is imported only when a model is written, so
``import naivegraph`` still needs numpy alone.

``python -m naivegraph.export`` prints ``docs/onnx_ops.md``, the map as a table.

>>> import naivegraph.static as ns
>>> from naivegraph.export import to_onnx
>>> ns.to_onnx is to_onnx
True
"""

from .. import static as _static
from .exporter import DEFAULT_OPSET, output_name, to_onnx
from .onnx_map import NOT_EXPORTABLE, ONNX_MAP, NotExportable, markdown_table

# ``ns.to_onnx``: static mode cannot import its exporter, which sits above it; the public
# name is installed here, and ``import naivegraph`` imports this package (numpy only).
_static.to_onnx = to_onnx  # type: ignore[attr-defined]  # a name static mode lists, set from above

__all__ = [
    "DEFAULT_OPSET",
    "NOT_EXPORTABLE",
    "ONNX_MAP",
    "NotExportable",
    "markdown_table",
    "output_name",
    "to_onnx",
]
