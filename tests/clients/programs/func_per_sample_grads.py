# Mirrors: PyTorch tutorial "Per-sample-gradients" (torch.func): the gradient of every
# sample of a batch, first by a loop of autograd.grad over single-sample batches, then by
# vmap(grad(compute_loss), in_dims=(None, 0, 0)) over a functional_call of the model with
# its detached parameters, and the two compared. The tutorial's model is a CNN; this one
# is an MLP with the same log_softmax + nll_loss head, on deterministic data.
# precision: float64
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(3)


class SimpleMLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(6, 8)
        self.fc2 = nn.Linear(8, 3)

    def forward(self, x):
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        return F.log_softmax(x, dim=1)


def loss_fn(predictions, targets):
    return F.nll_loss(predictions, targets)


model = SimpleMLP()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.5))

batch_size = 5
data = torch.tensor(rng.standard_normal((batch_size, 6)))
targets = torch.tensor(rng.integers(0, 3, batch_size))

predictions = model(data)
loss = loss_fn(predictions, targets)
loss.backward()
print("batch loss:", loss.item())


def compute_grad(sample, target):
    sample = sample.unsqueeze(0)
    target = target.unsqueeze(0)
    prediction = model(sample)
    loss = loss_fn(prediction, target)
    return torch.autograd.grad(loss, list(model.parameters()))


def compute_sample_grads(data, targets):
    sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
    sample_grads = zip(*sample_grads)
    return [torch.stack(shards) for shards in sample_grads]


per_sample_grads = compute_sample_grads(data, targets)
print("loop:", [list(g.shape) for g in per_sample_grads])

params = {k: v.detach() for k, v in model.named_parameters()}


def compute_loss(params, sample, target):
    batch = sample.unsqueeze(0)
    targets = target.unsqueeze(0)
    predictions = functional_call(model, params, (batch,))
    loss = loss_fn(predictions, targets)
    return loss


ft_compute_grad = grad(compute_loss)
ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, 0, 0))
ft_per_sample_grads = ft_compute_sample_grad(params, data, targets)

for per_sample_grad, (name, ft_per_sample_grad) in zip(
    per_sample_grads, ft_per_sample_grads.items()
):
    print(
        name,
        list(ft_per_sample_grad.shape),
        torch.allclose(per_sample_grad, ft_per_sample_grad, atol=1e-10, rtol=1e-8),
    )
print(
    "fc2.bias per sample:",
    [[round(v, 12) for v in row] for row in ft_per_sample_grads["fc2.bias"].tolist()],
)
print("fc1.weight sample 2 sum:", ft_per_sample_grads["fc1.weight"][2].sum().item())
# the mean of the per-sample gradients is the batch gradient
mean_grad = ft_per_sample_grads["fc2.weight"].mean(0)
print("mean matches .grad:", torch.allclose(mean_grad, model.fc2.weight.grad))
