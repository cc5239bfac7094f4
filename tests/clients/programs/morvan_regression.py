# Mirrors: MorvanZhou/PyTorch-Tutorial, tutorial-contents/301_regression.py (a Net subclass
# of torch.nn.Module with hidden/predict Linear layers and F.relu, fit to y = x^2 + noise on
# torch.unsqueeze(torch.linspace(-1, 1, 100), dim=1) with torch.optim.SGD(lr=0.2) and
# torch.nn.MSELoss for 200 steps). The noise and the starting weights come from numpy;
# the original's float32 is asked for explicitly.
# precision: float32
import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float32)
rng = np.random.default_rng(301)

x = torch.unsqueeze(torch.linspace(-1, 1, 100), dim=1)  # x data (tensor), shape=(100, 1)
y = x.pow(2) + 0.2 * torch.from_numpy(rng.random(tuple(x.size())).astype(np.float32))


class Net(torch.nn.Module):
    def __init__(self, n_feature, n_hidden, n_output):
        super(Net, self).__init__()
        self.hidden = torch.nn.Linear(n_feature, n_hidden)  # hidden layer
        self.predict = torch.nn.Linear(n_hidden, n_output)  # output layer

    def forward(self, x):
        x = F.relu(self.hidden(x))  # activation function for hidden layer
        x = self.predict(x)  # linear output
        return x


net = Net(n_feature=1, n_hidden=10, n_output=1)  # define the network
with torch.no_grad():
    for p in net.parameters():
        p.copy_(torch.from_numpy(rng.uniform(-0.8, 0.8, tuple(p.shape)).astype(np.float32)))
print(net)  # net architecture

optimizer = torch.optim.SGD(net.parameters(), lr=0.2)
loss_func = torch.nn.MSELoss()  # this is for regression mean squared loss

for t in range(200):
    prediction = net(x)  # input x and predict based on x

    loss = loss_func(prediction, y)  # must be (1. nn output, 2. target)

    optimizer.zero_grad()  # clear gradients for next train
    loss.backward()  # backpropagation, compute gradients
    optimizer.step()  # apply gradients

    if t % 40 == 0 or t == 199:
        print("step %d Loss=%.6f" % (t, loss.data.numpy()))

print(prediction.data.numpy()[::25, 0].tolist())
