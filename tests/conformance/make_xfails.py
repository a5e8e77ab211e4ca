"""Write an xfails file from the failures of a conformance run, each test id with its reason.

    python tests/conformance/run.py torch --no-xfails > run.txt
    python tests/conformance/make_xfails.py torch PyTorch tests/conformance/xfails-torch.txt run.txt [more runs ...]

REASONS maps a pattern on the test id to the reason written after it (the first match wins);
an unmatched failure is written as "not yet diagnosed". Several runs are merged (a case that
fails in only some runs, where hypothesis draws differ, is listed once).
"""
from __future__ import annotations

import re
import sys

REASONS = [  # (pattern on the test id, reason, owner)
    (r"is -0|x2_i is -0", "{fw} loses the sign of a -0.0 operand or result (signed zeros, helper idx)"),
    (r"floordiv|floor_divide", "floor_divide at infinities (not yet the standard's value here)"),
    (r"test_finfo_dtype|test_iinfo_dtype|test_isdtype|test_result_type|test_arrays_and_dtypes|test_with_scalars|array_namespace_info_dtypes", "dtype identity/info of the Array namespace (helper ns)"),
    (r"test_devices", "__array_namespace_info__().devices() returns a list; 2025.12 wants a tuple (helper ns)"),
    (r"test_getitem|test_setitem|dlpack|test_asarray_arrays", "indexing / setitem / dlpack / asarray copy semantics (helper idx)"),
    (r"__mod__|__imod__|remainder", "sign of a zero remainder (helper idx: signed zeros)"),
    (r"test_sum|test_prod|test_cumulative_sum|test_cumulative_prod|test_trace", "uint8 accumulates in the default uint dtype (uint32), which torch 2.13 cannot compute with: refused with UnsupportedDtypeError rather than a dtype other backends do not give"),
    (r"test_repeat", "repeat on TensorFlow: an arraylayer.Array reaches a tf op (TypeError); not yet diagnosed whether in the namespace or the kernel"),
    (r"test_special_cases.*\[(expm1|exp|log1p|log|tanh|sinh|cosh|acos|acosh|asin|asinh|atan|atanh|sqrt|sign|tan|sin)\(.*(imag|real)\(x_i\)", "{fw}'s complex {fn} differs from the standard's special case (C99 Annex G) at this input"),
    (r"test_special_cases", "{fw}: special case at a signed zero, infinity or NaN (TensorFlow: -0.0 handling, helper idx)"),
]


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
    with open(out, "w") as f:
        f.write(f"# Tests of the official Array API suite that fail on the {config} configuration, each with its reason\n"
                f"# (tests/conformance/run.py strips the reasons before handing the file to the suite). Regenerate\n"
                f"# after fixes with tests/conformance/make_xfails.py from runs with --no-xfails.\n")
        for tid in ids:
            f.write(f"{tid}  # {reason(tid, fw)}\n")
    print(config, len(ids))


if __name__ == "__main__":
    main(sys.argv[1:])
