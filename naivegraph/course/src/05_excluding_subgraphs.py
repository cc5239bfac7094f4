# %% [markdown]
# # Lesson 5: Excluding subgraphs from gradient computation
#
# Often you need gradients for only part of a model, or for none of it. Two switches
# cut parts of the graph out of the backward pass:
#
# * `requires_grad=False` on tensors (and parameters): used to **freeze** a model and
#   train only its last layer,
# * `ng.no_grad()`: nothing inside is recorded. It replaced the old `volatile` flag.

# %%
import numpy as np
import naivegraph as ng
from naivegraph.lessons import exercises as ex

np.set_printoptions(precision=4, suppress=True)

# %% [markdown]
# ## requires_grad, again
#
# If no input of an op requires a gradient, the output does not either, and backward
# never enters that part of the graph. Inside `no_grad`, no op's result requires grad
# (a leaf keeps its own flag: `z.requires_grad` stays `True` there).
#
# ### Exercise 05-1: which results require grad?

# %% exercise="05-1"
# Exercise 05-1: predict a.requires_grad, b.requires_grad and c.requires_grad
#   x, y = ng.randn(5, 5), ng.randn(5, 5)
#   z = ng.randn(5, 5, requires_grad=True)
#   a = x + y
#   b = a + z
#   with ng.no_grad():
#       c = b * 2
### BEGIN SOLUTION
a_rg = False
b_rg = True
c_rg = False
### END SOLUTION
ex.check_requires_grad_flow(a_rg, b_rg, c_rg)

# %%
x, y = ng.randn(5, 5), ng.randn(5, 5)
z = ng.randn(5, 5, requires_grad=True)
a = x + y
b = a + z
with ng.no_grad():
    c = b * 2
print(a.requires_grad, b.requires_grad, c.requires_grad, c.grad_fn)


# %% [markdown]
# ## Freezing a model, training only the last layer
#
# Fine-tuning a pretrained network: keep its feature extractor as it is and train a
# new classifier on top. Set `requires_grad = False` on every parameter, then
# replace the last layer (new layers require grad by default) and give the
# optimizer only the new layer's parameters.
#
# Our "pretrained" model is small: a body of two `Tanh` layers and a linear `fc`.

# %%
class Net(ng.nn.Module):
    def __init__(self, n_classes=2):
        super().__init__()
        self.body = ng.nn.Sequential(ng.nn.Linear(2, 8), ng.nn.Tanh(),
                                     ng.nn.Linear(8, 8), ng.nn.Tanh())
        self.fc = ng.nn.Linear(8, n_classes)

    def forward(self, x):
        return self.fc(self.body(x))

ng.manual_seed(0)
model = Net()
for p in model.parameters():
    p.requires_grad = False
model.fc = ng.nn.Linear(8, 3)          # a new head for 3 classes
optimizer = ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)
print([(name, p.requires_grad) for name, p in model.named_parameters()])

# %% [markdown]
# The backward graph of one step only reaches the new layer: the body's output is
# a tensor that needs no gradient, so none of its ops are recorded.

# %%
rng = np.random.default_rng(0)
X = ng.tensor(rng.normal(size=(60, 2))).float()  # numpy's float64 -> the layers' float32
labels = ng.tensor(np.digitize(X.numpy()[:, 0], [-0.5, 0.5]))
out = model(X)
loss = ng.nn.functional.cross_entropy(out, labels)
print("loss before:", round(loss.item(), 4))
ng.render(loss, kind="backward", params={"loss": loss, "W_fc": model.fc.weight,
                                         "b_fc": model.fc.bias})

# %%
body_before = [p.numpy().copy() for p in model.body.parameters()]
for step in range(100):
    optimizer.zero_grad()
    loss = ng.nn.functional.cross_entropy(model(X), labels)
    loss.backward()
    optimizer.step()
print("loss after 100 steps:", round(loss.item(), 4))
print("body unchanged:", all(np.array_equal(b, p.numpy())
                             for b, p in zip(body_before, model.body.parameters())))


# %% [markdown]
# ### Exercise 05-2: fine-tuning, as a function
#
# The checker calls your function on fresh copies of `Net` with different numbers of
# classes, and compares two training steps of your optimizer with the steps those
# settings give.

# %% exercise="05-2"
# Exercise 05-2: freeze `model`, give it a new `fc`, one linear layer with
# n_classes outputs (its input size is 8) and nothing after it, and return an SGD
# optimizer over the new layer only, with the settings of the optimizer above
# (lr=0.1, momentum=0.9).
def finetune_setup(model, n_classes):
    ### BEGIN SOLUTION
    for p in model.parameters():
        p.requires_grad = False
    model.fc = ng.nn.Linear(8, n_classes)
    return ng.optim.SGD(model.fc.parameters(), lr=0.1, momentum=0.9)
    ### END SOLUTION

ex.check_finetune_setup(finetune_setup)

# %% [markdown]
# ## From volatile to no_grad
#
# Old PyTorch had a second flag, `volatile=True`, for inference: one volatile input
# made the whole graph volatile, so nothing was saved. It was removed; the
# compatibility `Variable` here warns and points to the replacement. `no_grad` is
# the modern spelling: a context manager (or decorator) that turns recording off for
# everything inside, whatever the inputs.

# %%
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    v = ng.autograd.Variable(ng.ones(1), volatile=True)
print("warning:", caught[0].message)

with ng.no_grad():
    out = model(X)
print("inside no_grad:", out.requires_grad, out.grad_fn, " grad mode now:", ng.is_grad_enabled())


# %% [markdown]
# ### Exercise 05-3: inference
#
# Write `predict(model, x)`: the model's output, computed without building a graph,
# and leaving the model and the grad mode as they were. The checker calls it on models
# in training and in eval mode, with a frozen parameter, and with grad mode already off.

# %% exercise="05-3"
# Exercise 05-3: return model(x) without recording any history
def predict(model, x):
    ### BEGIN SOLUTION
    with ng.no_grad():
        return model(x)
    ### END SOLUTION

ex.check_inference(predict)

# %% [markdown]
# `model(x).detach()` also gives a tensor without history, but only after the whole
# forward graph has been built, with every tensor it saves for backward. For
# inference, `no_grad` is the right tool: nothing is recorded in the first place.
# Switching `requires_grad` off on the parameters stops the recording only when no
# input requires grad either: an `x` that requires grad is still recorded (the output
# gets a `grad_fn`). And it leaves the model frozen for the training that follows.
#
# ## Summary
#
# * No input requires grad -> output does not; backward skips that subgraph.
# * Freeze with `p.requires_grad = False`, train a new head with an optimizer over
#   its parameters only.
# * `no_grad` (not `volatile`, not `detach()` afterwards) for inference.
#
# ## Further reading
#
# * PyTorch, [Autograd mechanics](https://pytorch.org/docs/stable/notes/autograd.html):
#   "Locally disabling gradient computation" (`requires_grad`, grad mode, no-grad and
#   inference mode).
# * PyTorch, [A gentle introduction to `torch.autograd`](https://pytorch.org/tutorials/beginner/blitz/autograd_tutorial.html):
#   "Exclusion from the DAG" and freezing a pretrained network for fine-tuning.
# * Dive into Deep Learning, [Automatic differentiation](https://d2l.ai/chapter_preliminaries/autograd.html):
#   detaching computation.
# * A. Karpathy, [micrograd](https://github.com/karpathy/micrograd): a whole
#   training loop on a scalar engine.
# * CMU [Deep Learning Systems](https://dlsyscourse.org/): the lectures on training
#   and on memory.
