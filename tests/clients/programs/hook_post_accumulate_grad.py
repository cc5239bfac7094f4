# Mirrors: PyTorch tutorial "How to save memory by fusing the optimizer step into the
# backward pass" (optimizer_step_in_backward_tutorial), with the parameter update of the
# Tensor.register_post_accumulate_grad_hook docstring (p.add_(p.grad, alpha=-lr)): one
# optimizer per parameter, stepped by a hook as soon as that parameter's gradient is
# accumulated -- on a small MLP and random data made here.
# precision: float64
import numpy as np
import torch

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(7)
model = torch.nn.Sequential(torch.nn.Linear(5, 8), torch.nn.Tanh(), torch.nn.Linear(8, 2))
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.normal(0, 0.5, tuple(p.shape))))

# Instead of having just *one* optimizer, we will have a ``dict`` of optimizers
# for every parameter so we could reference them in our hook.
optimizer_dict = {p: torch.optim.Adam([p], foreach=False) for p in model.parameters()}


# Define our hook, which will call the optimizer ``step()`` and ``zero_grad()``
def optimizer_hook(parameter) -> None:
    optimizer_dict[parameter].step()
    optimizer_dict[parameter].zero_grad()


# Register the hook onto every parameter
for p in model.parameters():
    p.register_post_accumulate_grad_hook(optimizer_hook)

x = torch.from_numpy(rng.normal(size=(16, 5)))
y = torch.from_numpy(rng.normal(size=(16, 2)))
for step in range(5):
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()  # the hooks step the optimizers: no optimizer.step() here
    print(step, loss.item(), [p.grad for p in model.parameters()][0])
print(model[0].bias.tolist())

# the docstring's form: plain SGD written into the hook, in place
lr = 0.01
weight = torch.tensor([1.0, -2.0, 0.5], requires_grad=True)


def sgd_hook(p):
    p.add_(p.grad, alpha=-lr)
    p.grad = None


handle = weight.register_post_accumulate_grad_hook(sgd_hook)
for _ in range(3):
    (weight**2).sum().backward()
    print(weight.tolist(), weight.grad, weight._version)
handle.remove()
(weight**2).sum().backward()
print(weight.tolist(), weight.grad.tolist())
