# %% [markdown]
# # Lesson 12: Write your own op
#
# Every op you have used so far came from naivegraph's op table: a forward computation and
# a **vector-Jacobian product** (VJP) that turns the gradient of the output into the
# gradients of the inputs. In this lesson you write ops yourself:
#
# * a custom `ng.autograd.Function`, checked numerically with `gradcheck` (and seen
#   failing on a broken backward),
# * the backward of **broadcasting**: sum the gradient back to the input's shape,
# * the backward of **matrix multiplication**, where the shapes tell you the formula,
# * a Function of **two inputs** that computes only the gradients asked for
#   (`ctx.needs_input_grad`),
# * a new op in **naivegraph's own op table**, which then runs in both modes,
# * and what to do when a backward produces NaN: anomaly detection, and the fix.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)


# %% [markdown]
# ## A custom Function
#
# A `Function` has two static methods. `forward(ctx, *inputs)` computes the output
# from plain values and may save what backward will need with
# `ctx.save_for_backward(...)`. `backward(ctx, grad_output)` receives the gradient of
# the loss with respect to the output and returns the gradient with respect to each
# input: the chain rule, one op at a time. You call it with `Cube.apply(x)`, never
# `Cube.forward`.
#
# ### Exercise 12-1: `x ** 3` as a Function
#
# Complete `backward`. `grad_output` has the shape of the output; the local derivative
# of $x^3$ is $3x^2$.

# %% exercise="12-1"
# Exercise 12-1
class Cube(ng.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        ### BEGIN SOLUTION
        grad_input = 3 * x ** 2 * grad_output
        ### END SOLUTION
        return grad_input

ex.check_cube_function(Cube)

# %% [markdown]
# `gradcheck` compares your backward with a finite-difference estimate,
# $(f(x + \varepsilon) - f(x - \varepsilon)) / 2\varepsilon$, for every input element.
# It needs float64: in float32 the rounding error of the estimate is larger than the
# tolerance. Here it is on your `Cube`, and the node your Function records:

# %%
if ex.solved("12-1"):
    x = ng.tensor([0.5, -1.0, 2.0], dtype=ng.float64, requires_grad=True)
    print("gradcheck:", ng.autograd.gradcheck(Cube.apply, (x,)))
    y = Cube.apply(x)
    print(y.grad_fn.name(), y)
else:
    print("(solve exercise 12-1 first)")


# %% [markdown]
# A backward that forgets `grad_output` is the most common mistake: it returns the
# local derivative alone, which is only right when the op is the last one before the
# loss. `gradcheck` catches it because it builds the whole Jacobian, one output
# element at a time, sending a `grad_output` that is 1 for that element and 0 for
# the others. Here is such a broken `Cube`, first behind a `.sum()` (the output
# gradient is all ones, so the mistake hides), then alone:

# %%
class BrokenCube(ng.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x ** 3

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        return 3 * x ** 2  # forgets grad_output

x = ng.tensor([0.5, -1.0, 2.0], dtype=ng.float64, requires_grad=True)
print("behind .sum():", ng.autograd.gradcheck(lambda t: BrokenCube.apply(t).sum(), (x,)))
try:
    ng.autograd.gradcheck(BrokenCube.apply, (x,))
except Exception as err:
    print(type(err).__name__ + ":", err)


# %% [markdown]
# The matrices are printed as torch prints them: a row per input element, a column
# per output element. Each column of the analytical Jacobian is the same `3 x²`,
# whichever output element the gradient came from: backward ignored what it was sent. Check a Function on
# its own output, not only behind a sum.
#
# ## The backward of broadcasting
#
# `x + b` with `x` of shape `(4, 3)` and `b` of shape `(3,)` uses every element of
# `b` four times, once per row. The chain rule adds the contributions of every use,
# so the gradient of `b` is the output gradient **summed over the broadcast
# dimensions**. Numpy's broadcasting rule: shapes are aligned on the right, missing
# leading dimensions are added, and a dimension of size 1 is stretched.
#
# ### Exercise 12-2: sum back to a shape
#
# Write `sum_to_shape(grad, shape)`: sum `grad` (a numpy array) over the dimensions
# broadcasting added or stretched, so that the result has exactly `shape`. Use
# `grad.sum(axis=..., keepdims=...)`.

# %% exercise="12-2"
# Exercise 12-2
def sum_to_shape(grad, shape):
    ### BEGIN SOLUTION
    extra = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(extra)))
    stretched = tuple(i for i, n in enumerate(shape) if n == 1 and grad.shape[i] != 1)
    return grad.sum(axis=stretched, keepdims=True)
    ### END SOLUTION

ex.check_sum_to_shape(sum_to_shape)

# %%
x = ng.tensor(np.ones((4, 3)), requires_grad=True)
b = ng.tensor([1.0, 2.0, 3.0], requires_grad=True)
(x + b).sum().backward()
print("b.grad from the engine:", b.grad)
if ex.solved("12-2"):
    print("sum_to_shape by hand:  ", sum_to_shape(np.ones((4, 3)), (3,)))


# %% [markdown]
# ## The backward of a matrix product
#
# For $Y = XW$ with $X$ of shape $(n, d)$ and $W$ of shape $(d, k)$, the output
# gradient $dY$ has shape $(n, k)$. The gradients must have the shapes of $X$ and
# $W$, and there is only one way to multiply $dY$ with $X$ or $W$ that gives them:
# $dX = dY\,W^\top$ (shape $(n, d)$) and $dW = X^\top dY$ (shape $(d, k)$).
# When you forget a formula, write the shapes down.
#
# ### Exercise 12-3: matmul's backward
#
# Write `matmul_backward(X, W, dY)` returning `(dX, dW)` as numpy arrays, computed with
# numpy from the shapes (autograd is what this rule is for, so it cannot be asked).

# %% exercise="12-3"
# Exercise 12-3
def matmul_backward(X, W, dY):
    ### BEGIN SOLUTION
    dX = dY @ W.T
    dW = X.T @ dY
    return dX, dW
    ### END SOLUTION

ex.check_matmul_backward(matmul_backward)

# %%
rng = np.random.default_rng(0)
X, W = rng.standard_normal((5, 3)), rng.standard_normal((3, 2))
Xt, Wt = ng.tensor(X, requires_grad=True), ng.tensor(W, requires_grad=True)
(Xt @ Wt).sum().backward()
print("the engine's dW:")
print(Wt.grad)
if ex.solved("12-3"):
    dX, dW = matmul_backward(X, W, np.ones((5, 2)))
    print("dX matches the engine:", np.allclose(dX, Xt.grad.numpy()))
    print("dW matches the engine:", np.allclose(dW, Wt.grad.numpy()))


# %% [markdown]
# ## Two inputs: `ctx.needs_input_grad`
#
# A Function of two inputs returns two gradients from `backward`, in the order of
# `forward`'s inputs. Often only one is wanted: in a linear layer `y = x @ w` the
# data `x` does not require grad, and its gradient would be a whole matrix product
# thrown away. `ctx.needs_input_grad` holds one bool per input of `forward`; compute
# a gradient only where it is `True` and return `None` for the other (torch's
# "Extending PyTorch" note writes its `LinearFunction` the same way).
#
# ### Exercise 12-4: a linear Function
#
# Complete `backward`: unpack `x` and `w`, start both gradients at `None`, and fill in
# each one only when `ctx.needs_input_grad` asks for it, with exercise 12-3's formulas
# written on tensors.

# %% exercise="12-4"
# Exercise 12-4
class Linear(ng.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(x, w)
        return x @ w

    @staticmethod
    def backward(ctx, grad_output):
        ### BEGIN SOLUTION
        x, w = ctx.saved_tensors
        grad_x = grad_w = None
        if ctx.needs_input_grad[0]:
            grad_x = grad_output @ w.T
        if ctx.needs_input_grad[1]:
            grad_w = x.T @ grad_output
        return grad_x, grad_w
        ### END SOLUTION

ex.check_linear_function(Linear)

# %%
if ex.solved("12-4"):
    rng = np.random.default_rng(1)
    x = ng.tensor(rng.standard_normal((4, 3)), dtype=ng.float64)  # data: no grad
    w = ng.tensor(rng.standard_normal((3, 2)), dtype=ng.float64, requires_grad=True)
    y = Linear.apply(x, w)
    print("needs_input_grad:", y.grad_fn.needs_input_grad)
    print("gradcheck on w:", ng.autograd.gradcheck(lambda w: Linear.apply(x, w), (w,)))
else:
    print("(solve exercise 12-4 first)")

# %% [markdown]
# ## A new op in naivegraph's own table
#
# A `Function` lives outside the library: the dynamic engine calls it, but a static
# graph knows nothing of it. naivegraph's own ops are entries of one table,
# `naivegraph/ops/table.py`, each made by `defop(name, forward, partials, ...)`:
# a numpy forward and one **partial** VJP per input, `partial(g, x, out)` returning
# the gradient of `x` given `g`, the gradient of the output. The same `defop` adds an
# op from outside, and `op_function(name)` gives the function that runs it; because
# the partials are written with operators and `F.<op>` (never `np.*`), one rule
# differentiates numpy arrays, dynamic tensors and static nodes.
#
# Our op is **softplus**, $\log(1 + e^x)$, a smooth relu.
#
# ### Exercise 12-5: softplus' partial
#
# Complete `softplus_partial(g, x, out)`: the gradient of `x`, written with operators
# and `F.<op>` (the table has `F.exp`, `F.log`, `F.sigmoid`, ...). The rule must hold
# for every x, large |x| included: in float64, `e^x` overflows to inf past x = 709.

# %% exercise="12-5"
# Exercise 12-5
from naivegraph.ops import F, defop, op_function

def softplus_partial(g, x, out):
    ### BEGIN SOLUTION
    grad_x = g * F.sigmoid(x)
    ### END SOLUTION
    return grad_x

ex.check_softplus_partial(softplus_partial)

# %% [markdown]
# With the partial, the op is one `defop`. `saves=(0, "out")` **declares** what the
# partial may read: input 0 (`x`) and the output. Backward keeps exactly those values,
# and a partial that reads a value it did not declare stops with an error naming it
# (a rule written with `out` needs `"out"`; one written with `x` alone would do with
# `saves=(0,)`: the cell below shows one of each, once 12-5 passes). `elementwise=True`
# says numpy broadcasting applies. `replace=True` lets this cell run again (an op of
# the library itself can never be replaced). Then the same function runs on a dynamic
# tensor, where it records a `SoftplusBackward0` node and passes `gradcheck`:

# %%
if ex.solved("12-5"):
    defop("softplus", lambda x: np.logaddexp(0.0, x), [softplus_partial],
          saves=(0, "out"), elementwise=True, replace=True)
    softplus = op_function("softplus")
    x = ng.tensor([-2.0, 0.0, 3.0], dtype=ng.float64, requires_grad=True)
    y = softplus(x)
    print(y.grad_fn.name(), y)
    print("gradcheck:", ng.autograd.gradcheck(softplus, (x,)))
    print()
    print('Two rules, two saves: g * (1 - F.exp(-out)) reads out and needs "out";')
    print("g * F.sigmoid(x) reads x alone and would do with saves=(0,).")
else:
    print("(solve exercise 12-5 first: this cell adds the op, and says what each way of")
    print("writing the rule must save)")

# %% [markdown]
# ...and on static nodes, where `ns.gradients` uses your partial to add the backward
# pass to the graph (the listing shows your rule as the ops you wrote it with), and
# both drawings show the new op:

# %%
import naivegraph.static as ns

if ex.solved("12-5"):
    with ns.Graph("softplus") as g:
        a = ns.placeholder("a", shape=(3,), dtype=np.float64)
        loss = softplus(a).sum()
        (da,) = ns.gradients(loss, [a])
    print(g)
    f = g.compile([a], [loss, da])
    print("static:", f(np.array([-2.0, 0.0, 3.0])))
    print()
    print("A rule written as g * F.sigmoid(x) shows in the listing as a sigmoid and a mul.")

# %%
if ex.solved("12-5"):
    y = softplus(x * 2.0).sum()
    display(ng.render(y, kind="backward", title="dynamic: softplus records its own node"))
    display(ng.render(g, title="static: the same op, and its gradient as nodes"))

# %% [markdown]
# ## When a gradient is NaN: anomaly detection
#
# A gradient can come out NaN even though every value of the forward pass is finite.
# Here `sqrt` is taken of `[0, 4]` and a mask then zeroes the first element, so the
# loss does not depend on it at all; yet its gradient is NaN, and a NaN spreads
# silently into every parameter it reaches:

# %%
x = ng.tensor([0.0, 4.0], dtype=ng.float64, requires_grad=True)
y = (x.sqrt() * ng.tensor([0.0, 1.0], dtype=ng.float64)).sum()
y.backward()
print("x.grad =", x.grad)
print("the backward ops, from the loss:", y.grad_fn.name(), "->",
      y.grad_fn.next_functions[0][0].name(), "-> ...")

# %% [markdown]
# ### Exercise 12-6: which backward made the NaN?
#
# The backward pass runs `SumBackward0`, then `MulBackward0`, then `SqrtBackward0`.
# Which of them is the **first** to return NaN? Work it out from what each one
# computes at `x = [0, 4]`, and answer with its name (a string like `"ExpBackward0"`).
# The cell after the check asks the library.

# %% exercise="12-6"
# Exercise 12-6
### BEGIN SOLUTION
first_nan = "SqrtBackward0"
### END SOLUTION
ex.check_first_nan(first_nan)

# %% [markdown]
# `ng.autograd.detect_anomaly()` checks every backward step and stops at the first one
# that returns NaN, naming the op and the line of the forward pass that created it:

# %%
if ex.solved("12-6"):
    x = ng.tensor([0.0, 4.0], dtype=ng.float64, requires_grad=True)
    try:
        with ng.autograd.detect_anomaly():
            y = (x.sqrt() * ng.tensor([0.0, 1.0], dtype=ng.float64)).sum()
            y.backward()
    except RuntimeError as err:
        print("RuntimeError:", err)
else:
    print("(solve exercise 12-6 first: this cell asks the library)")

# %% [markdown]
# $\sqrt{x}$ has derivative $1/(2\sqrt{x})$, infinite at 0; the mask sends a zero
# gradient there, and $0 \cdot \infty$ is NaN (in practice the backward computes
# $0 / (2\sqrt{0}) = 0/0$). The mask came too late: it zeroed the gradient *after*
# `sqrt`, whose backward still runs at 0. The fix is in the forward pass: no 0 may
# reach `sqrt`. Masking *before* the op, `(x * mask).sqrt()`, looks like a fix but is
# not: the masked element is still a 0 when it reaches `sqrt` (torch gives the same
# `nan`). What works is **replacing the value** where the mask is off, so `sqrt`
# never sees it, or keeping the input away from 0 with an epsilon:

# %%
mask = ng.tensor([0.0, 1.0], dtype=ng.float64)
fixes = {
    "mask before: (x * mask).sqrt()": lambda x: (x * mask).sqrt(),
    "replace:     where(mask > 0, x, 1.0).sqrt() * mask":
        lambda x: ng.where(mask > 0, x, 1.0).sqrt() * mask,
    "epsilon:     (x + 1e-12).sqrt() * mask": lambda x: (x + 1e-12).sqrt() * mask,
}
for name, f in fixes.items():
    x = ng.tensor([0.0, 4.0], dtype=ng.float64, requires_grad=True)
    f(x).sum().backward()
    print(f"{name:55} x.grad = {x.grad.tolist()}")

# %% [markdown]
# The `where` fix is exact: the masked element gets gradient 0, and the other one
# the true $1/(2\sqrt{4}) = 0.25$. The epsilon fix gives the masked element 0 too
# (the mask is applied after), but changes the value of $\sqrt{x}$ slightly
# everywhere.

# %% [markdown]
# ## Further reading
#
# * PyTorch, "Extending PyTorch": custom `Function`s, `setup_context`,
#   `needs_input_grad` (its `LinearFunction` example), `once_differentiable`, and
#   `gradcheck` / `gradgradcheck`.
# * naivegraph's own `naivegraph/ops/table.py`: every built-in op is one `defop`,
#   written exactly like your softplus.
# * PyTorch, "Autograd mechanics", the sections on saved tensors and anomaly mode.
# * Dive into Deep Learning, section 5.3 "Forward Propagation, Backward Propagation, and
#   Computational Graphs": the matrix shapes of backprop written out.
# * CMU 10-414 "Deep Learning Systems" (dlsys), lecture 4: automatic differentiation,
#   and its homework that implements `sum_to_shape` and matmul's gradient.
