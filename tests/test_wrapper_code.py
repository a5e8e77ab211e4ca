"""The cheap import path of issue 42: wrappers from precompiled code, signatures from code objects,
no ``inspect``/``dataclasses`` at ``import arraylayer``, promotion tables as before.

Oracles: ``compile``/``exec`` of the wrapper's own source line (what ``accepting_wrapped`` did before),
``inspect.signature``, ``dataclasses`` (for the written-out frozen records) and the lattice joins
computed the plain way (every pair, every common upper bound).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import json
import pathlib
import subprocess
import sys
import types

import pytest

import arraylayer as al
from arraylayer.api import CATEGORIES, fft, interchange, linalg, wrapper_templates
from arraylayer.api.signatures import CodeParameter, signature_of
from arraylayer.api.wrapper_code import TEMPLATES
from arraylayer.dtypes.lattice import STANDARD_LATTICE, STRICT_LATTICE, join_table, upper_sets
from arraylayer.lowp.formats import FORMATS, Format

ROOT = pathlib.Path(__file__).resolve().parent.parent
CODE_FIELDS = ("co_code", "co_consts", "co_names", "co_varnames", "co_argcount", "co_posonlyargcount",
               "co_kwonlyargcount", "co_flags", "co_linetable", "co_exceptiontable", "co_firstlineno",
               "co_stacksize", "co_nlocals", "co_name", "co_freevars", "co_cellvars", "co_filename")


def _fresh(code: str) -> str:
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                          cwd=ROOT, env=env).stdout


def test_wrapper_code_is_current():
    """Fails after a public signature changed: run the ``write()`` that the message names."""
    current = wrapper_templates.current_text()
    written = (ROOT / "arraylayer" / "api" / "wrapper_code.py").read_text()
    assert written == current, ('arraylayer/api/wrapper_code.py is stale: run python -c '
                                '"from arraylayer.api.wrapper_templates import write; write()"')


def test_import_compiles_no_wrapper_and_loads_no_inspect():
    out = _fresh("import sys, arraylayer, json; from arraylayer.api import wrapper_templates as w, wrapper_code as c; "
                 "print(json.dumps([len(w.BUILT), [s for s in w.BUILT if s not in c.TEMPLATES], "
                 "sorted(m for m in ('inspect', 'dataclasses', 'ast', 'dis', 'tokenize', 'numpy', 'jax', 'torch', "
                 "'tensorflow', 'dask') if m in sys.modules)]))")
    built, missing, loaded = json.loads(out)
    assert built > 100 and missing == [] and loaded == []


def _exec_source(source: str, filename: str, namespace: dict) -> types.FunctionType:
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102
    return namespace["public"]


@pytest.mark.parametrize("source", sorted(TEMPLATES))
def test_template_is_the_compiled_source(source):
    """The function made from a template is the one exec of its line makes: code, globals, defaults."""
    defaults = {f"_al_d{i}": object() for i in range(40)}
    expected = _exec_source(source, "<f>", dict(defaults))
    made = wrapper_templates.function_from_source(source, "<f>", dict(defaults), expected.__defaults__ or (),
                                                  expected.__kwdefaults__ or {})
    wrapper_templates.BUILT.pop()
    for field in CODE_FIELDS:
        assert getattr(made.__code__, field) == getattr(expected.__code__, field), field
    if hasattr(made.__code__, "co_qualname"):
        assert made.__code__.co_qualname == expected.__code__.co_qualname
    assert (made.__defaults__, made.__kwdefaults__) == (expected.__defaults__, expected.__kwdefaults__)
    assert made.__name__ == expected.__name__ and made.__module__ == expected.__module__
    assert made.__globals__["public"] is made and made.__globals__["__builtins__"] is expected.__globals__["__builtins__"]


def test_a_source_without_template_is_compiled():
    source = "def public(x, /, k=_al_d1): return ('wrapped', x, k) if type(x) in _al_W else (x, k)\n"
    assert source not in TEMPLATES
    namespace = {"_al_W": (float,), "_al_d1": 3}
    made = wrapper_templates.function_from_source(source, "<g>", namespace, (3,), {})
    assert wrapper_templates.BUILT.pop() == source
    assert made(1) == (1, 3) and made(1.5, k=4) == ("wrapped", 1.5, 4) and made.__code__.co_filename == "<g>"


def _public_functions():
    for module in (*CATEGORIES, linalg, fft, interchange):
        for name in module.__all__:
            function = getattr(module, name)
            if isinstance(function, types.FunctionType):
                yield f"{module.__name__}.{name}", function


def test_every_wrapper_keeps_its_functions_signature_and_defaults():
    checked = 0
    for name, public in _public_functions():
        if public.__code__.co_filename.startswith("<arraylayer.accepting_wrapped"):
            inner = public.__wrapped__
            assert inspect.signature(public) == inspect.signature(inner), name
            assert (public.__defaults__, public.__kwdefaults__) == (inner.__defaults__, inner.__kwdefaults__), name
            assert public.__doc__ == inner.__doc__ and public.__name__ == inner.__name__, name
            checked += 1
    assert checked > 100


def _as_tuples(signature) -> list[tuple]:
    """(name, kind, default, annotation) of each parameter, with either kind of "empty" as inspect's."""
    def plain(value):
        return inspect.Parameter.empty if value is CodeParameter.empty else value
    return [(p.name, getattr(p.kind, "name", p.kind), plain(p.default), plain(p.annotation))
            for p in signature.parameters.values()]


def _sample(a, b: int = 1, /, c: Array = 2, *args: float, d, e=3, **kw: Any) -> None:  # noqa: F821
    pass


def _keywords(*, x, y=0):
    pass


@functools.wraps(_keywords)
def _wrapped(*args, **kwargs):
    pass


def test_signature_of_equals_inspect_signature():
    functions = [f for _, f in _public_functions()] + [_sample, _keywords, lambda: None, lambda *a: None]
    for function in functions:
        function = getattr(function, "__wrapped__", function)
        assert _as_tuples(signature_of(function)) == _as_tuples(inspect.signature(function)), function
    # what the code object cannot tell is left to inspect: redirects, partials, builtins
    assert signature_of(_wrapped) == inspect.signature(_wrapped)
    assert signature_of(functools.partial(_sample, 1)) == inspect.signature(functools.partial(_sample, 1))
    assert signature_of(len) == inspect.signature(len)


def test_lattice_joins_equal_the_plain_computation():
    for lattice in (STANDARD_LATTICE, STRICT_LATTICE):
        uppers = upper_sets(lattice)
        plain = {}
        for a in lattice:
            for b in lattice:
                common = uppers[a] & uppers[b]
                least = [n for n in common if uppers[n] == common]
                plain[a, b] = least[0] if least else None
        assert list(join_table(lattice).items()) == list(plain.items())


@dataclasses.dataclass(frozen=True)
class _OracleFormat:
    name: str
    bits: int
    exponent_bits: int = 0
    mantissa_bits: int = 0
    bias: int = 0
    specials: str = "int"
    signed: bool = True


def test_frozen_records_behave_as_frozen_dataclasses():
    for f in FORMATS.values():
        oracle = _OracleFormat(*(getattr(f, k) for k in Format._FIELDS))
        assert repr(f) == repr(oracle).replace("_OracleFormat", "Format")
        assert hash(f) == hash(oracle) and f == Format(*(getattr(f, k) for k in Format._FIELDS))
        assert f.is_float == (f.specials != "int")
    info = al.finfo("float32")
    assert info == al.finfo(al.float32) and hash(info) == hash(al.finfo("float32")) and info != al.finfo("float64")
    assert info.__eq__(object()) is NotImplemented
    with pytest.raises(AttributeError, match="frozen"):
        info.eps = 1.0
    with pytest.raises(AttributeError, match="frozen"):
        del al.iinfo("int8").max
    assert type(info)(*(getattr(info, k) for k in type(info)._FIELDS)) == info
    with pytest.raises(TypeError, match="fields"):
        type(info)(bits=32)
