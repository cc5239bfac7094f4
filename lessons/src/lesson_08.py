from build import code, exercise, md

NAME = "08_build_your_own"
TITLE = "Lesson 8: Build your own graph engine"
INTRO = """
Everything so far fits in a page of Python. In this lesson you build a **scalar**
graph engine from scratch, twice:

1. a **static** one: building records nodes, `forward()` computes values later;
2. a **dynamic** one, PyTorch style: values at once, `backward()` destroys the
   non-leaf part of the graph unless `retain_graph=True`.

Both share one table of `(function, derivative)` pairs. Then you use the engine for a
Jacobian and for gradient descent. No naivegraph inside: plain Python and `math`.
"""

CELLS = [
    md("""
    ## One table of (function, derivative)

    Each op is a row: a function computing the value from the input values, and a
    derivative `d(*args, i)` giving the partial derivative with respect to argument
    `i`. Unary and binary ops both use it.

    ### Exercise 08-1: fill in four rows

    `mul`, `div`, `sin` and `exp` are missing. The checker compares every derivative
    with finite differences.
    """),
    exercise("08-1", """
    # Exercise 08-1
    import math

    TABLE = {
        "add": (lambda a, b: a + b, lambda a, b, i: 1.0),
        "sub": (lambda a, b: a - b, lambda a, b, i: 1.0 if i == 0 else -1.0),
        "mul": («lambda a, b: a * b», «lambda a, b, i: b if i == 0 else a»),
        "div": («lambda a, b: a / b», «lambda a, b, i: 1 / b if i == 0 else -a / b ** 2»),
        "pow": (lambda a, b: a ** b,
                lambda a, b, i: b * a ** (b - 1) if i == 0 else a ** b * math.log(a)),
        "sin": («lambda a: math.sin(a)», «lambda a, i: math.cos(a)»),
        "cos": (lambda a: math.cos(a), lambda a, i: -math.sin(a)),
        "exp": («lambda a: math.exp(a)», «lambda a, i: math.exp(a)»),
        "log": (lambda a: math.log(a), lambda a, i: 1 / a),
    }
    ex.check_derivative_table(TABLE)
    """),
    md("""
    The rest of the notebook uses a complete copy of the table (so it runs even before
    you finish the exercise).
    """),
    code("""
    import math

    OPS = {
        "add": (lambda a, b: a + b, lambda a, b, i: 1.0),
        "sub": (lambda a, b: a - b, lambda a, b, i: 1.0 if i == 0 else -1.0),
        "mul": (lambda a, b: a * b, lambda a, b, i: b if i == 0 else a),
        "div": (lambda a, b: a / b, lambda a, b, i: 1 / b if i == 0 else -a / b ** 2),
        "pow": (lambda a, b: a ** b,
                lambda a, b, i: b * a ** (b - 1) if i == 0 else a ** b * math.log(a)),
        "sin": (lambda a: math.sin(a), lambda a, i: math.cos(a)),
        "cos": (lambda a: math.cos(a), lambda a, i: -math.sin(a)),
        "exp": (lambda a: math.exp(a), lambda a, i: math.exp(a)),
        "log": (lambda a: math.log(a), lambda a, i: 1 / a),
    }
    """),
    md("""
    ## A static engine: build, then run

    A node records its op and inputs. Building computes nothing: `c = a + b` has no
    value until `forward()` walks the nodes in creation order (a node can only use
    nodes that already exist, so creation order is a topological order). `backward()`
    walks them in reverse, handing each input `grad * derivative`.
    """),
    code("""
    class StaticGraph:
        def __init__(self):
            self.nodes = []

        def forward(self):
            for n in self.nodes:
                if n.op is not None:
                    n.value = OPS[n.op][0](*(i.value for i in n.inputs))

        def backward(self, loss):
            for n in self.nodes:
                n.grad = 0.0
            loss.grad = 1.0
            for n in reversed(self.nodes):
                if n.op is None:
                    continue
                args = [i.value for i in n.inputs]
                for k, inp in enumerate(n.inputs):
                    inp.grad += n.grad * OPS[n.op][1](*args, k)


    class SNode:
        graph = StaticGraph()

        def __init__(self, value=None, op=None, inputs=(), name=None):
            self.value, self.op, self.inputs, self.name = value, op, tuple(inputs), name
            self.grad = None
            SNode.graph.nodes.append(self)

        def _apply(self, op, *others):
            others = [o if isinstance(o, SNode) else SNode(float(o)) for o in others]
            return SNode(op=op, inputs=(self, *others))

        __add__ = lambda self, o: self._apply("add", o)
        __sub__ = lambda self, o: self._apply("sub", o)
        __mul__ = lambda self, o: self._apply("mul", o)
        __truediv__ = lambda self, o: self._apply("div", o)
        __pow__ = lambda self, o: self._apply("pow", o)
        sin = lambda self: self._apply("sin")
        exp = lambda self: self._apply("exp")

    a = SNode(1.0, name="a")
    b = SNode(2.0, name="b")
    c = a + b
    print("before forward: c.value =", c.value)
    SNode.graph.forward()
    print("after forward:  c.value =", c.value)
    """),
    code("""
    SNode.graph = StaticGraph()
    x, y = SNode(1.0), SNode(2.0)
    f = x * y + x.sin() * y.exp()
    for x0 in (1.0, 2.0):            # build once, run with new inputs
        x.value = x0
        SNode.graph.forward()
        SNode.graph.backward(f)
        print(f"x={x0}: f={f.value:.4f}  df/dx={x.grad:.4f}  df/dy={y.grad:.4f}")
    """),
    md("""
    ## A dynamic engine: compute at once, destroy after backward

    Now a single `Node` class with `value`, `requires_grad`, `grad` and `grad_fn`:

    * an op computes its value **immediately**;
    * its output requires grad if any input does, and only then is it linked into
      the graph (a node that needs no gradient never enters it);
    * `backward()` visits nodes in reverse topological order, then **destroys** the
      non-leaf part of the graph (unlinks it) unless `retain_graph=True`.
    """),
    code("""
    class Node:
        def __init__(self, value, requires_grad=False):
            self.value = float(value)
            self.requires_grad = requires_grad
            self.grad = 0.0 if requires_grad else None
            self.grad_fn = None        # (op name, input nodes) for computed nodes
            self.freed = False

        def __repr__(self):
            return f"Node({self.value:.4f}, grad={self.grad})"

        @property
        def is_leaf(self):
            return self.grad_fn is None

        # one frame for unary and binary ops, sharing the OPS table
        @staticmethod
        def frame(op, *inputs):
            inputs = [i if isinstance(i, Node) else Node(i) for i in inputs]
            fn, _ = OPS[op]
            out = Node(fn(*(i.value for i in inputs)),
                       requires_grad=any(i.requires_grad for i in inputs))
            if out.requires_grad:
                out.grad_fn = (op, inputs)
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
            if self.freed:
                raise RuntimeError("Trying to backward through the graph a second time; "
                                   "pass retain_graph=True to the first backward.")
            if not self.requires_grad:
                raise RuntimeError("this node does not require grad and has no grad_fn")
            order, seen = [], set()
            stack = [(self, False)]
            while stack:                     # iterative DFS: post-order = topological
                node, done = stack.pop()
                if done:
                    order.append(node)
                    continue
                if id(node) in seen:
                    continue
                seen.add(id(node))
                stack.append((node, True))
                if node.grad_fn is not None:
                    stack.extend((i, False) for i in node.grad_fn[1] if i.requires_grad)
            grads = {id(self): 1.0}
            for node in reversed(order):
                g = grads.pop(id(node), 0.0)
                if node.is_leaf:
                    node.grad += g           # leaves accumulate, like AccumulateGrad
                    continue
                op, inputs = node.grad_fn
                d = OPS[op][1]
                args = [i.value for i in inputs]
                for k, inp in enumerate(inputs):
                    if inp.requires_grad:
                        grads[id(inp)] = grads.get(id(inp), 0.0) + g * d(*args, k)
            if not retain_graph:             # destroy the non-leaf part of the graph
                for node in order:
                    if not node.is_leaf:
                        node.grad_fn = None
                        node.freed = True

    a = Node(1.0, requires_grad=True)
    b = Node(2.0, requires_grad=True)
    c = a + b
    print("c.value at once:", c.value)
    c.backward()
    print("a.grad, b.grad:", a.grad, b.grad)
    try:
        c.backward()
    except RuntimeError as err:
        print("RuntimeError:", err)
    """),
    code("""
    x = Node(3.0, requires_grad=True)
    y = x ** 2
    y.backward(retain_graph=True)
    y.backward()
    print("two backwards with retain_graph:", x.grad, "(accumulated: 6 + 6)")
    """),
    md("""
    ## A Jacobian, one backward per output

    For $F(x, y) = (xy,\\; x + \\sin y,\\; e^x y)$ each row of the Jacobian is the
    gradient of one output: rebuild the graph (dynamic engine), reset the input grads,
    run backward, read the grads.

    ### Exercise 08-2
    Compute the 3x2 Jacobian at $(x, y) = (1, 2)$ with the `Node` engine.
    """),
    exercise("08-2", """
    # Exercise 08-2
    def F(x, y):
        return [x * y, x + y.sin(), x.exp() * y]

    J = «[]
    for k in range(3):
        x, y = Node(1.0, requires_grad=True), Node(2.0, requires_grad=True)
        F(x, y)[k].backward()
        J.append([x.grad, y.grad])»
    ex.check_jacobian(J)
    """),
    code("""
    from naivegraph.lessons import plots

    rows = []
    for k in range(3):
        x, y = Node(1.0, requires_grad=True), Node(2.0, requires_grad=True)
        [x * y, x + y.sin(), x.exp() * y][k].backward()
        rows.append([x.grad, y.grad])
    plots.jacobian_heatmap(np.array(rows), ["x·y", "x + sin y", "eˣ·y"], ["x", "y"],
                           title="Jacobian at (x, y) = (1, 2)")
    """),
    md("""
    ## Gradient descent

    Minimise $f(x, y) = (x-1)^2 + 2(y+2)^2 + xy/2$: repeat "build $f$, backward,
    step against the gradient". The parameters are leaves; a new graph is built every
    step and destroyed by backward.

    ### Exercise 08-3
    Complete `gradient_descent`: each step zeroes the grads, builds $f$, runs backward and
    moves both leaves against their gradients. Return where it ends.
    """),
    exercise("08-3", """
    # Exercise 08-3
    def f(x, y):
        return (x - 1) ** 2 + 2 * (y + 2) ** 2 + x * y / 2

    def gradient_descent(f, x0, y0, lr=0.1, steps=200):
        x = Node(x0, requires_grad=True)
        y = Node(y0, requires_grad=True)
        «for step in range(steps):
            x.grad = y.grad = 0.0
            f(x, y).backward()
            x.value -= lr * x.grad
            y.value -= lr * y.grad»
        return «(x.value, y.value)»

    ex.check_minimum(gradient_descent(f, -2.0, 2.0))
    """),
    code("""
    x, y = Node(-2.0, requires_grad=True), Node(2.0, requires_grad=True)
    path = [(x.value, y.value)]
    for step in range(40):
        x.grad = y.grad = 0.0
        ((x - 1) ** 2 + 2 * (y + 2) ** 2 + x * y / 2).backward()
        x.value -= 0.1 * x.grad
        y.value -= 0.1 * y.grad
        path.append((x.value, y.value))

    fxy = lambda X, Y: (X - 1) ** 2 + 2 * (Y + 2) ** 2 + X * Y / 2
    plots.gradient_descent_contour(fxy, path, xlim=(-3, 3), ylim=(-4, 3),
                                   minimum=np.linalg.solve([[2, 0.5], [0.5, 4]], [2, -8]),
                                   title="Gradient descent with the Node engine")
    """),
    md("""
    ## Summary

    * One table of (function, derivative) drives forward and backward in both engines.
    * Static: build everything, then `forward()` and `backward()` sweep the node list;
      the graph is reused with new inputs.
    * Dynamic: values on construction, only nodes that need gradients are linked, and
      backward destroys the non-leaf part unless `retain_graph=True`.
    * naivegraph is this idea with numpy arrays, broadcasting and many more ops.
    """),
]
