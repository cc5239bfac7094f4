# Mirrors: the "torch.func Whirlwind Tour" (PyTorch docs): torch.vmap of a model over a
# batch of feature vectors with weights captured from the enclosing scope, per-example
# gradients with vmap(grad(compute_loss), in_dims=(None, 0, 0)), vjp, jvp, jacrev with
# its nesting (jacrev(jacrev(f)), vmap(jacrev(f))), jacfwd and hessian. Deterministic data
# in place of torch.randn.
# precision: float64
import numpy as np
import torch
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(11)

batch_size, feature_size = 3, 5
weights = torch.tensor(rng.standard_normal(feature_size), requires_grad=True)


def model(feature_vec):
    # Very simple linear model with activation
    return feature_vec.dot(weights).relu()


examples = torch.tensor(rng.standard_normal((batch_size, feature_size)))
result = torch.vmap(model)(examples)
print("vmap(model):", result.tolist(), result.requires_grad)
result.sum().backward()
print("weights.grad:", weights.grad.tolist())


def model2(weights, feature_vec):
    return feature_vec.dot(weights).relu()


def compute_loss(weights, example, target):
    y = model2(weights, example)
    return ((y - target) ** 2).mean()  # MSELoss


weights = torch.tensor(rng.standard_normal(feature_size))
targets = torch.tensor(rng.standard_normal(batch_size))
inputs = (weights, examples, targets)
grad_weight_per_example = vmap(grad(compute_loss), in_dims=(None, 0, 0))(*inputs)
print(
    "per-example gradients:",
    [[round(v, 12) for v in row] for row in grad_weight_per_example.tolist()],
)

x = torch.tensor(rng.standard_normal(5))
(_, vjp_fn) = vjp(torch.sin, x)
(vjps,) = vjp_fn(torch.ones(5))
print("vjp of sin is cos:", torch.allclose(vjps, x.cos()))

y = torch.tensor(rng.standard_normal(5))
_, out_tangent = jvp(lambda x, y: x * y, (x, y), (torch.ones(5), torch.ones(5)))
print("jvp of x * y:", torch.allclose(out_tangent, x + y))

jacobian = jacrev(torch.sin)(x)
expected = torch.eye(5) * torch.cos(x)
print("jacrev(sin):", torch.allclose(jacobian, expected))
hess = jacrev(jacrev(torch.sin))(x)
print(
    "jacrev(jacrev(sin)) shape:",
    list(hess.shape),
    "diagonal:",
    [round(hess[i, i, i].item(), 12) for i in range(5)],
)
batched = torch.tensor(rng.standard_normal((4, 3)))
print("vmap(jacrev(sin)):", list(vmap(jacrev(torch.sin))(batched).shape))


def f(x, y):
    return x * y.sin()


print("jacrev argnums=1:", [round(v, 12) for v in jacrev(f, argnums=1)(x, y).sum(0).tolist()])
print("jacfwd agrees:", torch.allclose(jacfwd(torch.sin)(x), expected))
print(
    "hessian agrees with jacfwd(jacrev):",
    torch.allclose(hessian(torch.sin)(x), jacfwd(jacrev(torch.sin))(x)),
)
