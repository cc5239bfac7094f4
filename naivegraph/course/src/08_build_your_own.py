# %% [markdown]
# # Lesson 8: Build your own graph engine
#
# The core of a graph engine fits in a page of Python. In this lesson you write that
# core for a **scalar** engine, in two styles:
#
# 1. a **static** one: building records nodes, `forward()` computes values later, and
#    *you* write the backward sweep over the node list;
# 2. a **dynamic** one, PyTorch style: values at once; *you* write `backward` (a
#    topological order, then gradients accumulated along every path) and the freeing
#    of the graph after it.
#
# Given to you: the node classes, how ops build nodes, and forward. Both engines share
# one table of `(function, derivative)` pairs, whose missing rows you fill in first.
# Then you use your engine for a Jacobian and for gradient descent, and draw a graph it
# built. No naivegraph inside: plain Python and `math`.
#
# Every demonstration runs on **your** functions once their exercise passes its check;
# until then the lab's own versions stand in for them, so the notebook always runs
# through. They are not in your namespace: `ex.yours_or_labs` runs yours or the lab's
# inside the call. The checks look for answers that call the lab's versions or another
# library's autodiff, and refuse those they see.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## One table of (function, derivative)
#
# Each op is a row: a function computing the value from the input values, and a
# derivative `d(*args, i)` giving the partial derivative with respect to argument
# `i`. Unary and binary ops both use it.
#
# ### Exercise 08-1: fill in four rows
#
# `mul`, `div`, `sin` and `exp` are missing: above the table, write each one's function
# (`f_mul`) and its derivative (`d_mul`), as the other rows are written. The checker
# compares every derivative with the exact one: write each as the formula you get by
# differentiating the op, not as a finite-difference estimate.

# %% exercise="08-1"
# Exercise 08-1
import math

# the four missing rows: each op's function, then its derivative d(*args, i)
### BEGIN SOLUTION
f_mul = lambda a, b: a * b
d_mul = lambda a, b, i: b if i == 0 else a
f_div = lambda a, b: a / b
d_div = lambda a, b, i: 1 / b if i == 0 else -a / b ** 2
f_sin = lambda a: math.sin(a)
d_sin = lambda a, i: math.cos(a)
f_exp = lambda a: math.exp(a)
d_exp = lambda a, i: math.exp(a)
### END SOLUTION

TABLE = {
    "add": (lambda a, b: a + b, lambda a, b, i: 1.0),
    "sub": (lambda a, b: a - b, lambda a, b, i: 1.0 if i == 0 else -1.0),
    "mul": (f_mul, d_mul),
    "div": (f_div, d_div),
    "pow": (lambda a, b: a ** b,
            lambda a, b, i: b * a ** (b - 1) if i == 0 else a ** b * math.log(a)),
    "sin": (f_sin, d_sin),
    "cos": (lambda a: math.cos(a), lambda a, i: -math.sin(a)),
    "exp": (f_exp, d_exp),
    "log": (lambda a: math.log(a), lambda a, i: 1 / a),
}
ex.check_derivative_table(TABLE)

# %% [markdown]
# The engine below uses your table once 08-1 passes, the lab's complete one until
# then (`ex.engine_table`). `ex.yours_or_labs(exercise, name, ...)` makes the same
# choice for each function you write: it calls yours once its exercise passes, the
# lab's until then. Set `use_reference = True` and re-run the cells to compare your
# engine with the lab's.

# %%
import math

from naivegraph.lessons import plots

use_reference = False

OPS = ex.engine_table(TABLE, lab=use_reference)


def whose(*exercises):
    waiting = [e for e in exercises if not ex.solved(e)]
    if use_reference:
        return "(running on the lab's reference engine: use_reference is True)"
    if waiting:
        verb = "passes" if len(waiting) == 1 else "pass"
        return f"(the lab's versions stand in until {' and '.join(waiting)} {verb})"
    return "(running on your engine)"


def engine_owner(*exercises):
    """Whose engine the drawings below ran on: yours once every exercise passes."""
    if use_reference or not all(ex.solved(e) for e in exercises):
        return "the lab's engine"
    return "your engine"

print("table:", "yours" if OPS is TABLE else "the lab's")


# %% [markdown]
# ## A static engine: build, then run
#
# A node records its op and its inputs. Building computes nothing: `c = a + b` has no
# value until `forward()` walks the nodes in creation order (a node can only use
# nodes that already exist, so creation order is a topological order).
#
# A node also knows whether it **needs a gradient**: the leaves you create do, the
# constants that `x - 3` or `x ** 2` make do not, and an op's output does when any
# input does. The backward sweep must skip the others: in `(x - 3) ** 2` the
# derivative with respect to the exponent, $a^b \log a$, is not even defined at
# $a = -2$.

# %%
class StaticGraph:
    def __init__(self):
        self.nodes = []

    def forward(self):
        for n in self.nodes:
            if n.op is not None:
                n.value = OPS[n.op][0](*(i.value for i in n.inputs))

    def backward(self, loss):
        # your static_backward once 08-2 passes
        ex.yours_or_labs("08-2", "static_backward", self.nodes, loss, lab=use_reference)


class SNode:
    graph = StaticGraph()

    def __init__(self, value=None, op=None, inputs=(), needs_grad=True):
        self.value, self.op, self.inputs = value, op, tuple(inputs)
        self.needs_grad = needs_grad
        self.grad = None
        SNode.graph.nodes.append(self)

    def _apply(self, op, *others):
        others = [o if isinstance(o, SNode) else SNode(float(o), needs_grad=False)
                  for o in others]
        inputs = (self, *others)
        return SNode(op=op, inputs=inputs, needs_grad=any(i.needs_grad for i in inputs))

    __add__ = lambda self, o: self._apply("add", o)
    __sub__ = lambda self, o: self._apply("sub", o)
    __mul__ = lambda self, o: self._apply("mul", o)
    __truediv__ = lambda self, o: self._apply("div", o)
    __pow__ = lambda self, o: self._apply("pow", o)
    sin = lambda self: self._apply("sin")
    exp = lambda self: self._apply("exp")

a = SNode(1.0)
b = SNode(2.0)
c = a + b
print("before forward: c.value =", c.value)
SNode.graph.forward()
print("after forward:  c.value =", c.value)


# %% [markdown]
# ### Exercise 08-2: the static backward sweep
#
# Write `static_backward(nodes, loss)`. `nodes` lists every node in creation order;
# each node has `value`, `op` (None for a leaf or constant), `inputs`, `needs_grad`
# and `grad`. Afterwards every node's `grad` must hold d loss / d node:
#
# * start every grad from zero (the graph runs again and again), the loss's from 1;
# * visit the nodes so that a node's grad is complete before it is passed on;
# * each input that needs a gradient receives `node.grad * derivative(*input values, k)`,
#   **added** to what it already has (a node used twice gets two contributions).
#
# The checker runs it on graphs of its own.

# %% exercise="08-2"
# Exercise 08-2
def static_backward(nodes, loss):
    ### BEGIN SOLUTION
    for n in nodes:
        n.grad = 0.0
    loss.grad = 1.0
    for n in reversed(nodes):
        if n.op is None:
            continue
        args = [i.value for i in n.inputs]
        for k, inp in enumerate(n.inputs):
            if inp.needs_grad:
                inp.grad += n.grad * OPS[n.op][1](*args, k)
    ### END SOLUTION

ex.check_static_backward(static_backward)

# %% [markdown]
# Your sweep at work: one graph, built once, run with new inputs (a static graph's
# whole point), and a constant exponent that must get no gradient.

# %%
print(whose("08-2"))
SNode.graph = StaticGraph()
x, y = SNode(1.0), SNode(2.0)
f_node = x * y + x.sin() * y.exp()  # f(x, y) as a node (the name f is 08-6's function)
for x0 in (1.0, 2.0):            # build once, run with new inputs
    x.value = x0
    SNode.graph.forward()
    SNode.graph.backward(f_node)
    print(f"x={x0}: f={f_node.value:.4f}  df/dx={x.grad:.4f}  df/dy={y.grad:.4f}")

SNode.graph = StaticGraph()
x = SNode(1.0)
g = (x - 3) ** 2                 # the constant exponent needs no gradient
SNode.graph.forward()
SNode.graph.backward(g)
print("d (x - 3)**2 / dx at x = 1:", x.grad)


# %% [markdown]
# ## A dynamic engine: compute at once, free after backward
#
# Now a single `Node` class, PyTorch style:
#
# * an op computes its value **immediately**;
# * its output requires grad if any input does, and only then is it linked into the
#   graph: `grad_fn` names the op, `inputs` are its input nodes and `saved` the input
#   values backward will need (an op output that needs no gradient is never linked
#   for backward: it gets no `grad_fn`, though a constant still appears among the
#   `inputs` of the op that uses it);
# * a leaf is a node without `grad_fn`; its `.grad` accumulates.
#
# `Node.backward` calls two functions you write: `run_backward(root)` computes the
# gradients, and `free_graph(order)` frees the graph afterwards unless
# `retain_graph=True`.

# %%
class Node:
    def __init__(self, value, requires_grad=False):
        self.value = float(value)
        self.requires_grad = requires_grad
        self.grad = 0.0 if requires_grad else None
        self.grad_fn = None        # the op's name, for computed nodes
        self.inputs = ()           # the nodes it was computed from
        self.saved = None          # their values, kept for backward

    def __repr__(self):
        return f"Node({self.value:.4f}, grad={self.grad})"

    @property
    def is_leaf(self):
        return self.grad_fn is None

    # one frame for unary and binary ops, sharing the OPS table
    @staticmethod
    def frame(op, *inputs):
        inputs = [i if isinstance(i, Node) else Node(i) for i in inputs]
        values = tuple(i.value for i in inputs)
        out = Node(OPS[op][0](*values), requires_grad=any(i.requires_grad for i in inputs))
        if out.requires_grad:
            out.grad_fn, out.inputs, out.saved = op, tuple(inputs), values
        return out

    __add__ = lambda self, o: Node.frame("add", self, o)
    __radd__ = lambda self, o: Node.frame("add", o, self)
    __sub__ = lambda self, o: Node.frame("sub", self, o)
    __mul__ = lambda self, o: Node.frame("mul", self, o)
    __rmul__ = lambda self, o: Node.frame("mul", o, self)
    __truediv__ = lambda self, o: Node.frame("div", self, o)
    __pow__ = lambda self, o: Node.frame("pow", self, o)
    sin = lambda self: Node.frame("sin", self)
    cos = lambda self: Node.frame("cos", self)
    exp = lambda self: Node.frame("exp", self)

    def backward(self, retain_graph=False):
        if not self.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does "
                               "not have a grad_fn")
        # your run_backward and free_graph once 08-3 and 08-4 pass
        order = ex.yours_or_labs("08-3", "run_backward", self, lab=use_reference)
        if not retain_graph:
            ex.yours_or_labs("08-4", "free_graph", order, lab=use_reference)


# %% [markdown]
# ### Exercise 08-3: `run_backward`
#
# 1. **Order**: list every node that requires grad, reachable from `root` through
#    `inputs`, each node *after* its inputs (a depth-first search that appends a node
#    once its inputs are done, visiting each node once). Walking this list backwards
#    visits every node after all the nodes that use it.
# 2. **Accumulate**: `root` gets gradient 1. Walking backwards, a leaf adds what
#    reached it to its `.grad`; any other node hands each input that requires grad
#    `g * OPS[node.grad_fn][1](*node.saved, k)`, added to what that input already
#    got along other paths.
# 3. A node whose `saved` is `None` was freed by an earlier backward: raise
#    `RuntimeError` saying so.
#
# Return the order (`Node.backward` frees exactly those nodes).

# %% exercise="08-3"
# Exercise 08-3
def run_backward(root):
    order, seen = [], set()
    ### BEGIN SOLUTION
    def visit(node):
        if id(node) in seen:
            return
        seen.add(id(node))
        for inp in node.inputs:
            if inp.requires_grad:
                visit(inp)
        order.append(node)
    visit(root)
    ### END SOLUTION
    grads = {id(root): 1.0}
    for node in reversed(order):
        ### BEGIN SOLUTION
        g = grads.pop(id(node), 0.0)
        if node.is_leaf:
            node.grad += g
            continue
        if node.saved is None:
            raise RuntimeError("Trying to backward through the graph a second time; "
                               "pass retain_graph=True to the first backward.")
        d = OPS[node.grad_fn][1]
        for k, inp in enumerate(node.inputs):
            if inp.requires_grad:
                grads[id(inp)] = grads.get(id(inp), 0.0) + g * d(*node.saved, k)
        ### END SOLUTION
    return order

ex.check_run_backward(run_backward)


# %% [markdown]
# ### Exercise 08-4: freeing the graph
#
# After a backward without `retain_graph=True`, PyTorch frees what the graph saved for
# backward. Write `free_graph(order)`: drop the saved values of every non-leaf node of
# `order`. Keep everything else: the leaves are yours, and a computed node must stay a
# computed node, so that a second backward reaches it and refuses (your
# `run_backward` raises there) instead of stopping at it as if it were a leaf.

# %% exercise="08-4"
# Exercise 08-4
def free_graph(order):
    ### BEGIN SOLUTION
    for node in order:
        if not node.is_leaf:
            node.saved = None
    ### END SOLUTION

ex.check_free_graph(free_graph)

# %% [markdown]
# `Node.backward` now runs your `run_backward` and `free_graph`: values at once,
# gradients after `backward()`, and a second `backward()` refused because the first
# one freed what it saved.

# %%
print(whose("08-3", "08-4"))
a = Node(1.0, requires_grad=True)
b = Node(2.0, requires_grad=True)
c = a + b
print("c.value at once:", c.value)
c.backward()
print("a.grad, b.grad:", a.grad, b.grad, "  c.is_leaf after freeing:", c.is_leaf)
try:
    c.backward()
except RuntimeError as err:
    print("RuntimeError:", err)

# %%
x = Node(3.0, requires_grad=True)
y = x ** 2
y.backward(retain_graph=True)
y.backward()
print("two backwards with retain_graph:", x.grad, "(accumulated: 6 + 6)")

x = Node(1.0, requires_grad=True)
((x - 3) ** 2).backward()
print("d (x - 3)**2 / dx at x = 1:", x.grad)

# %% [markdown]
# ## Your graph, drawn
#
# The lab's renderer draws any graph it can read. `plots.scalar_graph` reads your
# nodes exactly as your engine left them (`value`, `grad_fn`, `inputs`,
# `requires_grad`), rebuilds them as a static graph and draws it: the leaves you made
# (green), the constants the ops made (grey), one node per op, and the output
# (orange). The graph below was built, differentiated and freed by your engine (by
# the lab's until 08-3 and 08-4 pass; the title says which); freeing kept its
# structure, so it still draws.

# %%
x, y = Node(1.0, requires_grad=True), Node(2.0, requires_grad=True)
out = x * y + x.sin() * (y - 1).exp()
out.backward()
print(whose("08-3", "08-4"))
print(f"out = {out.value:.4f}   d out/dx = {x.grad:.4f}   d out/dy = {y.grad:.4f}")
plots.scalar_graph(out, {"x": x, "y": y},
                   title=f"x·y + sin(x)·exp(y - 1), as {engine_owner('08-3', '08-4')} built it")


# %% [markdown]
# ## A Jacobian, one backward per output
#
# For $F(x, y) = (xy,\; x + \sin y,\; e^x y)$ each row of the Jacobian is the
# gradient of one output: build the graph with fresh leaves, run backward on that
# output, read the leaves' grads.
#
# ### Exercise 08-5
# Write `jacobian(F, x0, y0)`: the Jacobian of any `F` (a function of two `Node`s
# returning a list of outputs) at $(x_0, y_0)$, one row per output, computed with the
# `Node` engine. The checker calls it with other functions and points.

# %% exercise="08-5"
# Exercise 08-5
def F(x, y):
    return [x * y, x + y.sin(), x.exp() * y]

def jacobian(F, x0, y0):
    J = []
    ### BEGIN SOLUTION
    for k in range(len(F(Node(x0), Node(y0)))):
        x, y = Node(x0, requires_grad=True), Node(y0, requires_grad=True)
        F(x, y)[k].backward()
        J.append([x.grad, y.grad])
    ### END SOLUTION
    return J

ex.check_jacobian(jacobian)

# %% [markdown]
# Your `jacobian`, on your engine, at $(1, 2)$:

# %%
print(whose("08-3", "08-5"))
J = ex.yours_or_labs("08-5", "jacobian", F, 1.0, 2.0, lab=use_reference)
plots.jacobian_heatmap(np.array(J), ["x·y", "x + sin y", "eˣ·y"], ["x", "y"],
                       title="Jacobian at (x, y) = (1, 2)")


# %% [markdown]
# ## Gradient descent
#
# Minimise $f(x, y) = (x-1)^2 + 2(y+2)^2 + xy/2$: repeat "build $f$, backward,
# step against the gradient". The parameters are leaves; a new graph is built every
# step and freed by backward.
#
# ### Exercise 08-6
# Write `gradient_descent(f, x0, y0, lr, steps)` for any `f` of two `Node`s: each
# step zeroes the grads, builds `f`, runs backward and moves both leaves against their
# gradients. Return where it ends as `(x, y)` numbers. The checker runs it on a
# function of its own.

# %% exercise="08-6"
# Exercise 08-6
def f(x, y):
    return (x - 1) ** 2 + 2 * (y + 2) ** 2 + x * y / 2

def gradient_descent(f, x0, y0, lr=0.1, steps=200):
    x = Node(x0, requires_grad=True)
    y = Node(y0, requires_grad=True)
    ### BEGIN SOLUTION
    for step in range(steps):
        x.grad = y.grad = 0.0
        f(x, y).backward()
        x.value -= lr * x.grad
        y.value -= lr * y.grad
    ### END SOLUTION
    ### BEGIN SOLUTION
    point = x.value, y.value
    ### END SOLUTION
    return point

ex.check_gradient_descent(gradient_descent)

# %% [markdown]
# Your `gradient_descent` from $(-2, 2)$, stopped after 0, 1, ..., 40 steps: the path
# it takes.

# %%
print(whose("08-3", "08-6"))
path = [ex.yours_or_labs("08-6", "gradient_descent", f, -2.0, 2.0, 0.1, steps,
                         lab=use_reference) for steps in range(41)]

fxy = lambda X, Y: (X - 1) ** 2 + 2 * (Y + 2) ** 2 + X * Y / 2
plots.gradient_descent_contour(fxy, path, xlim=(-3, 3), ylim=(-4, 3),
                               minimum=np.linalg.solve([[2, 0.5], [0.5, 4]], [2, -8]),
                               title=f"Gradient descent with {engine_owner('08-3', '08-6')}")

# %% [markdown]
# ## Summary
#
# * One table of (function, derivative) drives forward and backward in both engines.
# * Static: build everything, then `forward()` and your backward sweep walk the node
#   list; the graph is reused with new inputs, so grads restart from zero each run.
# * Dynamic: values on construction, only nodes that need gradients are linked; your
#   `run_backward` orders the graph topologically and accumulates along every path;
#   freeing drops the saved values but keeps the structure, so a second backward
#   is refused instead of silently stopping early.
# * Gradients flow only to inputs that need them: constants never get one.
# * naivegraph is this idea with numpy arrays, broadcasting and many more ops.
#
# ## Further reading
#
# * Andrej Karpathy, *micrograd*: a scalar autograd engine and a small neural-network
#   library in about 150 lines, the same design as the `Node` engine here.
# * *Dive into Deep Learning* (d2l.ai), "Automatic Differentiation" and the
#   "Backpropagation" section of "Multilayer Perceptrons".
# * CMU 10-414/714 *Deep Learning Systems* (dlsys.cs.cmu.edu): lectures on automatic
#   differentiation and on building the "needle" framework, static and dynamic.
