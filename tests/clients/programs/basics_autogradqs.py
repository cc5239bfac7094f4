# Mirrors: PyTorch tutorial "Automatic Differentiation with torch.autograd"
# (beginner basics/autogradqs: a one-layer net with BCE-with-logits loss, grad_fn,
# disabling tracking, and the "Optional Reading" Jacobian-product section).
# precision: float64
import torch

torch.set_default_dtype(torch.float64)
x = torch.ones(5)  # input tensor
y = torch.zeros(3)  # expected output
# torch.randn(5, 3) / torch.randn(3) in the tutorial: fixed values keep both runs identical
w = torch.tensor(
    [[0.5, -0.3, 0.1], [0.2, 0.4, -0.6], [-0.1, 0.7, 0.3], [0.9, -0.2, 0.05], [0.0, 0.1, -0.4]],
    requires_grad=True,
)
b = torch.tensor([0.1, -0.2, 0.3], requires_grad=True)
z = torch.matmul(x, w) + b
loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)

print(f"Gradient function for z = {type(z.grad_fn).__name__}")
print(f"Gradient function for loss = {type(loss.grad_fn).__name__}")
print("loss", loss.item())

loss.backward()
print(w.grad.tolist())
print(b.grad.tolist())

z = torch.matmul(x, w) + b
print(z.requires_grad)
with torch.no_grad():
    z = torch.matmul(x, w) + b
print(z.requires_grad)

z = torch.matmul(x, w) + b
z_det = z.detach()
print(z_det.requires_grad)

inp = torch.eye(4, 5, requires_grad=True)
out = (inp + 1).pow(2).t()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"First call\n{inp.grad.tolist()}")
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nSecond call\n{inp.grad.tolist()}")
inp.grad.zero_()
out.backward(torch.ones_like(out), retain_graph=True)
print(f"\nCall after zeroing gradients\n{inp.grad.tolist()}")
