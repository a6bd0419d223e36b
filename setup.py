"""Builds judged's optional compiled fast path: one extension, judged.core._native, from
src/judged/core/_native.c and the pooling wing's unit src/judged/analyses/pooling/_native_pooling.c.

Everything else is configured in pyproject.toml. The extension is optional: without a C
compiler, or when it fails to build, judged installs and runs on its pure Python/numpy path
(same numbers, about 4x slower on large files), and says so: here, on stderr, at build time
(pip shows it with ``pip install -v``), and at run time (``judged --version``; a one-time
note when a large file is read). ``JUDGED_PURE_PYTHON=1`` turns the extension off at run
time, silently.
"""

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCES = ["src/judged/core/_native.c", "src/judged/analyses/pooling/_native_pooling.c"]

NOT_BUILT = """
judged: the compiled extension (judged.core._native) could not be built:
judged:   {error}
judged: judged still installs and gives the same numbers on its pure Python/numpy path,
judged: about 4x slower on large files. To build it, install a C compiler and Python's headers (Debian:
judged: apt-get install gcc python3-dev) and reinstall. `judged --version` says which path runs.
"""


class BuildOptionalExtension(build_ext):
    """build_ext that says, in words, what an optional extension's failure means."""

    def build_extension(self, ext):
        try:
            super().build_extension(ext)
        except Exception as exc:  # the compiler's error; setuptools then skips the optional extension
            print(NOT_BUILT.format(error=str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__),
                  file=sys.stderr, flush=True)
            raise


setup(cmdclass={"build_ext": BuildOptionalExtension},
      ext_modules=[Extension("judged.core._native", SOURCES, optional=True,
                             extra_compile_args=["-O3", "-std=c99", "-Wall", "-Wno-unused-function"])])
