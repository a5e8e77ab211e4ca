"""A short tour of arraylayer's dtype semantics (the main job until the CLI lands).

Run: python examples/demo.py
"""

from __future__ import annotations

import arraylayer as al
from arraylayer.lattice import CODES

SHORT = {v: k for k, v in CODES.items() if isinstance(v, str)}
ORDER = list(CODES)  # seed 000's row and column order


def short(dtype: al.Dtype, weak: bool) -> str:
    return {"int": "i*", "float": "f*", "complex": "c*"}[dtype.kind] if weak else SHORT[str(dtype)]


def promotion_table(policy: str) -> str:
    """Seed 000's layout: rows and columns are the 18 types; weak results are starred."""
    lines = ["     " + "".join(f"{c:>5}" for c in ORDER)]
    with al.dtype_promotion(policy):
        for a in ORDER:
            cells = []
            for b in ORDER:
                try:
                    cells.append(short(*al.lattice_result_type(CODES[a], CODES[b])))
                except al.TypePromotionError:
                    cells.append("-")
            lines.append(f"{a:>5}" + "".join(f"{c:>5}" for c in cells))
    return "\n".join(lines)


def main() -> None:
    print(f"arraylayer {al.__version__}: one set of dtype semantics for NumPy, JAX, PyTorch, TensorFlow\n")
    print("The promotion table (policy 'standard', JAX's lattice; weak results starred):")
    print(promotion_table("standard"))
    print("\nThe same under 'strict' ('-' raises TypePromotionError):")
    print(promotion_table("strict"))
    print("\nWeak Python scalars keep the array's precision:")
    for args in [("int8", 1), ("float16", 2.5), ("bfloat16", 1j), (1, 1.0)]:
        shown = ", ".join(map(repr, args))
        print(f"  lattice_result_type({shown}) = {al.lattice_result_type(*args)}")
    try:
        al.result_type("int8", 1000)
    except OverflowError as error:
        print(f"\nNo silent wrap-around: {error}")
    print("\nThe same calls on every installed backend:")
    for name in al.installed_backends():
        with al.use_backend(name) as backend:
            x = al.asarray([1, 2.5])
            invalid = ", ".join(al.invalid_dtypes) or "none"
            print(f"  {name:<11} {backend.version:<14} asarray([1, 2.5]) -> {backend.dtype_of(x)} on "
                  f"{al.dev(x)}; invalid dtypes: {invalid}")
    with al.dtype_promotion("paddle"):
        print(f"\nUnder 'paddle': int64 tensor + Python float -> {al.promote_types('int64', float)}")
        try:
            al.promote_types("int64", "float32")
        except al.TypePromotionError as error:
            print(f"  int64 tensor + float32 tensor -> TypePromotionError: {error}")


if __name__ == "__main__":
    main()
