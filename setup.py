"""The optional C extensions (everything else is in pyproject.toml): arraylayer._dispatch (with
Array's operators and its ``__getitem__``),
arraylayer._threefry and arraylayer._codes.

A compiler error never fails the install: the extension is left out with one line saying so,
and arraylayer runs its pure-Python dispatch (arraylayer/runtime/compiled_dispatch.py), computes its
dropout masks with NumPy (arraylayer/models/dropout_masks.py) or fixes torch's float8 codes with torch's
own ops (arraylayer/lowp/cpu_codes.py)."""

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that leaves out an extension it cannot compile instead of failing."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler at all (setuptools raises its own error types)
            self._skipped(error)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:  # CompileError, LinkError, a missing header
            self._skipped(error, ext.name)

    @staticmethod
    def _skipped(error: Exception, name: str = "") -> None:
        which = f"the C extension {name}" if name else "the C extensions"
        print(f"arraylayer: {which} was not built ({type(error).__name__}: {str(error).strip()[:200]}); "
              f"arraylayer will use its pure-Python path.", file=sys.stderr)


_PTHREAD = [] if sys.platform == "win32" else ["-pthread"]

setup(
    ext_modules=[Extension("arraylayer._dispatch",
                           ["arraylayer/_dispatch.c", "arraylayer/_operators.c", "arraylayer/_plan_keys.c",
                            "arraylayer/_promotion.c", "arraylayer/_getitem.c"],
                           depends=["arraylayer/_dispatch.h"], optional=True),
                 Extension("arraylayer._threefry", ["arraylayer/_threefry.c"], optional=True),
                 Extension("arraylayer._codes", ["arraylayer/_codes.c"], optional=True,  # pthreads: one thread without
                           extra_compile_args=_PTHREAD, extra_link_args=_PTHREAD)],
    cmdclass={"build_ext": OptionalBuildExt},
)
