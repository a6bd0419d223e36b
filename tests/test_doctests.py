"""Every docstring example in the package runs, and gives what it says (doctest).

Each module of ``judged`` is imported and its examples run with :mod:`doctest`; a module
whose optional dependency is not installed (the judging app's FastAPI, Spark) is skipped
and says which. ``test_the_package_has_doctests`` keeps the collection honest: a finder
that found nothing would pass every module.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import judged

OPTIONAL = {"fastapi", "sqlalchemy", "starlette", "pyspark", "uvicorn", "jinja2", "multipart", "psycopg",
            "ir_datasets", "matplotlib", "scipy", "polars",
            "torch", "sentence_transformers", "mteb", "pyterrier", "ranx", "numba", "ir_measures", "datasets",
            "mlflow"}  # integrations (numba: ranx's, for its typed dicts)
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS


def module_names() -> list[str]:
    return sorted(m.name for m in pkgutil.walk_packages(judged.__path__, "judged.") if not m.name.endswith("__main__"))


def doctests_of(name: str) -> list[doctest.DocTest]:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs {exc.name} (an optional dependency)")
        raise
    return [t for t in doctest.DocTestFinder(exclude_empty=True).find(module, name) if t.examples]


@pytest.mark.parametrize("name", module_names())
def test_docstring_examples(name):
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report = []
    for test in doctests_of(name):
        runner.run(test, out=report.append, clear_globs=True)
    assert runner.failures == 0, "".join(report)


def test_the_package_has_doctests():
    examples = {}
    for name in module_names():
        try:
            examples[name] = sum(len(t.examples) for t in doctests_of(name))
        except pytest.skip.Exception:
            continue
    assert examples["judged.core.evaluation"] >= 2 and examples["judged.core.measures"] >= 2
    assert sum(examples.values()) >= 25, examples
