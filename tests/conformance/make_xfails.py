"""Write an xfails file from the failures of a conformance run, each test id with its reason.

    python tests/conformance/run.py torch --no-xfails > run.txt
    python tests/conformance/make_xfails.py torch PyTorch tests/conformance/xfails-torch.txt run.txt [more runs ...]

REASONS maps a pattern on the test id to the reason written after it (the first match wins);
an unmatched failure is written as "not yet diagnosed". Several runs are merged (a case that
fails in only some runs, where hypothesis draws differ, is listed once), and RANDOM_CASES, which
fail at random, are always listed (a listed test that passes is an XPASS, not a failure).
"""
from __future__ import annotations

import re
import sys

DTYPE_IS_STR = ("design: arraylayer's Dtype is a str subclass equal to its name (Dtype('float32') == 'float32', "
                "docs/concepts.rst), so the suite's check that finfo/iinfo(...).dtype is not a str, and its own "
                "isdtype expectation (a str kind is a kind name), fail; not changed (docs/conformance.rst)")
REASONS = [  # (pattern on the test id, reason); {fw}: the framework, {fn}: the function of a special case
    (r"test_finfo_dtype|test_iinfo_dtype|test_isdtype", DTYPE_IS_STR),
    (r"\[(round|ceil|floor|trunc)\(x_i.is_integer", "drawn at random (hypothesis .example()): without 64-bit "
     "dtypes an integer-valued draw such as -147138023605.0 is stored in float32 as -147138019328.0 and the suite "
     "compares the result with the unrounded draw; fails in some runs only, so it is always listed"),
    (r"test_unique_all|test_unique_counts|test_unique_inverse|test_unique_values|test_nonzero|test_repeat",
     "lazy by design: on dask the length of this result depends on the values and is unknown (nan, dask's "
     "convention) until computed; the suite compares shapes first (docs/scaling.rst)"),
    (r"test_getitem_masking", "lazy by design: on dask the length of a boolean-mask selection depends on the mask's values and is unknown (nan, dask's convention) until computed; arraylayer no longer computes a 0-d mask to learn it, and the suite compares shapes first (docs/scaling.rst)"),
    (r"test_special_cases", "{fw}'s {fn} differs from the standard's special case at this input"),
]

_SPECIAL = "array_api_tests/test_special_cases.py::test_unary["
#: special cases whose input the suite draws with hypothesis's ``.example()``, outside
#: ``--derandomize``: they fail in some runs only (with the sign of sin(2y)), so they are listed
#: whether the runs at hand failed them or not
#: without 64-bit dtypes the suite's integer-valued draws (a Python float such as -147138023605.0)
#: are stored in float32 (-147138019328.0), and the result is compared with the unrounded draw
_INTEGRAL = tuple(_SPECIAL + f"{fn}(x_i.is_integer()) -> x_i]" for fn in ("round", "ceil", "floor", "trunc"))
RANDOM_CASES = {config: _INTEGRAL if config == "jax-no-x64" else ()
                for config in ("numpy", "jax", "jax-no-x64", "torch", "tensorflow", "dask")}


def reason(tid: str, fw: str) -> str:
    """The reason of the first REASONS pattern that matches the test id."""
    for pat, text, *_ in REASONS:
        if re.search(pat, tid):
            m = re.search(r"\[(?:__)?(\w+?)(?:__)?\(", tid)
            return text.format(fw=fw, fn=m.group(1) if m else "")
    return "not yet diagnosed"


def main(argv: list[str]) -> None:
    config, fw, out, *srcs = argv
    ids = []
    lines = [line for src in srcs for line in open(src)]
    for line in lines:
        if line.startswith("FAILED "):
            rest = line[len("FAILED "):].rstrip("\n")
            end = rest.find("] - ") if "[" in rest else rest.find(" - ")
            tid = (rest[:end + 1] if "[" in rest else rest[:end]) if end >= 0 else rest.strip()
            tid = tid[tid.index("array_api_tests/"):]
            if tid not in ids:
                ids.append(tid)
    ids += [tid for tid in RANDOM_CASES.get(config, ()) if tid not in ids]
    with open(out, "w") as f:
        f.write(f"# Tests of the official Array API suite that fail on the {config} configuration, each with its reason\n"
                f"# (tests/conformance/run.py strips the reasons before handing the file to the suite). Regenerate\n"
                f"# after fixes with tests/conformance/make_xfails.py from runs with --no-xfails.\n")
        for tid in ids:
            f.write(f"{tid}  # {reason(tid, fw)}\n")
    print(config, len(ids))


if __name__ == "__main__":
    main(sys.argv[1:])
