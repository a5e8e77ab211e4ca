"""A short tour of arraylayer's dtype semantics.

Run: python examples/demo.py  (the tables alone: python -m arraylayer table --policy NAME)
"""

from __future__ import annotations

import arraylayer as al
from arraylayer.runtime.logs import quiet_framework_logs
from arraylayer.cli.promotion_table import promotion_table, render_text


def main() -> None:
    print(f"arraylayer {al.__version__}: one set of dtype semantics for NumPy, JAX, PyTorch, TensorFlow\n")
    print(render_text(promotion_table("standard")))
    print()
    print(render_text(promotion_table("strict")))
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
            invalid = ", ".join(map(str, al.invalid_dtypes)) or "none"
            print(f"  {name:<11} {backend.version:<14} asarray([1, 2.5]) -> {backend.dtype_of(x)} on "
                  f"{al.dev(x)}; invalid dtypes: {invalid}")
    with al.dtype_promotion("paddle"):
        print(f"\nUnder 'paddle': int64 tensor + Python float -> {al.promote_types('int64', float)}")
        try:
            al.promote_types("int64", "float32")
        except al.TypePromotionError as error:
            print(f"  int64 tensor + float32 tensor -> TypePromotionError: {error}")


if __name__ == "__main__":
    with quiet_framework_logs():  # the frameworks' start-up lines, shown only if the tour fails
        main()
