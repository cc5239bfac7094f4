# Mirrors: the torch.nn.Parameter and torch.nn.Module reference ("Parameter containing:"
# when printed, a module's nested repr with extra_repr, pickling a model after backward,
# copy.deepcopy(model) for a target network as in the DQN tutorial, which starts without
# gradients, and state_dict keys).
# precision: float64
import copy
import pickle

import torch
from torch import nn

torch.set_default_dtype(torch.float64)


class QNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.layer1 = nn.Linear(4, 3)
        self.act = nn.ReLU()
        self.head = nn.Sequential(nn.Linear(3, 2), nn.Softmax(dim=-1))

    def forward(self, x):
        return self.head(self.act(self.layer1(x)))


policy_net = QNet()
with torch.no_grad():
    for i, p in enumerate(policy_net.parameters()):
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (i + 1))
print(policy_net)
print(policy_net.head[0].bias)
print(nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False))

out = policy_net(torch.tensor([[0.1, 0.2, 0.3, 0.4], [-0.4, 0.3, -0.2, 0.1]]))
out[:, 0].sum().backward()
print(policy_net.layer1.weight.grad.tolist())

target_net = copy.deepcopy(policy_net)
print(target_net.layer1.weight.grad, target_net.layer1.weight.requires_grad)
print(target_net.layer1.weight.tolist() == policy_net.layer1.weight.tolist())
print(target_net.layer1.weight is policy_net.layer1.weight)
target_net.load_state_dict(policy_net.state_dict())
print(list(target_net.state_dict().keys()))

restored = pickle.loads(pickle.dumps(policy_net))
print(type(restored.layer1.weight).__name__, restored.layer1.weight.grad)
print(restored.head[0].weight.tolist())
param = pickle.loads(pickle.dumps(policy_net.layer1.bias))
print(param.requires_grad, param.is_leaf, param.tolist())
