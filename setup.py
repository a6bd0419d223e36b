"""Builds judged's optional compiled fast path (src/judged/_native.c).

Everything else is configured in pyproject.toml. The extension is optional: without a C
compiler, or when it fails to build, judged installs and runs on its pure Python/numpy path
(same numbers, slower). ``JUDGED_PURE_PYTHON=1`` turns the extension off at run time.
"""

from setuptools import Extension, setup

setup(ext_modules=[Extension("judged._native", ["src/judged/_native.c"], optional=True,
                             extra_compile_args=["-O3", "-std=c99", "-Wall", "-Wno-unused-function"])])
