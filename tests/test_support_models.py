"""The support answers of the model toolkit (``nn.*``, ``layers.<name>.init/apply``, ``optim.*``),
the math ops beyond the standard and the control flow are true: each function is called on a small
valid input of every dtype on every installed backend, and "supported" must compute while
"unsupported" or "undefined" must raise arraylayer's dtype error (UnsupportedDtypeError, or
InvalidDtypeError where the toolkit refuses a kind it does not take) before any framework is reached.

CI checks every function on every backend for a fixed-seed sample of dtypes (float32 and one
more per function); ``AL_SUPPORT_MODELS_ALL=1`` (or ``nox -s support_models``) checks every dtype.
The calls are tests/model_calls.py's, which tests/test_bad_input.py corrupts by role.
"""

from __future__ import annotations

import os
import random
import warnings
from typing import Any, Final

import pytest

import arraylayer as al
from arraylayer import support
from arraylayer.errors import ArrayLayerError, InvalidDtypeError, UnsupportedDtypeError

import model_calls

CALLS: Final = model_calls.calls()
EVERY_DTYPE: Final = os.environ.get("AL_SUPPORT_MODELS_ALL", "") not in ("", "0")
#: dtypes of each function checked in CI besides float32 (fixed seed: the same sample every run)
SAMPLED: Final = 1


def _dtypes(name: str) -> tuple[str, ...]:
    if EVERY_DTYPE:
        return tuple(str(d) for d in al.all_dtypes)
    others = [str(d) for d in al.all_dtypes if str(d) != "float32"]
    return ("float32", *random.Random(f"support-models:{name}").sample(others, SAMPLED))


def _call(backend: str, name: str, dtype: str) -> tuple[str, Any]:
    """("ok", result), ("refused", error) for an arraylayer dtype error, or ("other", error)."""
    f, args, kwargs = CALLS[name]
    with al.use_backend(backend):
        if model_calls.probes_dtype_keyword(name):
            args, kwargs = model_calls.materialise(args), {**model_calls.materialise(kwargs), "dtype": dtype}
        else:
            args, kwargs = model_calls.materialise(args, dtype), model_calls.materialise(kwargs, dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                result = f(*args, **kwargs)
                if backend == "dask":
                    import dask

                    dask.compute(result)
        except (UnsupportedDtypeError, InvalidDtypeError) as error:
            return "refused", error
        except Exception as error:  # noqa: BLE001 - what escaped is the finding
            return "other", error
    return "ok", result


def test_every_model_function_has_a_row_and_a_call():
    """Every public function of nn, layers and optim has a support row, and this suite calls each
    row (the toolkit's, the math ops' and the control flow's)."""
    public = support.public_functions()
    toolkit = {n for n in public if n.startswith(("nn.", "layers.", "optim."))}
    assert toolkit, "the toolkit's namespaces are not registered"
    assert toolkit <= set(support.function_table())
    assert not {n for n in toolkit if n not in CALLS and support.function_table()[n].rule != "independent"}, \
        "add a valid call to tests/model_calls.py"
    assert set(CALLS) <= set(public)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_the_support_answer_is_what_happens(backend, name):
    cells = support.dtype_support(name, backend)
    wrong = []
    for dtype in _dtypes(name):
        cell = cells[al.Dtype(dtype)]
        if cell.status == "invalid":  # the backend cannot hold it: no input to make
            continue
        outcome, detail = _call(backend, name, dtype)
        if cell.supported and outcome != "ok":
            wrong.append(f"{dtype}: said supported, but {type(detail).__name__}: {str(detail)[:160]}")
        elif not cell.supported and outcome != "refused":
            got = "it computed" if outcome == "ok" else f"{type(detail).__name__}: {str(detail)[:160]}"
            wrong.append(f"{dtype}: said {cell.status} ({cell.why}), but {got}")
        elif outcome == "refused" and not str(detail):
            wrong.append(f"{dtype}: refused without a message")
    assert not wrong, f"{name} on {backend}:\n" + "\n".join(wrong)


def test_refusals_name_the_fix(backend):
    """A refused kind names what to do (a cast), on every backend alike."""
    for name in ("nn.relu", "nn.conv2d", "layers.dense.init", "layers.gru.apply", "optim.adam", "optim.adafactor"):
        outcome, error = _call(backend, name, "int32")
        assert outcome == "refused" and isinstance(error, ArrayLayerError), (name, error)
        assert "astype" in str(error) or "float32" in str(error), (name, str(error))
