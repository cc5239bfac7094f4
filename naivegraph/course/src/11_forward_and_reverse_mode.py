# %% [markdown]
# # Lesson 11: Forward and reverse mode
#
# `backward()` is **reverse mode**: one pass from an output back to every input gives one
# *row* of the Jacobian (a vector-Jacobian product, VJP). There is a second way to apply
# the chain rule: **forward mode** carries a derivative *along with* each value, from the
# inputs to the outputs, and one pass gives one *column* (a Jacobian-vector product,
# JVP). This lesson covers:
#
# * dual numbers: forward mode by hand, in a dozen lines,
# * the Jacobian of a small function both ways, with `ng.func.jvp` and `ng.func.vjp`,
# * `ng.func.jacfwd` and `ng.func.jacrev`, and when each one is cheaper.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## Dual numbers
#
# Write every number as $a + b\,\varepsilon$ where $\varepsilon^2 = 0$. Then
# $f(a + b\varepsilon) = f(a) + f'(a)\,b\,\varepsilon$: the $\varepsilon$ part
# carries the derivative. A `Dual` holds the value $a$ and the **tangent** $b$; each
# operation computes the new value *and* the new tangent, which is the derivative
# of the operation times the tangents of its inputs. It is the table of lesson 8 (each
# op with its derivative) used in the other direction: from the inputs forward.

# %%
import math

class Dual:
    def __init__(self, value, tangent=0.0):
        self.value, self.tangent = value, tangent

    def __add__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(self.value + other.value, self.tangent + other.tangent)

    def __sub__(self, other):
        other = other if isinstance(other, Dual) else Dual(other)
        return Dual(self.value - other.value, self.tangent - other.tangent)

    def __repr__(self):
        return f"Dual({self.value:g}, {self.tangent:g})"

def sin(d):
    return Dual(math.sin(d.value), math.cos(d.value) * d.tangent)


# %% [markdown]
# ### Exercise 11-1: the product and the quotient rules
#
# Complete `mul` and `div` (they become `Dual.__mul__` and `Dual.__truediv__`). Both
# receive two `Dual`s. The value is the plain product or quotient; the tangent follows
# $(uv)' = u'v + uv'$ and $(u/v)' = (u'v - uv') / v^2$.

# %% exercise="11-1"
# Exercise 11-1
def mul(u, v):
    ### BEGIN SOLUTION
    tangent = u.tangent * v.value + u.value * v.tangent
    ### END SOLUTION
    return Dual(u.value * v.value, tangent)

def div(u, v):
    ### BEGIN SOLUTION
    tangent = (u.tangent * v.value - u.value * v.tangent) / v.value ** 2
    ### END SOLUTION
    return Dual(u.value / v.value, tangent)

Dual.__mul__ = lambda self, other: mul(self, other if isinstance(other, Dual) else Dual(other))
Dual.__truediv__ = lambda self, other: div(self, other if isinstance(other, Dual) else Dual(other))
ex.check_dual_rules(Dual)


# %% [markdown]
# ## One column per forward pass
#
# Take $f(x_1, x_2) = (x_1 x_2,\; x_1 / x_2 - x_1^2 + 2 x_2)$ at $x = (1, 2)$. Seeding
# $x_1$ with tangent 1 and $x_2$ with tangent 0 gives $\partial f / \partial x_1$, the
# first column of the Jacobian; the other seed gives the second column.

# %%
def f(x1, x2):
    return x1 * x2, x1 / x2 - x1 * x1 + x2 * 2.0

if ex.solved("11-1"):
    for seed in ((1.0, 0.0), (0.0, 1.0)):
        y1, y2 = f(Dual(1.0, seed[0]), Dual(2.0, seed[1]))
        print("seed", seed, "-> column", (y1.tangent, y2.tangent))
else:
    print("(solve exercise 11-1 first)")


# %% [markdown]
# The Jacobian is $\begin{pmatrix} 2 & 1 \\ -1.5 & 1.75 \end{pmatrix}$: the columns
# above, side by side. Reverse mode gets the same matrix one **row** at a time: one
# backward pass per output.
#
# naivegraph does both for any function of tensors. `ng.func.jvp(f, (x,), (v,))`
# returns `(f(x), J v)`; `ng.func.vjp(f, x)` returns `(f(x), vjp_fn)` and
# `vjp_fn(u)` is `(uᵀ J,)`. Neither ever builds the matrix $J$.
#
# `ng.func.jvp` runs real forward mode, as `Dual` does: each op carries a tangent
# beside its value (`ng.autograd.forward_ad` is the lower-level API, with PyTorch's
# names: `dual_level`, `make_dual`, `unpack_dual`). No derivative is written twice for
# it: each op's JVP is derived from the VJP rule of the op table (an elementwise
# derivative is its own transpose; a linear op is its own JVP).
#
# ### Exercise 11-2: a Jacobian from JVPs
#
# Write `jacobian_forward(f, x)` for `f` from a 1-D tensor to a 1-D tensor: one
# `ng.func.jvp` per input, each seeded with a column of the identity
# (`ng.eye(n, dtype=x.dtype)[i]`), and the results stacked as columns
# (`ng.stack(columns, dim=1)`). The checker tries it on functions of its own.

# %% exercise="11-2"
# Exercise 11-2
def jacobian_forward(f, x):
    n = x.shape[0]
    columns = []
    for i in range(n):
        seed = ng.eye(n, dtype=x.dtype)[i]
        ### BEGIN SOLUTION
        _, column = ng.func.jvp(f, (x,), (seed,))
        columns.append(column)
        ### END SOLUTION
    return ng.stack(columns, dim=1)

ex.check_jacobian_forward(jacobian_forward)


# %% [markdown]
# ### Exercise 11-3: a Jacobian from VJPs
#
# Now `jacobian_reverse(f, x)`: call `ng.func.vjp(f, x)` once, then its `vjp_fn` once
# per **output**, seeded with a row of the identity, and stack the results as rows.

# %% exercise="11-3"
# Exercise 11-3
def jacobian_reverse(f, x):
    y, vjp_fn = ng.func.vjp(f, x)
    m = y.shape[0]
    rows = []
    for i in range(m):
        seed = ng.eye(m, dtype=y.dtype)[i]
        ### BEGIN SOLUTION
        (row,) = vjp_fn(seed)
        rows.append(row)
        ### END SOLUTION
    return ng.stack(rows, dim=0)

ex.check_jacobian_reverse(jacobian_reverse)


# %%
def f_tensor(x):
    return ng.stack([x[0] * x[1], x[0] / x[1] - x[0] ** 2 + 2 * x[1]])

x = ng.tensor([1.0, 2.0], dtype=ng.float64)
print("jacfwd:\n", ng.func.jacfwd(f_tensor)(x))
print("jacrev:\n", ng.func.jacrev(f_tensor)(x))

# %% [markdown]
# ## Which one is cheaper?
#
# `jacfwd` makes one pass per **input**, `jacrev` one per **output**. For
# $f: \mathbb{R}^n \to \mathbb{R}^m$ forward mode wins when $n \ll m$ and reverse mode
# when $n \gg m$. Training a network is the extreme case: millions of inputs (the
# weights), one output (the loss), so one backward pass gives the whole gradient.
# That is why deep learning runs on reverse mode.
#
# The figure times both on $f(x) = \tanh(Wx)$ with $m = 48$ outputs and a growing
# number of inputs $n$ (the same measurement as `benchmarks/bench_jacobians.py`).

# %%
import time
import matplotlib.pyplot as plt

def seconds(call, repeats=5):
    call()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        best = min(best, time.perf_counter() - start)
    return best

m, sizes = 48, [2, 8, 24, 48, 96, 192]
rng = np.random.default_rng(0)
forward_times, reverse_times = [], []
for n in sizes:
    W = ng.tensor(rng.standard_normal((m, n)))
    x = ng.tensor(rng.standard_normal(n))
    g = lambda v: (W @ v).tanh()
    forward_times.append(seconds(lambda: ng.func.jacfwd(g)(x)))
    reverse_times.append(seconds(lambda: ng.func.jacrev(g)(x)))

plt.figure(figsize=(5, 3.2))
plt.loglog(sizes, forward_times, "o-", label="jacfwd (one JVP per input)")
plt.loglog(sizes, reverse_times, "s-", label="jacrev (one VJP per output)")
plt.axvline(m, color="grey", lw=0.8, ls="--")
plt.xlabel("inputs n (outputs m = 48)"); plt.ylabel("seconds"); plt.legend()
plt.title("Forward vs reverse mode"); plt.tight_layout(); plt.show()

# %% [markdown]
# Counting passes, the lines cross at $n = m$ (dashed), and that is about where they
# cross here (between $n = 24$ and $n = 96$ when this lesson was written: a JVP and a
# VJP cost about the same). Where exactly it flips depends on the cost of one pass of
# each kind, not only on the count.
#
# ### Exercise 11-4: choose the mode
#
# For each function, which is cheaper to get the full Jacobian of: `"jacfwd"` or
# `"jacrev"`?
#
# 1. a loss: $\mathbb{R}^{10000} \to \mathbb{R}$ (all the weights to one number),
# 2. a curve: $\mathbb{R} \to \mathbb{R}^{500}$ (a time to 500 positions),
# 3. an image filter: $\mathbb{R}^{64} \to \mathbb{R}^{4096}$.

# %% exercise="11-4"
# Exercise 11-4
### BEGIN SOLUTION
choices = ("jacrev", "jacfwd", "jacfwd")
### END SOLUTION
ex.check_mode_choice(choices)

# %% [markdown]
# ## Further reading
#
# * PyTorch, `torch.func` tutorials: "Jacobians, Hessians, hvp, vhp, and more" and
#   "Forward-mode Automatic Differentiation" (`torch.autograd.forward_ad`, dual tensors).
# * Baydin et al., "Automatic Differentiation in Machine Learning: a Survey" (JMLR
#   2018), sections 3.1 and 3.2: forward and reverse mode side by side.
# * Dive into Deep Learning, section 2.5 "Automatic Differentiation".
# * The JAX documentation, "The Autodiff Cookbook": JVPs, VJPs and `jacfwd` / `jacrev`.
