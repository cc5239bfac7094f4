# Mirrors: the torch.func tutorial "Neural Tangent Kernels": a small CNN, fnet_single
# through torch.func.functional_call on x.unsqueeze(0) with .squeeze(0); the empirical NTK
# by Jacobian contraction (vmap(jacrev(fnet_single), (None, 0)) over a dict of detached
# parameters, each Jacobian flattened with flatten(2), summed over parameters) and by
# NTK-vector products (vjp, then jvp of each vjp, vmap over an eye basis, nested vmap over
# the two batches), with 'full', 'trace' and 'diagonal' results. Smaller than the tutorial
# (3x8x8 images, 4 channels, 3 outputs), inputs from numpy rather than torch.randn, and
# the contractions the tutorial writes with torch.einsum are written here with matmul,
# and with a product by torch.eye and sum (naivegraph has neither einsum nor diagonal).
# precision: float64
import numpy as np
import torch
import torch.nn as nn
from torch.func import functional_call, jacrev, jvp, vjp, vmap

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(11)


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 4, (3, 3))
        self.conv2 = nn.Conv2d(4, 4, (3, 3))
        self.conv3 = nn.Conv2d(4, 4, (3, 3))
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        x = self.conv1(x)
        x = x.relu()
        x = self.conv2(x)
        x = x.relu()
        x = self.conv3(x)
        x = x.relu()
        x = x.mean(dim=(-1, -2))  # global average pooling: (N, 4)
        x = self.fc(x)
        return x


x_train = torch.from_numpy(rng.standard_normal((5, 3, 8, 8)))
x_test = torch.from_numpy(rng.standard_normal((3, 3, 8, 8)))

net = CNN()
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.4, 0.4, tuple(p.shape))))


def fnet_single(params, x):
    return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)


params = {k: v.detach() for k, v in net.named_parameters()}


def contract(j1, j2):
    """'Naf,Mbf->NMab' without einsum: (N, 1, a, f) @ (1, M, f, b)."""
    return j1.unsqueeze(1) @ j2.transpose(1, 2).unsqueeze(0)


def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2):
    # Compute J(x1)
    jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
    jac1 = jac1.values()
    jac1 = [j.flatten(2) for j in jac1]

    # Compute J(x2)
    jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
    jac2 = jac2.values()
    jac2 = [j.flatten(2) for j in jac2]

    # Compute J(x1) @ J(x2).T
    result = torch.stack([contract(j1, j2) for j1, j2 in zip(jac1, jac2)])
    result = result.sum(0)
    return result


result = empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test)
print(tuple(result.shape))
print(result[0, 0].tolist())
print(result[4, 2].tolist())


def empirical_ntk_ntk_vps(func, params, x1, x2, compute="full"):
    def get_ntk(x1, x2):
        def func_x1(params):
            return func(params, x1)

        def func_x2(params):
            return func(params, x2)

        output, vjp_fn = vjp(func_x1, params)

        def get_ntk_slice(vec):
            # This computes vec @ J(x2).T
            vjps = vjp_fn(vec)
            # This computes J(x1) @ vjps
            _, jvps = jvp(func_x2, (params,), vjps)
            return jvps

        # Here's our identity matrix
        basis = torch.eye(output.numel(), dtype=output.dtype, device=output.device).view(
            output.numel(), -1
        )
        return vmap(get_ntk_slice)(basis)

    # get_ntk(x1, x2) computes the NTK for a single data point x1, x2; vmap over both
    result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)

    if compute == "full":
        return result
    eye = torch.eye(result.shape[-1])
    if compute == "trace":
        return (result * eye).sum((-2, -1))  # einsum('NMKK->NM')
    if compute == "diagonal":
        return (result * eye).sum(-1)  # einsum('NMKK->NMK')


result_from_ntk_vps = empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test)
result_from_jacobian_contraction = empirical_ntk_jacobian_contraction(
    fnet_single, params, x_train, x_test
)
print(tuple(result_from_ntk_vps.shape))
print(torch.allclose(result_from_ntk_vps, result_from_jacobian_contraction, atol=1e-5))
print(result_from_ntk_vps[1, 1].tolist())

trace = empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test, "trace")
diagonal = empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test, "diagonal")
print(tuple(trace.shape), trace[0].tolist())
print(tuple(diagonal.shape), diagonal[2, 0].tolist())
