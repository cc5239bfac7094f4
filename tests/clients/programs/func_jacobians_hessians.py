# Mirrors: PyTorch tutorial "Jacobians, Hessians, hvp, vhp, and more: composing function
# transforms" (torch.func): the Jacobian of a tanh(linear) layer row by row with vjp, then
# vmap(vjp_fn) over the unit vectors, jacrev with argnums, jacfwd, the Hessian three ways
# (hessian, jacfwd of jacfwd, jacrev of jacrev), batched Jacobians with
# vmap(jacrev(...), in_dims=(None, None, 0)) and by the summed-output trick, a batched
# Hessian, and hvp by forward over reverse and by reverse over reverse. Deterministic data
# in place of torch.randn, smaller sizes.
# precision: float64
from functools import partial

import numpy as np
import torch
import torch.nn.functional as F
from torch.func import grad, hessian, jacfwd, jacrev, jvp, vjp, vmap

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(7)


def predict(weight, bias, x):
    return F.linear(x, weight, bias).tanh()


D = 6
weight = torch.tensor(rng.standard_normal((D, D)))
bias = torch.tensor(rng.standard_normal(D))
x = torch.tensor(rng.standard_normal(D))

# the Jacobian one row at a time: a vjp per unit vector
_, vjp_fn = vjp(partial(predict, weight, bias), x)
unit_vectors = torch.eye(D)
jacobian_rows = [vjp_fn(vec)[0] for vec in unit_vectors]
jacobian = torch.stack(jacobian_rows)
print("jacobian row 0:", [round(v, 12) for v in jacobian[0].tolist()])

# ... and all rows at once with vmap
(ft_jacobian,) = vmap(vjp_fn)(unit_vectors)
print("vmap(vjp_fn) agrees:", torch.allclose(ft_jacobian, jacobian))

ft_jacobian = jacrev(predict, argnums=2)(weight, bias, x)
print("jacrev agrees:", torch.allclose(ft_jacobian, jacobian))
print("jacobian diagonal sum:", (ft_jacobian * torch.eye(D)).sum().item())

ft_jac_weight, ft_jac_bias = jacrev(predict, argnums=(0, 1))(weight, bias, x)
print("d/dweight shape:", list(ft_jac_weight.shape), "d/dbias shape:", list(ft_jac_bias.shape))
print("d/dbias diagonal:", [ft_jac_bias[i, i].item() for i in range(D)])

jacfwd_jacobian = jacfwd(predict, argnums=2)(weight, bias, x)
print("jacfwd agrees:", torch.allclose(jacfwd_jacobian, jacobian))

# Hessians, three ways
hess_api = hessian(predict, argnums=2)(weight, bias, x)
hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
print("hessian shape:", list(hess_api.shape))
print("fwdfwd agrees:", torch.allclose(hess_api, hess_fwdfwd))
print("revrev agrees:", torch.allclose(hess_api, hess_revrev))
print("hessian[0] sum:", hess_api[0].sum().item(), "hessian[2, 1, 3]:", hess_api[2, 1, 3].item())

# batched Jacobians
batch_size, Din, Dout = 4, 3, 5
weight = torch.tensor(rng.standard_normal((Dout, Din)))
bias = torch.tensor(rng.standard_normal(Dout))
x = torch.tensor(rng.standard_normal((batch_size, Din)))

compute_batch_jacobian = vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
batch_jacobian0 = compute_batch_jacobian(weight, bias, x)
print("batch jacobian shape:", list(batch_jacobian0.shape))


def predict_with_output_summed(weight, bias, x):
    return predict(weight, bias, x).sum(0)


batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).permute(1, 0, 2)
print("summed-output trick agrees:", torch.allclose(batch_jacobian0, batch_jacobian1))
print("batch jacobian [3]:", [[round(v, 12) for v in row] for row in batch_jacobian0[3].tolist()])

compute_batch_hessian = vmap(hessian(predict, argnums=2), in_dims=(None, None, 0))
batch_hess = compute_batch_hessian(weight, bias, x)
print("batch hessian shape:", list(batch_hess.shape), "sum:", round(batch_hess.sum().item(), 12))


# Hessian-vector products
def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def f(x):
    return x.sin().sum()


x = torch.tensor(rng.standard_normal(32))
tangent = torch.tensor(rng.standard_normal(32))
result = hvp(f, (x,), (tangent,))
print("hvp equals -sin(x) * tangent:", torch.allclose(result, -x.sin() * tangent))
print("hvp[:4]:", [round(v, 12) for v in result[:4].tolist()])


def hvp_revrev(f, primals, tangents):
    _, vjp_fn = vjp(grad(f), *primals)
    return vjp_fn(*tangents)


(result_revrev,) = hvp_revrev(f, (x,), (tangent,))
print("hvp_revrev agrees:", torch.allclose(result, result_revrev))
