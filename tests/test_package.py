"""The package's lazy exports."""

import importlib


def test_evaluate_stays_the_function_when_its_module_is_imported_first():
    # the CLI and judged.analyses.meta import the engine module first; the package attribute
    # judged.evaluate must still be the evaluate() function
    importlib.import_module("judged.core.evaluation")
    import judged

    assert callable(judged.evaluate) and judged.evaluate.__name__ == "evaluate"
    assert judged.evaluate({"q": {"d": 1}}, {"q": {"d": 1.0}}, ["P@1"]).mean().iloc[0, 0] == 1.0


def test_the_version_has_one_home():
    # judged.core.__version__; pyproject.toml reads it (dynamic), so the installed metadata says the same
    import importlib.metadata

    import judged
    import judged.core

    assert judged.__version__ is judged.core.__version__ == importlib.metadata.version("judged")
