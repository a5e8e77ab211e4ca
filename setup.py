"""The optional C extension arraylayer._dispatch (everything else is in pyproject.toml).

A compiler error never fails the install: the extension is left out with one line saying so,
and arraylayer runs its pure-Python dispatch (arraylayer/compiled_dispatch.py)."""

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
            self._skipped(error)

    @staticmethod
    def _skipped(error: Exception) -> None:
        print(f"arraylayer: the C extension arraylayer._dispatch was not built ({type(error).__name__}: "
              f"{str(error).strip()[:200]}); arraylayer will use its pure-Python dispatch.", file=sys.stderr)


setup(
    ext_modules=[Extension("arraylayer._dispatch", ["arraylayer/_dispatch.c", "arraylayer/_operators.c", "arraylayer/_plan_keys.c"],
                           depends=["arraylayer/_dispatch.h"], optional=True)],
    cmdclass={"build_ext": OptionalBuildExt},
)
