# Mirrors: PyTorch 60-minute blitz, "Neural Networks" (neural_networks_tutorial): the
# LeNet-style Net with Conv2d and F.max_pool2d, its parameters, a forward pass on one
# 32x32 image, MSELoss, the gradients of conv1's bias, the manual SGD rule and optim.SGD --
# on small random data made here (no dataset is downloaded).
# precision: float64
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        # 1 input image channel, 6 output channels, 5x5 square convolution kernel
        self.conv1 = nn.Conv2d(1, 6, 5)
        self.conv2 = nn.Conv2d(6, 16, 5)
        # an affine operation: y = Wx + b
        self.fc1 = nn.Linear(16 * 5 * 5, 120)  # 5*5 from image dimension
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        # Max pooling over a (2, 2) window
        x = F.max_pool2d(F.relu(self.conv1(x)), (2, 2))
        # If the size is a square, you can specify with a single number
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(-1, self.num_flat_features(x))
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x

    def num_flat_features(self, x):
        size = x.size()[1:]  # all dimensions except the batch dimension
        num_features = 1
        for s in size:
            num_features *= s
        return num_features


net = Net()
print(net)
rng = np.random.default_rng(0)
with torch.no_grad():  # the same starting weights on both sides
    for p in net.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.2, 0.2, tuple(p.shape))))

params = list(net.parameters())
print(len(params))
print(params[0].size())  # conv1's .weight

input = torch.from_numpy(rng.normal(size=(1, 1, 32, 32)))
out = net(input)
print(out.shape, out.tolist())

net.zero_grad()
out.backward(torch.from_numpy(rng.normal(size=(1, 10))))

output = net(input)
target = torch.from_numpy(rng.normal(size=10))  # a dummy target, for example
target = target.view(1, -1)  # make it the same shape as output
criterion = nn.MSELoss()
loss = criterion(output, target)
print(loss)
print(loss.grad_fn.name())  # MSELoss
print(loss.grad_fn.next_functions[0][0].name())  # Linear

net.zero_grad()  # zeroes the gradient buffers of all parameters
print("conv1.bias.grad before backward")
print(net.conv1.bias.grad)
loss.backward()
print("conv1.bias.grad after backward")
print(net.conv1.bias.grad)

learning_rate = 0.01
for f in net.parameters():
    f.data.sub_(f.grad.data * learning_rate)
print(net(input).tolist())

import torch.optim as optim  # noqa: E402  (imported here, as the tutorial does)

# create your optimizer
optimizer = optim.SGD(net.parameters(), lr=0.01)
for step in range(3):
    # in your training loop:
    optimizer.zero_grad()  # zero the gradient buffers
    output = net(input)
    loss = criterion(output, target)
    loss.backward()
    optimizer.step()  # Does the update
    print(step, loss.item())
print(net.conv2.weight.grad[0, 0])
