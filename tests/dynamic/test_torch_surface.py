"""PyTorch's top-level surface (devices, default dtype, legacy types, inference mode,
save/load) and tensor methods, each compared with torch where torch has the call."""

import io
import json
from collections import OrderedDict

import numpy as np
import pytest

import naivegraph as ng


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture
def default_float64(torch):
    """Both libraries' default dtype float64 for one test, float32 again after it."""
    ng.set_default_dtype(ng.float64)
    torch.set_default_dtype(torch.float64)
    yield
    ng.set_default_dtype(ng.float32)
    torch.set_default_dtype(torch.float32)


# -- devices ---------------------------------------------------------------------------
def test_device_repr_str_and_equality_match_torch(torch):
    assert repr(ng.device("cpu")) == repr(torch.device("cpu")) == "device(type='cpu')"
    assert repr(ng.device("cuda:1")) == repr(torch.device("cuda:1"))
    assert repr(ng.device("cuda", 0)) == repr(torch.device("cuda", 0))
    assert str(ng.device("cuda:1")) == "cuda:1"
    assert ng.device("cpu") == ng.device("cpu") and ng.device("cpu") != ng.device("cuda")
    assert (ng.device("cpu") == "cpu") == (torch.device("cpu") == "cpu") == False  # noqa: E712


def test_tensor_device_is_the_cpu_device():
    assert ng.ones(2).device == ng.device("cpu")
    assert repr(ng.ones(2).device) == "device(type='cpu')"


def test_unknown_device_type_is_refused_as_torch_does(torch):
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        torch.device("gpu")
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda.*: gpu"):
        ng.device("gpu")


FACTORY_CALLS = {
    "tensor": lambda d: ng.tensor([1.0], device=d),
    "zeros": lambda d: ng.zeros(2, device=d),
    "ones": lambda d: ng.ones(2, device=d),
    "full": lambda d: ng.full((2,), 1.0, device=d),
    "arange": lambda d: ng.arange(3, device=d),
    "linspace": lambda d: ng.linspace(0, 1, 3, device=d),
    "rand": lambda d: ng.rand(2, device=d),
    "randn": lambda d: ng.randn(2, device=d),
    "randint": lambda d: ng.randint(0, 3, (2,), device=d),
    "eye": lambda d: ng.eye(2, device=d),
    "empty": lambda d: ng.empty(2, device=d),
    "zeros_like": lambda d: ng.zeros_like(ng.ones(2), device=d),
    "ones_like": lambda d: ng.ones_like(ng.ones(2), device=d),
    "full_like": lambda d: ng.full_like(ng.ones(2), 3.0, device=d),
    "rand_like": lambda d: ng.rand_like(ng.ones(2), device=d),
    "randn_like": lambda d: ng.randn_like(ng.ones(2), device=d),
    "empty_like": lambda d: ng.empty_like(ng.ones(2), device=d),
    "to": lambda d: ng.ones(2).to(d),
    "to_keyword": lambda d: ng.ones(2).to(device=d),
    "FloatTensor": lambda d: ng.FloatTensor([1, 2], device=d),
}


@pytest.mark.parametrize("name", sorted(FACTORY_CALLS))
@pytest.mark.parametrize("cpu", ["cpu", "cpu:0", ng.device("cpu")], ids=str)
def test_every_factory_accepts_the_cpu_device(name, cpu):
    assert FACTORY_CALLS[name](cpu).device == ng.device("cpu")


@pytest.mark.parametrize("name", sorted(FACTORY_CALLS))
@pytest.mark.parametrize("gpu", ["cuda", "cuda:0", ng.device("mps")], ids=str)
def test_every_factory_refuses_another_device_saying_naivegraph_runs_on_the_cpu(name, gpu):
    with pytest.raises(RuntimeError, match="naivegraph runs on the CPU only"):
        FACTORY_CALLS[name](gpu)


def test_cuda_method_is_refused_and_cpu_returns_the_tensor_itself():
    t = ng.ones(2)
    assert t.cpu() is t
    with pytest.raises(RuntimeError, match="runs on the CPU only.*'cuda'"):
        t.cuda()


def test_cuda_is_not_available_so_learner_code_takes_the_cpu_branch(torch):
    assert ng.cuda.is_available() is False and ng.cuda.device_count() == 0
    chosen = ng.device("cuda" if ng.cuda.is_available() else "cpu")
    assert ng.randn(2, 3, device=chosen).to(chosen).shape == (2, 3)


# -- default dtype ---------------------------------------------------------------------
def test_default_dtype_is_float32_as_torchs(torch):
    assert ng.get_default_dtype() == np.float32
    assert torch.get_default_dtype() == torch.float32


_FACTORIES = {
    "tensor": lambda m: m.tensor([1.5]),
    "tensor_scalar": lambda m: m.tensor(1.5),
    "tensor_ints": lambda m: m.tensor([1, 2]),
    "tensor_complex": lambda m: m.tensor([1 + 2j]),
    "ones": lambda m: m.ones(2),
    "zeros": lambda m: m.zeros(2),
    "full_float": lambda m: m.full((2,), 1.5),
    "full_int": lambda m: m.full((2,), 1),
    "arange_float": lambda m: m.arange(3.0),
    "arange_int": lambda m: m.arange(3),
    "linspace": lambda m: m.linspace(0, 1, 3),
    "rand": lambda m: m.rand(2),
    "randn": lambda m: m.randn(2),
    "eye": lambda m: m.eye(2),
    "empty": lambda m: m.empty(2),
    "Tensor": lambda m: m.Tensor([1.5]),
    "Tensor_ints": lambda m: m.Tensor([1, 2]),
    "Tensor_numpy_ints": lambda m: m.Tensor(np.array([1, 2])),
    "Tensor_numpy_float64": lambda m: m.Tensor(np.array([1.5])),
    "numpy_float64": lambda m: m.tensor(np.array([1.5])),
    "from_numpy_float64": lambda m: m.from_numpy(np.array([1.5])),
    "from_numpy_float32": lambda m: m.from_numpy(np.array([1.5], np.float32)),
    "Linear": lambda m: m.nn.Linear(2, 2).weight,
    "Embedding": lambda m: m.nn.Embedding(3, 2).weight,
}


def _same_dtypes(torch, calls):
    for name, call in calls.items():
        assert str(call(ng).dtype) == str(call(torch).dtype).removeprefix("torch."), name


def test_python_floats_become_float32_and_numpy_arrays_keep_their_dtype_as_in_torch(torch):
    _same_dtypes(torch, _FACTORIES)
    assert ng.tensor(2.0).dtype == ng.ones(2).dtype == ng.nn.Linear(2, 2).bias.dtype == np.float32
    assert repr(ng.tensor([1.5])) == repr(torch.tensor([1.5])) == "tensor([1.5000])"
    assert repr(ng.tensor([1.5], dtype=ng.float64)) == "tensor([1.5000], dtype=float64)"
    for value in ([1 + 2j], [1.5 + 2j, -0.25 - 3j], [1e-5 + 1j], 1j):  # complex64: no dtype
        assert repr(ng.tensor(value)) == repr(torch.tensor(value))


def test_set_default_dtype_float64_makes_python_floats_float64_as_in_torch(torch, default_float64):
    _same_dtypes(torch, _FACTORIES)
    assert ng.tensor(2.0).dtype == np.float64
    assert repr(ng.tensor([1.5])) == "tensor([1.5000])"
    assert repr(ng.tensor([1.5], dtype=ng.float32)) == "tensor([1.5000], dtype=float32)"


_PROMOTIONS = {
    "int tensor + float": lambda m: m.tensor([1, 2]) + 2.5,
    "float + 0-d int tensor": lambda m: 2.5 * m.tensor(3),
    "int tensor / int": lambda m: m.tensor([1, 2]) / 2,
    "exp of int": lambda m: m.tensor([1, 2]).exp(),
    "bool tensor + float": lambda m: m.tensor([True]) + 1.5,
    "int tensor * complex": lambda m: m.tensor([1, 2]) * (1 + 2j),
    "float32 + float": lambda m: m.ones(2, dtype=m.float32) + 0.1,
    "float64 + float": lambda m: m.ones(2, dtype=m.float64) + 0.1,
    "float16 + float": lambda m: m.ones(2, dtype=m.float16) + 0.1,
    "float32 + int": lambda m: m.ones(2, dtype=m.float32) + 2**40,
    "float64 + 0-d float32": lambda m: m.ones(2, dtype=m.float64) + m.tensor(2.0),
    "float32 + 0-d float64": lambda m: m.ones(2) + m.tensor(2.0, dtype=m.float64),
    "0-d float32 + 0-d float64": lambda m: m.tensor(2.0) + m.tensor(2.0, dtype=m.float64),
}


def test_python_numbers_with_tensors_promote_to_the_default_dtype_as_in_torch(torch):
    _same_dtypes(torch, _PROMOTIONS)
    assert (ng.tensor([1, 2]) + 0.1).tolist() == (torch.tensor([1, 2]) + 0.1).tolist()


_NUMPY_SCALARS = {
    "float32 * np.float64": lambda m: m.ones(2) * np.float64(0.1),
    "np.sqrt(2) + float32": lambda m: np.sqrt(2.0) + m.ones(2),
    "0-d float32 * np.float64": lambda m: m.tensor(2.0) * np.float64(3.0),
    "int * np.float16": lambda m: m.tensor([1, 2]) * np.float16(2.0),
    "int8 * np.int32": lambda m: m.tensor([1, 2], dtype=m.int8) * np.int32(3),
    "float16 * np.float64": lambda m: m.ones(2, dtype=m.float16) * np.float64(3.0),
    "mul(np.float64)": lambda m: m.ones(2).mul(np.float64(3.0)),
}


def test_numpy_scalars_count_as_python_numbers_as_in_torch(torch):
    # np.sqrt(2.0) is an np.float64: it must not widen a float32 model's tensors
    _same_dtypes(torch, _NUMPY_SCALARS)
    assert (ng.ones(2) * np.float64(0.1)).tolist() == (torch.ones(2) * np.float64(0.1)).tolist()


@pytest.mark.parametrize(
    "make",
    [
        lambda m: m.ones(1, dtype=m.float32) + 2**70,
        lambda m: m.ones(1, dtype=m.float64) * 2**64,
        lambda m: m.tensor(2.0, requires_grad=True) - 2**70,
        lambda m: 2**70 * m.tensor(2.0),
        lambda m: m.tensor([1, 2]) + 2**70,
        lambda m: m.ones(2).add(2**70),
    ],
)
def test_a_python_int_beyond_64_bits_is_refused_even_next_to_a_float_as_in_torch(torch, make):
    for lib in (torch, ng):
        with pytest.raises(OverflowError, match="int too big to convert"):
            make(lib)
    assert (ng.ones(1) * (2**64 - 1)).tolist() == (torch.ones(1) * (2**64 - 1)).tolist()
    with pytest.raises(OverflowError, match="write it as a float"):
        make(ng)


def test_python_numbers_promote_to_float64_once_it_is_the_default(torch, default_float64):
    _same_dtypes(torch, _PROMOTIONS)
    assert (ng.tensor([1, 2]) / 2).dtype == np.float64


def test_set_default_dtype_refuses_non_floating_types(torch):
    with pytest.raises(TypeError, match="only floating-point types are supported"):
        torch.set_default_dtype(torch.int64)
    for bad in (ng.int64, float, "int32", None):
        with pytest.raises(
            TypeError, match="only floating-point types are supported as the default type"
        ):
            ng.set_default_dtype(bad)
    assert ng.get_default_dtype() == np.float32


# -- legacy constructors -----------------------------------------------------------------
def test_legacy_constructors_match_torch(torch):
    pairs = [
        (ng.FloatTensor([1, 2]), torch.FloatTensor([1, 2])),
        (ng.DoubleTensor([1.5, 2]), torch.DoubleTensor([1.5, 2])),
        (ng.LongTensor([1, 2]), torch.LongTensor([1, 2])),
        (ng.FloatTensor(2, 3), torch.FloatTensor(2, 3)),
        (ng.LongTensor(4), torch.LongTensor(4)),
        (ng.FloatTensor(), torch.FloatTensor()),
    ]
    for ours, theirs in pairs:
        assert ours.shape == tuple(theirs.shape)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    assert ng.FloatTensor([1, 2]).tolist() == [1.0, 2.0]
    assert ng.LongTensor([1, 2]).tolist() == [1, 2]


def test_isinstance_of_a_legacy_type_asks_for_its_dtype(torch):
    assert isinstance(ng.ones(2), ng.FloatTensor)
    assert not isinstance(ng.ones(2), ng.DoubleTensor)
    assert isinstance(ng.ones(2, dtype=ng.float64), ng.DoubleTensor)
    assert isinstance(ng.tensor([1]), ng.LongTensor)
    assert isinstance(torch.ones(2), torch.FloatTensor)


def test_legacy_constructor_refuses_other_arguments():
    with pytest.raises(TypeError, match=r"FloatTensor\(\) takes a shape of ints"):
        ng.FloatTensor("abc")


# -- size= keywords ------------------------------------------------------------------------
def test_rand_and_randn_take_size_as_a_keyword(torch):
    for name in ("rand", "randn", "zeros", "ones", "empty"):
        expected = tuple(getattr(torch, name)(size=(2, 3)).shape)
        assert getattr(ng, name)(size=(2, 3)).shape == expected
        assert getattr(ng, name)(size=[4]).shape == (4,)


def test_shape_and_size_together_are_refused(torch):
    with pytest.raises(TypeError, match="invalid combination of arguments"):
        torch.randn(2, size=(2, 3))
    with pytest.raises(TypeError, match="invalid combination of arguments.*give the shape once"):
        ng.randn(2, size=(2, 3))


def test_randint_with_high_and_size_only_starts_at_zero(torch):
    ng.manual_seed(0)
    values = ng.randint(3, (1000,))
    assert values.dtype == np.int64 and values.shape == (1000,)
    assert set(values.tolist()) == {0, 1, 2}
    assert tuple(torch.randint(3, (5,)).shape) == ng.randint(3, (5,)).shape


# -- inference_mode ------------------------------------------------------------------------
def test_inference_mode_records_no_history_as_a_block_and_as_decorators(torch):
    w = ng.tensor(2.0, requires_grad=True)
    with ng.inference_mode():
        assert not (w * 3).requires_grad
    assert (w * 3).requires_grad

    @ng.inference_mode()
    def called():
        return w * 3

    @ng.inference_mode
    def bare():
        return w * 3

    assert not called().requires_grad and not bare().requires_grad
    assert ng.is_grad_enabled()


def test_inference_mode_false_changes_nothing(torch):
    w = ng.tensor(2.0, requires_grad=True)
    with ng.inference_mode(False):
        assert (w * 3).requires_grad
    with ng.no_grad(), ng.inference_mode(False):
        assert not (w * 3).requires_grad


# -- save / load -----------------------------------------------------------------------------
def roundtrip(obj):
    buffer = io.BytesIO()
    ng.save(obj, buffer)
    buffer.seek(0)
    return ng.load(buffer)


def test_save_and_load_a_tensor_keeps_values_dtype_and_requires_grad(torch):
    for t in (
        ng.tensor([[1.5, -2.0], [3.0, 4.25]]),
        ng.tensor([1, 2], dtype=ng.int32),
        ng.tensor([True, False]),
        ng.tensor(3.0, requires_grad=True),
        ng.ones(2, dtype=ng.float32),
    ):
        back = roundtrip(t)
        assert back.dtype == t.dtype and back.tolist() == t.tolist()
        assert back.requires_grad == t.requires_grad and back.is_leaf


def test_save_and_load_nested_containers_of_tensors_and_numbers(torch):
    obj = {
        "epoch": 3,
        "loss": 0.25,
        "name": "run",
        "none": None,
        "history": [1.0, 2.0],
        "pair": (ng.ones(2), 7),
        "nested": {"w": [ng.zeros(1)]},
    }
    back = roundtrip(obj)
    assert list(back) == list(obj)
    assert back["epoch"] == 3 and back["loss"] == 0.25 and back["name"] == "run"
    assert back["none"] is None and back["history"] == [1.0, 2.0]
    assert isinstance(back["pair"], tuple) and back["pair"][0].tolist() == [1.0, 1.0]
    assert back["nested"]["w"][0].tolist() == [0.0]


def test_a_tensor_saved_twice_loads_as_one_shared_tensor_as_torch():
    t = ng.ones(2)
    a, b = roundtrip([t, t])
    assert a is b


def _saved_and_loaded(lib, obj):
    buffer = io.BytesIO()
    lib.save(obj, buffer)
    buffer.seek(0)
    return lib.load(buffer)


def test_two_views_of_one_storage_load_sharing_it_as_torch(torch):
    results = []
    for lib in (ng, torch):
        base = lib.arange(12.0, dtype=lib.float64).reshape(3, 4)
        loaded = _saved_and_loaded(lib, {"a": base[:2], "b": base[1:].t(), "c": base[2, 1:3]})
        assert loaded["a"].tolist() == base[:2].tolist() and loaded["b"].shape == (4, 2)
        loaded["a"][1, 2] = 100.0  # row 1 of base: row 0 of b, in b's column 0
        loaded["b"][3, 1] = -1.0  # base[2, 3]
        results.append([loaded[k].tolist() for k in "abc"])
    assert results[0] == results[1]
    assert results[0][1][2] == [100.0, 10.0] and results[0][2] == [9.0, 10.0]


def test_a_view_saved_alone_keeps_its_values_and_its_own_tensor_is_one_object():
    base = ng.arange(6.0, dtype=ng.float64)
    view = base[1::2]
    loaded = _saved_and_loaded(ng, [view, view, base[1::2]])
    assert loaded[0] is loaded[1] and loaded[2] is not loaded[0]
    assert loaded[0].tolist() == [1.0, 3.0, 5.0]
    loaded[0][0] = 7.0
    assert loaded[2].tolist() == [7.0, 3.0, 5.0]


def test_state_dict_saved_to_a_path_loads_into_another_module(tmp_path):
    ng.manual_seed(0)
    model = ng.nn.Sequential(ng.nn.Linear(2, 3), ng.nn.ReLU(), ng.nn.Linear(3, 1))
    path = tmp_path / "model.pt"
    ng.save(model.state_dict(), path)
    assert [p.name for p in tmp_path.iterdir()] == ["model.pt"]  # no suffix added
    other = ng.nn.Sequential(ng.nn.Linear(2, 3), ng.nn.ReLU(), ng.nn.Linear(3, 1))
    state = ng.load(str(path))
    assert isinstance(state, OrderedDict) and list(state) == list(model.state_dict())
    other.load_state_dict(state)
    x = ng.tensor([[0.5, -1.0]])
    assert other(x).tolist() == model(x).tolist()


def test_parameters_come_back_as_parameters():
    p = ng.nn.Parameter(ng.ones(2))
    back = roundtrip({"p": p})["p"]
    assert isinstance(back, ng.nn.Parameter) and back.requires_grad


def test_the_file_is_a_plain_npz_without_pickle(tmp_path):
    path = tmp_path / "x.pt"
    ng.save({"w": ng.ones(2)}, path)
    with np.load(path, allow_pickle=False) as archive:
        header = json.loads(bytes(archive["__naivegraph__"]).decode())
        assert archive["t0"].tolist() == [1.0, 1.0]
    assert header["format"] == 1


def test_saving_an_unsupported_object_is_refused_before_the_file_is_written(tmp_path):
    path = tmp_path / "m.pt"
    with pytest.raises(
        TypeError,
        match=r"ng.save cannot store the object\['m'\], a Linear.*"
        r"save a module's state_dict\(\)",
    ):
        ng.save({"m": ng.nn.Linear(1, 1)}, path)
    assert not path.exists()


def test_loading_a_file_not_written_by_save_is_a_clear_error(tmp_path, torch):
    path = tmp_path / "bad.pt"
    path.write_bytes(b"not an archive")
    with pytest.raises(RuntimeError, match="is not a file written by ng.save"):
        ng.load(path)
    torch.save({"w": torch.ones(2)}, tmp_path / "torch.pt")
    with pytest.raises(RuntimeError, match="never pickle, so not torch's files"):
        ng.load(tmp_path / "torch.pt")
    with pytest.raises(FileNotFoundError):
        ng.load(tmp_path / "missing.pt")


def test_load_map_location_may_only_name_the_cpu(tmp_path):
    path = tmp_path / "x.pt"
    ng.save(ng.ones(1), path)
    assert ng.load(path, map_location="cpu").tolist() == [1.0]
    with pytest.raises(RuntimeError, match="runs on the CPU only"):
        ng.load(path, map_location="cuda:0")


# -- tensor methods ---------------------------------------------------------------------------
def test_equal_compares_shape_and_values_as_torch(torch):
    cases = [
        ([1.0, 2.0], [1.0, 2.0]),
        ([1, 2], [1.0, 2.0]),
        ([1.0, 2.0], [1.0, 3.0]),
        ([1.0, 2.0], [1.0, 2.0, 3.0]),
        ([float("nan")], [float("nan")]),
    ]
    for a, b in cases:
        expected = torch.tensor(a).equal(torch.tensor(b))
        assert ng.tensor(a).equal(ng.tensor(b)) is expected
    with pytest.raises(TypeError, match="argument 'other' must be Tensor, not list"):
        ng.tensor([1.0]).equal([1.0])


@pytest.mark.parametrize("name", ["eq", "ne", "gt", "lt", "ge", "le"])
def test_comparison_methods_match_torch(torch, name):
    a, b = [1.0, 2.0, 3.0], [2.0, 2.0, 2.0]
    assert (
        getattr(ng.tensor(a), name)(ng.tensor(b)).tolist()
        == getattr(torch.tensor(a), name)(torch.tensor(b)).tolist()
    )
    assert getattr(ng.tensor(a), name)(2.0).tolist() == getattr(torch.tensor(a), name)(2.0).tolist()


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize(
    "data", [[[1, 0], [1, 1]], [[0.0, 0.0], [2.0, -1.0]], [[True, False], [False, False]], [[5]]]
)
def test_all_and_any_match_torch_with_and_without_dim(torch, name, data):
    ours, theirs = ng.tensor(data), torch.tensor(data)
    for kwargs in ({}, {"dim": 0}, {"dim": 1}, {"dim": 1, "keepdim": True}):
        result = getattr(ours, name)(**kwargs)
        expected = getattr(theirs, name)(**kwargs)
        assert result.dtype == np.bool_ and result.tolist() == expected.tolist(), kwargs


def test_square_is_pow_two_with_torchs_node_and_gradient(torch):
    x = ng.tensor([1.5, -2.0], requires_grad=True)
    tx = torch.tensor([1.5, -2.0], requires_grad=True, dtype=torch.float64)
    y, ty = x.square(), tx.square()
    assert y.grad_fn.name() == type(ty.grad_fn).__name__ == "PowBackward0"
    y.sum().backward()
    ty.sum().backward()
    assert y.tolist() == [2.25, 4.0] and x.grad.tolist() == tx.grad.tolist() == [3.0, -4.0]


def test_sin_and_cos_in_place_match_torch_values_and_gradients(torch):
    for name in ("sin_", "cos_"):
        x = ng.tensor([0.5, 1.0], requires_grad=True, dtype=ng.float64)
        tx = torch.tensor([0.5, 1.0], requires_grad=True, dtype=torch.float64)
        y, ty = x * 2, tx * 2
        getattr(y, name)()
        getattr(ty, name)()
        y.sum().backward()
        ty.sum().backward()
        np.testing.assert_allclose(y.tolist(), ty.tolist(), rtol=1e-15)
        np.testing.assert_allclose(x.grad.tolist(), tx.grad.tolist(), rtol=1e-15)


def test_numpy_of_a_tensor_requiring_grad_is_allowed_under_no_grad_as_in_torch(torch):
    x = ng.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        x.numpy()
    with ng.no_grad():
        assert x.numpy().tolist() == [1.0, 1.0]
    with torch.no_grad():
        assert torch.ones(2, requires_grad=True).numpy().tolist() == [1.0, 1.0]


def test_post_accumulate_grad_hook_sees_each_accumulated_grad_as_torch(torch):
    def run(module):
        x = module.ones(2, requires_grad=True)
        seen = []
        handle = x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
        (x * 3).sum().backward()
        (x * 3).sum().backward()
        handle.remove()
        (x * 3).sum().backward()
        return seen, x.grad.tolist()

    assert run(ng) == run(torch) == ([[3.0, 3.0], [6.0, 6.0]], [9.0, 9.0])


def test_post_accumulate_grad_hook_can_update_the_parameter_in_place():
    w = ng.tensor([1.0, 2.0], requires_grad=True)

    def sgd_step(t):
        with ng.no_grad():
            t -= 0.5 * t.grad
        t.grad = None

    w.register_post_accumulate_grad_hook(sgd_step)
    (w * w).sum().backward()
    assert w.tolist() == [0.0, 0.0] and w.grad is None


def test_post_accumulate_grad_hook_is_refused_where_torch_refuses_it(torch):
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
        torch.ones(2, requires_grad=True).mul(2).register_post_accumulate_grad_hook(print)
    with pytest.raises(RuntimeError, match="cannot be registered on non-leaf tensors"):
        ng.ones(2, requires_grad=True).mul(2).register_post_accumulate_grad_hook(print)
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        ng.ones(2).register_post_accumulate_grad_hook(print)


def test_post_accumulate_grad_hook_returning_a_value_is_a_type_error_as_in_torch(torch):
    x = ng.ones(2, requires_grad=True)
    x.register_post_accumulate_grad_hook(lambda t: 5)
    with pytest.raises(TypeError, match="must return None.*returned 'int'"):
        (x * 3).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]  # written before the hook ran, as in torch


def test_autograd_grad_runs_no_post_accumulate_hook(torch):
    y = ng.ones(2, requires_grad=True)
    seen = []
    y.register_post_accumulate_grad_hook(lambda t: seen.append(1))
    ng.autograd.grad((y * 2).sum(), y)
    assert seen == []


# -- a learner's program, unchanged -----------------------------------------------------------
LEARNER_PROGRAM = """
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
x = torch.linspace(-1, 1, 16, device=device).unsqueeze(1)
y = (3 * x).sin()

model = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1)).to(device)
with torch.no_grad():
    for p in model.parameters():
        p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape))
print(model)

optimizer = optim.RMSprop(model.parameters(), lr=0.01, momentum=0.5)
scheduler = optim.lr_scheduler.StepLR(optimizer, step_size=10, gamma=0.5)
loss_fn = nn.MSELoss()
for epoch in range(30):
    optimizer.zero_grad()
    loss = loss_fn(model(x), y)
    loss.backward()
    optimizer.step()
    scheduler.step()

buffer = io.BytesIO()
torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, buffer)
buffer.seek(0)
checkpoint = torch.load(buffer)
restored = nn.Sequential(nn.Linear(1, 8), nn.Tanh(), nn.Linear(8, 1))
restored.load_state_dict(checkpoint["model"])
restored.eval()
with torch.inference_mode():
    final = loss_fn(restored(x), y).item()
"""


def run_learner_program(module, capsys):
    namespace = {"torch": module, "nn": module.nn, "optim": module.optim, "io": io}
    exec(LEARNER_PROGRAM, namespace)
    return namespace["final"], capsys.readouterr().out, namespace["scheduler"].get_last_lr()


def test_a_learner_program_runs_unchanged_and_gives_torchs_numbers(torch, capsys):
    expected = run_learner_program(torch, capsys)  # float32 in both, the default dtype
    ours = run_learner_program(ng, capsys)
    assert ours[1] == expected[1]  # print(model)
    assert ours[2] == expected[2] == [0.00125]
    # float32: 30 steps of tanh and sums, each rounded in its own order (1 ulp apart today)
    assert ours[0] == pytest.approx(expected[0], rel=1e-6)
