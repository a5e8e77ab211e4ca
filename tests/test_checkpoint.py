"""Checkpoints: written on one backend, read on every other with the bits unchanged; readable by
the safetensors package and the reverse; partial loads; clear errors for mismatches and damaged
files; atomic writes; a training run moved from torch to jax mid-way."""

from __future__ import annotations

import collections
import json
import os
import struct

import ml_dtypes
import numpy as np
import pytest

import arraylayer as al

RNG = np.random.default_rng(23)
# every bit pattern class: random bits (NaNs with payloads, infinities, subnormals included)
BITS = {
    "bfloat16": RNG.integers(0, 2**16, size=(3, 5), dtype=np.uint16).view(ml_dtypes.bfloat16),
    "float16": RNG.integers(0, 2**16, size=(4,), dtype=np.uint16).view(np.float16),
    "float32": RNG.integers(0, 2**32, size=(2, 2), dtype=np.uint32).view(np.float32),
    "int32": RNG.integers(-2**31, 2**31, size=(5,), dtype=np.int32),
    "int8": RNG.integers(-128, 128, size=(2, 3), dtype=np.int8),
    "uint8": RNG.integers(0, 256, size=(3,), dtype=np.uint8),
    "bool": RNG.integers(0, 2, size=(2, 2)).astype(bool),
}


def bits(x) -> np.ndarray:
    host = np.asarray(al.to_backend(x, "numpy"))
    return host.view(f"u{host.dtype.itemsize}") if host.dtype.kind != "b" else host


def tree_on(backend: str, dtypes) -> dict:
    with al.use_backend(backend):
        params = {"layers": [{name: al.to_backend(BITS[name], backend)} for name in dtypes],
                  "count": al.asarray(7, dtype=al.int32)}
    return {"params": params, "state": (params["count"], None)}


def common_dtypes(*backends: str) -> list[str]:
    return [name for name in BITS if all(name in al.valid_dtypes(b) for b in backends)]


def test_round_trip_between_every_pair_of_backends(backend, target, tmp_path):
    dtypes = common_dtypes(backend, target)
    tree = tree_on(backend, dtypes)
    al.checkpoint.save(tmp_path / "c.safetensors", tree, step=12)
    loaded, step = al.checkpoint.load(tmp_path / "c.safetensors", backend=target)
    assert step == 12
    assert loaded["state"][1] is None and isinstance(loaded["state"], tuple)
    for name, layer in zip(dtypes, loaded["params"]["layers"], strict=True):
        leaf = layer[name]
        assert al.backend_of(leaf).name == target and str(al.Dtype(leaf.dtype)) == name
        np.testing.assert_array_equal(bits(leaf), bits(BITS[name]), err_msg=f"{backend} -> {target} {name}")
    assert int(np.asarray(al.to_backend(loaded["state"][0], "numpy"))) == 7


def test_a_template_gives_its_structure_and_backends(tmp_path):
    Pair = collections.namedtuple("Pair", "w b")
    tree = {"pair": Pair(np.ones((2, 2), np.float32), np.zeros(2, np.float32)), "k": [np.arange(3, dtype=np.int32)]}
    al.checkpoint.save(tmp_path / "t.safetensors", tree)
    plain = al.checkpoint.load(tmp_path / "t.safetensors").tree
    assert plain["pair"] == {"w": plain["pair"]["w"], "b": plain["pair"]["b"]}  # a named tuple without template
    pytest.importorskip("torch")
    with al.use_backend("torch"):
        like = {"pair": Pair(al.zeros((2, 2)), al.zeros(2)), "k": [al.Array(al.zeros(3, dtype=al.int32))]}
    loaded = al.checkpoint.load(tmp_path / "t.safetensors", like).tree
    assert isinstance(loaded["pair"], Pair) and isinstance(loaded["k"][0], al.Array)
    assert al.backend_of(loaded["pair"].w).name == "torch"
    np.testing.assert_array_equal(np.asarray(al.to_backend(loaded["k"][0].native, "numpy")), [0, 1, 2])


def test_types_the_format_lacks_are_stored_by_their_bits(tmp_path):
    tree = {"c128": np.array([1 + 2j, -0.5j]), "i4": np.array([-8, 7, 3], ml_dtypes.int4),
            "fnuz": RNG.integers(0, 256, 6, dtype=np.uint8).view(ml_dtypes.float8_e4m3fnuz),
            "f64": np.array([np.pi, -0.0])}
    al.checkpoint.save(tmp_path / "x.safetensors", tree)
    header = json.loads((tmp_path / "x.safetensors").read_bytes()[8:][:struct.unpack(
        "<Q", (tmp_path / "x.safetensors").read_bytes()[:8])[0]])
    assert header["c128"]["dtype"] == "U8" and header["c128"]["shape"] == [2, 16]
    assert header["i4"]["dtype"] == "U8" and header["i4"]["shape"] == [3, 1]
    assert header["fnuz"]["dtype"] == "F8_E4M3FNUZ" and header["f64"]["dtype"] == "F64"
    assert al.checkpoint.contents(tmp_path / "x.safetensors")["i4"] == ("int4", (3,))
    loaded = al.checkpoint.load(tmp_path / "x.safetensors", backend="numpy").tree
    for name, value in tree.items():
        assert loaded[name].dtype == value.dtype
        np.testing.assert_array_equal(loaded[name].view(np.uint8), value.view(np.uint8))


def test_the_safetensors_package_reads_arraylayer_checkpoints_and_the_reverse(tmp_path):
    safetensors_numpy = pytest.importorskip("safetensors.numpy")
    tree = {"a": {name: BITS[name] for name in ("float16", "float32", "int32", "int8", "bool")}}
    al.checkpoint.save(tmp_path / "ours.safetensors", tree, step=3)
    theirs = safetensors_numpy.load_file(tmp_path / "ours.safetensors")
    assert sorted(theirs) == sorted(f"a/{n}" for n in tree["a"])
    for name, value in tree["a"].items():
        np.testing.assert_array_equal(bits(theirs[f"a/{name}"]), bits(value))
    torch = pytest.importorskip("torch")
    safetensors_torch = pytest.importorskip("safetensors.torch")
    al.checkpoint.save(tmp_path / "bf16.safetensors", {"w": BITS["bfloat16"]})
    w = safetensors_torch.load_file(tmp_path / "bf16.safetensors")["w"]
    assert w.dtype == torch.bfloat16
    np.testing.assert_array_equal(w.view(torch.int16).numpy().view(np.uint16), bits(BITS["bfloat16"]))

    written = {"encoder.weight": torch.arange(6, dtype=torch.float32).reshape(2, 3),
               "encoder.scale": torch.tensor([1.5, -2.25], dtype=torch.bfloat16)}
    safetensors_torch.save_file(written, tmp_path / "torch.safetensors", metadata={"format": "pt"})
    loaded, step = al.checkpoint.load(tmp_path / "torch.safetensors", backend="jax")
    assert step is None and sorted(loaded) == sorted(written)
    for name, value in written.items():
        assert str(al.Dtype(loaded[name].dtype)) == str(al.Dtype(value.dtype))
        np.testing.assert_array_equal(bits(loaded[name]), bits(value))


def test_partial_loads(tmp_path):
    tree = {"params": {"enc": {"w": np.ones((2, 2), np.float32)}, "dec": [np.zeros(3, np.float32)]},
            "state": {"count": np.asarray(4, np.int32)}}
    al.checkpoint.save(tmp_path / "p.safetensors", tree, step=4)
    part = al.checkpoint.load(tmp_path / "p.safetensors", prefix="params/dec")
    assert isinstance(part.tree, list) and part.step == 4
    np.testing.assert_array_equal(part.tree[0], np.zeros(3))
    enc = al.checkpoint.load(tmp_path / "p.safetensors", {"w": np.zeros((2, 2), np.float32)}, prefix=("params", "enc"))
    np.testing.assert_array_equal(enc.tree["w"], np.ones((2, 2)))
    with pytest.raises(al.CheckpointError, match="nothing under prefix 'params/mid'"):
        al.checkpoint.load(tmp_path / "p.safetensors", prefix="params/mid")


# -- errors ------------------------------------------------------------------------------------------------------
@pytest.fixture
def saved(tmp_path):
    file = tmp_path / "ok.safetensors"
    al.checkpoint.save(file, {"w": np.arange(6, dtype=np.float32).reshape(2, 3), "b": np.zeros(3, np.float16)})
    return file


@pytest.mark.parametrize("like, match", [
    ({"w": np.zeros((2, 3), np.float32)}, "'b' is in the file but not in the template"),
    ({"w": np.zeros((2, 3), np.float32), "b": np.zeros(3, np.float16), "c": np.zeros(1)}, "'c' is missing"),
    ({"w": np.zeros((3, 2), np.float32), "b": np.zeros(3, np.float16)}, r"'w' is float32 \[2, 3\] in the file, "
                                                                        r"float32 \[3, 2\] in the template"),
    ({"w": np.zeros((2, 3), np.float32), "b": np.zeros(3, np.float32)}, "'b' is float16 .* float32"),
])
def test_a_template_mismatch_names_each_difference(saved, like, match):
    with pytest.raises(al.CheckpointError, match=match):
        al.checkpoint.load(saved, like)


def _rewrite(file, header: dict | None = None, *, raw_header: bytes | None = None, length: int | None = None,
             cut: int = 0) -> None:
    data = file.read_bytes()
    n = struct.unpack("<Q", data[:8])[0]
    body = data[8 + n:]
    head = raw_header if raw_header is not None else (json.dumps(header).encode() if header else data[8:8 + n])
    out = struct.pack("<Q", len(head) if length is None else length) + head + body
    file.write_bytes(out[:len(out) - cut])


def _header(file) -> dict:
    data = file.read_bytes()
    return json.loads(data[8:8 + struct.unpack("<Q", data[:8])[0]])


def _moved(header: dict, name: str, offsets: list) -> dict:
    header[name]["data_offsets"] = offsets
    return header


@pytest.mark.parametrize("damage, match", [
    (lambda f: _rewrite(f, cut=3), r"tensor 'w' at bytes \[6, 30\], outside the 27 bytes of data"),
    (lambda f: f.write_bytes(f.read_bytes() + b"\0"), "31 bytes of data where the header describes 30"),
    (lambda f: f.write_bytes(f.read_bytes()[:5]), "fewer than the 8"),
    (lambda f: _rewrite(f, length=10**12), "header length of 1000000000000"),
    (lambda f: _rewrite(f, raw_header=b'{"w": [1, 2'), "not valid JSON"),
    (lambda f: _rewrite(f, raw_header=b"[1, 2, 3]  "), "not a JSON object"),
    (lambda f: _rewrite(f, _moved(_header(f), "w", [0, 10**6])), "outside the"),
    (lambda f: _rewrite(f, _moved(_header(f), "w", [0, 24])), "overlap or leave a gap"),
    (lambda f: _rewrite(f, {**_header(f), "__metadata__": {"arraylayer": "{not json"}}), "metadata is not valid"),
    (lambda f: _rewrite(f, {**_header(f), "w": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 24]}}),
     r"'w' of float32 \[2, 2\] in 24 bytes"),
    (lambda f: _rewrite(f, {**_header(f), "w": {"dtype": "Q99", "shape": [6], "data_offsets": [0, 24]}}),
     "dtype 'Q99'"),
])
def test_a_damaged_file_gives_a_checkpoint_error(saved, damage, match):
    damage(saved)
    with pytest.raises(al.CheckpointError, match=match):
        al.checkpoint.load(saved)


def test_what_cannot_be_saved_is_refused(tmp_path):
    with pytest.raises(al.CheckpointError, match="'w' is a float"):
        al.checkpoint.save(tmp_path / "f.safetensors", {"w": 1.5})
    with pytest.raises(al.CheckpointError, match="name two leaves"):
        al.checkpoint.save(tmp_path / "f.safetensors", {"a/b": np.ones(1), "a": {"b": np.ones(1)}})
    with pytest.raises(al.CheckpointError, match="str and int keys"):
        al.checkpoint.save(tmp_path / "f.safetensors", {(1, 2): np.ones(1)})
    assert not os.listdir(tmp_path)


def test_a_failure_while_writing_leaves_the_old_file_whole(saved):
    dask = pytest.importorskip("dask")
    import dask.array as da

    def broken():
        raise RuntimeError("the disk filled up")

    before = saved.read_bytes()
    lazy = da.from_delayed(dask.delayed(broken)(), shape=(4,), dtype=np.float32)  # fails when computed, mid-write
    with pytest.raises(RuntimeError, match="the disk filled up"):
        al.checkpoint.save(saved, {"a": np.ones(1000, np.float32), "z": lazy})
    assert saved.read_bytes() == before and os.listdir(saved.parent) == [saved.name]
    np.testing.assert_array_equal(al.checkpoint.load(saved).tree["w"], np.arange(6).reshape(2, 3))


# -- a training run moved from torch to jax -----------------------------------------------------------------------
def test_a_run_moved_from_torch_to_jax_continues_as_on_torch(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("jax")
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(16, 3)).astype(np.float32), rng.normal(size=(16, 1)).astype(np.float32)
    optimizer = al.optim.from_transforms(
        al.transforms.clip_by_global_norm(1.0), al.transforms.scale_by_adam(),
        al.transforms.add_decayed_weights(1e-2, mask=lambda path, p: p.ndim > 1),
        al.transforms.scale_by_learning_rate(al.schedules.warmup_cosine_decay(0.05, 3, 10)))

    def train(params, state, backend, steps):
        bx, by = al.to_backend(x, backend), al.to_backend(y, backend)
        loss = lambda p: al.mean(al.square(al.subtract(al.add(al.matmul(bx, p["w"]), p["b"]), by)))  # noqa: E731
        for _ in range(steps):
            grads = al.grad(loss)(params)
            params, state = optimizer.update(grads, state, params)
        return params, state

    with al.use_backend("torch"):
        params = {"w": al.asarray(rng.normal(size=(3, 1)).tolist(), dtype=al.float32), "b": al.zeros(1)}
    params, state = train(params, optimizer.init(params), "torch", 4)
    al.checkpoint.save(tmp_path / "run.safetensors", {"params": params, "state": state}, step=4)
    on_torch, _ = train(params, state, "torch", 4)
    moved, step = al.checkpoint.load(tmp_path / "run.safetensors", backend="jax")
    assert step == 4 and al.backend_of(moved["params"]["w"]).name == "jax"
    on_jax, _ = train(moved["params"], moved["state"], "jax", 4)
    for key in ("w", "b"):
        np.testing.assert_allclose(np.asarray(on_jax[key]), on_torch[key].numpy(), rtol=1e-5, atol=1e-6)
