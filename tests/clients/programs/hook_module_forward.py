# Mirrors: the forward hooks of torch.nn.Module as feature-extraction posts and the
# PyTorch docs use them: register_forward_hook to save intermediate activations
# ("activation[name] = output.detach()"), register_forward_pre_hook to inspect and rescale
# an input, a hook that replaces a module's output, handles removed -- on a small CNN and
# random images made here.
# precision: float64
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
rng = np.random.default_rng(9)


class SmallNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, 3)
        self.fc = nn.Linear(8 * 2 * 2, 3)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.avg_pool2d(F.relu(self.conv2(x)), 2)
        return self.fc(torch.flatten(x, 1))


model = SmallNet()
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.3, 0.3, tuple(p.shape))))

activation = {}


def get_activation(name):
    def hook(model, input, output):
        activation[name] = output.detach()

    return hook


handles = [
    model.conv1.register_forward_hook(get_activation("conv1")),
    model.conv2.register_forward_hook(get_activation("conv2")),
]
x = torch.from_numpy(rng.normal(size=(2, 1, 14, 14)))
output = model(x)
print(output.tolist())
for name, value in activation.items():
    print(name, value.shape, value.sum().item(), value.requires_grad)


def print_input_shape(module, args):
    print("pre-hook:", type(module).__name__, [a.shape for a in args])


def halve_input(module, args):
    return (args[0] * 0.5,)


pre = model.fc.register_forward_pre_hook(print_input_shape)
half = model.fc.register_forward_pre_hook(halve_input)
print(model(x).tolist())
half.remove()


def clamp_output(module, args, output):
    return output.clamp(min=-0.1, max=0.1)


clamp = model.register_forward_hook(clamp_output)
print(model(x).tolist())
for h in handles + [pre, clamp]:
    h.remove()
print(model(x).tolist() == output.tolist(), len(activation))
