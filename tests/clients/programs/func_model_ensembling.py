# Mirrors: PyTorch tutorial "Model ensembling" (torch.func): several SimpleMLPs run on
# different minibatches and on one shared minibatch, first by a Python loop, then with
# stack_module_state + functional_call on a copy of the first model, under vmap with
# in_dims 0 and in_dims=(0, 0, None). Smaller sizes and deterministic parameters and data
# in place of random ones; the tutorial's base_model.to('meta') is left out (naivegraph
# has the CPU only).
# precision: float64
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, stack_module_state, vmap

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(5)


class SimpleMLP(nn.Module):
    def __init__(self):
        super(SimpleMLP, self).__init__()
        self.fc1 = nn.Linear(16, 8)
        self.fc2 = nn.Linear(8, 8)
        self.fc3 = nn.Linear(8, 3)

    def forward(self, x):
        x = x.flatten(1)
        x = self.fc1(x)
        x = F.relu(x)
        x = self.fc2(x)
        x = F.relu(x)
        x = self.fc3(x)
        return x


num_models = 3
data = torch.tensor(rng.standard_normal((6, 5, 1, 4, 4)))
models = [SimpleMLP() for _ in range(num_models)]
with torch.no_grad():
    for model in models:
        for p in model.parameters():
            p.copy_(torch.tensor(rng.standard_normal(tuple(p.shape)) * 0.4))

minibatches = data[:num_models]
predictions_diff_minibatch_loop = [
    model(minibatch) for model, minibatch in zip(models, minibatches)
]
minibatch = data[0]
predictions2 = [model(minibatch) for model in models]

params, buffers = stack_module_state(models)
print("stacked:", {k: list(v.shape) for k, v in params.items()}, buffers)
print("leaves that require grad:", all(p.is_leaf and p.requires_grad for p in params.values()))

base_model = copy.deepcopy(models[0])


def fmodel(params, buffers, x):
    return functional_call(base_model, (params, buffers), (x,))


print([p.size(0) for p in params.values()])
predictions1_vmap = vmap(fmodel)(params, buffers, minibatches)
print(
    "different minibatches agree:",
    torch.allclose(
        predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5
    ),
)
print(
    "model 1 minibatch 1:", [[round(v, 12) for v in row] for row in predictions1_vmap[1].tolist()]
)

predictions2_vmap = vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
print(
    "same minibatch agrees:",
    torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5),
)
print("shape:", list(predictions2_vmap.shape), "sum:", round(predictions2_vmap.sum().item(), 12))
# the base model keeps its own parameters
print("base model unchanged:", bool((base_model.fc1.weight == models[0].fc1.weight).all()))
