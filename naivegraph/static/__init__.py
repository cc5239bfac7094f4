"""Static mode: build a graph first, run it later (TensorFlow 1 / Theano style).

>>> import numpy as np
>>> import naivegraph.static as ns
>>> g = ns.Graph()
>>> with g:
...     x = ns.placeholder("input", shape=(2, 2))
...     w1 = ns.Variable(2.0, name="w1")
...     loss = ns.mean(x * w1)
>>> loss.value is None
True
>>> g.forward(input=np.ones((2, 2)))
>>> g.backward(loss)
>>> float(loss.value), float(w1.grad)
(2.0, 1.0)
"""

from . import optim, session
from .control_flow import cond, while_loop
from .executor import CompiledFunction, Plan
from .functions import *  # noqa: F403  (ns.exp, ns.where, ns.mse_loss, ...)
from .functions import __all__ as _function_names
from .gradients import gradients
from .graph import Graph, get_default_graph, reset_default_graph
from .jvp import jvp
from .nodes import (
    Constant,
    Node,
    Operation,
    Placeholder,
    Variable,
    assign,
    constant,
    expression,
    placeholder,
)
from .passes import (
    OptimizationReport,
    algebraic_simplification,
    common_subexpression_elimination,
    constant_folding,
    dead_node_elimination,
    elementwise_fusion,
    optimize,
)
from .saving import GraphFileError, load
from .trace import Traced, trace

# The public API: what ``from naivegraph.static import *`` gives and what the docs list.
# Submodules (the executor, the fast layer's fastbuild / fastgraph / fastrun) are not
# part of it: import them by their own module names.
__all__ = [
    # graphs and nodes
    "Graph",
    "get_default_graph",
    "reset_default_graph",
    "Node",
    "Operation",
    "Placeholder",
    "Variable",
    "Constant",
    "placeholder",
    "constant",
    "assign",
    "expression",
    # derivatives, control flow, tracing
    "gradients",
    "jvp",
    "cond",
    "while_loop",
    "trace",
    "Traced",
    # running: compiled functions and their plans, training
    "CompiledFunction",
    "Plan",
    "optim",
    "walkthrough",  # noqa: F405 -- set by naivegraph/__init__.py: it draws, and the renderer sits above
    # optimisation passes
    "optimize",
    "OptimizationReport",
    "algebraic_simplification",
    "common_subexpression_elimination",
    "constant_folding",
    "dead_node_elimination",
    "elementwise_fusion",
    # leaving the lab
    "to_onnx",  # noqa: F405 -- set by naivegraph.export, which sits above static mode
    "load",
    "GraphFileError",
    # the op functions shared with dynamic mode (ns.exp, ns.mse_loss, ...)
    *_function_names,
]
