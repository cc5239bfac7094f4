# Mirrors: MorvanZhou/PyTorch-Tutorial, tutorial-contents/306_optimizer.py (four copies of
# one Net, trained side by side on the same mini-batches of a DataLoader by SGD, SGD with
# momentum=0.8, RMSprop(alpha=0.9) and Adam(betas=(0.9, 0.99)); each loss history kept
# from loss.data.numpy()). The data are 200 points with numpy noise rather than 1000 with
# torch.normal, the loader does not shuffle (torch's and numpy's draws differ), and three
# epochs replace twelve.
# precision: float32
import numpy as np
import torch
import torch.nn.functional as F
import torch.utils.data as Data

torch.set_default_dtype(torch.float32)
rng = np.random.default_rng(306)

LR = 0.01
BATCH_SIZE = 32
EPOCH = 3

# fake dataset
x = torch.unsqueeze(torch.linspace(-1, 1, 200), dim=1)
y = x.pow(2) + 0.1 * torch.from_numpy(rng.standard_normal(tuple(x.size())).astype(np.float32))

torch_dataset = Data.TensorDataset(x, y)
loader = Data.DataLoader(dataset=torch_dataset, batch_size=BATCH_SIZE, shuffle=False)


# default network
class Net(torch.nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.hidden = torch.nn.Linear(1, 20)  # hidden layer
        self.predict = torch.nn.Linear(20, 1)  # output layer

    def forward(self, x):
        x = F.relu(self.hidden(x))  # activation function for hidden layer
        x = self.predict(x)  # linear output
        return x


# different nets
net_SGD = Net()
net_Momentum = Net()
net_RMSprop = Net()
net_Adam = Net()
nets = [net_SGD, net_Momentum, net_RMSprop, net_Adam]
starts = [rng.uniform(-0.7, 0.7, tuple(p.shape)).astype(np.float32) for p in net_SGD.parameters()]
with torch.no_grad():
    for net in nets:
        for p, start in zip(net.parameters(), starts):
            p.copy_(torch.from_numpy(start))

# different optimizers
opt_SGD = torch.optim.SGD(net_SGD.parameters(), lr=LR)
opt_Momentum = torch.optim.SGD(net_Momentum.parameters(), lr=LR, momentum=0.8)
opt_RMSprop = torch.optim.RMSprop(net_RMSprop.parameters(), lr=LR, alpha=0.9)
opt_Adam = torch.optim.Adam(net_Adam.parameters(), lr=LR, betas=(0.9, 0.99))
optimizers = [opt_SGD, opt_Momentum, opt_RMSprop, opt_Adam]

loss_func = torch.nn.MSELoss()
losses_his = [[], [], [], []]  # record loss

# training
for epoch in range(EPOCH):
    print("Epoch: ", epoch)
    for _step, (b_x, b_y) in enumerate(loader):  # for each training step
        for net, opt, l_his in zip(nets, optimizers, losses_his):
            output = net(b_x)  # get output for every net
            loss = loss_func(output, b_y)  # compute loss for every net
            opt.zero_grad()  # clear gradients for next train
            loss.backward()  # backpropagation, compute gradients
            opt.step()  # apply gradients
            l_his.append(loss.data.numpy())  # loss recoder

labels = ["SGD", "Momentum", "RMSprop", "Adam"]
for label, l_his in zip(labels, losses_his):
    print(label, len(l_his), [float(v) for v in l_his[::7]])
