# Mirrors: MorvanZhou/PyTorch-Tutorial, tutorial-contents/302_classification.py and
# 303_build_nn_quickly.py (two clusters around +2 and -2 of torch.ones(100, 2),
# torch.cat((x0, x1), 0).type(torch.FloatTensor), labels .type(torch.LongTensor), a Net
# with F.relu trained by SGD(lr=0.02) on CrossEntropyLoss, torch.max(out, 1)[1] as the
# prediction and the accuracy from .data.numpy(); then the same net built quickly with
# torch.nn.Sequential). The cluster points are drawn with numpy instead of torch.normal.
# precision: float32
import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float32)
rng = np.random.default_rng(302)

n_data = torch.ones(100, 2)
x0 = 2 * n_data + torch.from_numpy(rng.standard_normal((100, 2)).astype(np.float32))  # class0
y0 = torch.zeros(100)  # class0 y data (tensor), shape=(100, )
x1 = -2 * n_data + torch.from_numpy(rng.standard_normal((100, 2)).astype(np.float32))
y1 = torch.ones(100)  # class1 y data (tensor), shape=(100, )
x = torch.cat((x0, x1), 0).type(torch.FloatTensor)  # shape (200, 2) FloatTensor = 32-bit
y = torch.cat(
    (y0, y1),
).type(torch.LongTensor)  # shape (200,) LongTensor = 64-bit integer
print(x.dtype == torch.float32, y.dtype == torch.int64, x.type(), y.type())


class Net(torch.nn.Module):
    def __init__(self, n_feature, n_hidden, n_output):
        super(Net, self).__init__()
        self.hidden = torch.nn.Linear(n_feature, n_hidden)  # hidden layer
        self.out = torch.nn.Linear(n_hidden, n_output)  # output layer

    def forward(self, x):
        x = F.relu(self.hidden(x))  # activation function for hidden layer
        x = self.out(x)
        return x


net = Net(n_feature=2, n_hidden=10, n_output=2)  # define the network
net2 = torch.nn.Sequential(
    torch.nn.Linear(2, 10),
    torch.nn.ReLU(),
    torch.nn.Linear(10, 2),
)
with torch.no_grad():  # one set of starting weights for both nets
    for p, q in zip(net.parameters(), net2.parameters()):
        start = torch.from_numpy(rng.uniform(-0.5, 0.5, tuple(p.shape)).astype(np.float32))
        p.copy_(start)
        q.copy_(start)
print(net)
print(net2)

for model in (net, net2):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.02)
    # the target label is NOT one-hotted
    loss_func = torch.nn.CrossEntropyLoss()

    for t in range(100):
        out = model(x)  # input x and predict based on x
        loss = loss_func(out, y)  # must be (1. nn output, 2. target)

        optimizer.zero_grad()  # clear gradients for next train
        loss.backward()  # backpropagation, compute gradients
        optimizer.step()  # apply gradients

        if t % 25 == 0:
            prediction = torch.max(out, 1)[1]
            pred_y = prediction.data.numpy()
            target_y = y.data.numpy()
            accuracy = float((pred_y == target_y).astype(int).sum()) / float(target_y.size)
            print("step %d Loss=%.5f Accuracy=%.2f" % (t, loss.item(), accuracy))

print(F.softmax(net(x[:3]), dim=1).tolist())
print(torch.equal(torch.max(net(x), 1)[1], torch.max(net2(x), 1)[1]))
