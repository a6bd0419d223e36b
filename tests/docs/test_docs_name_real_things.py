"""What the guides name exists: every ``judged.x.y`` a guide writes imports (a module, or a
name in one), every ``judged/...py`` and ``tests/...py`` path is a file, and
docs/architecture.md lists every kernel. A guide naming a module that moved or a test file
that was renamed fails here, not in a reader's hands."""

import ast
import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDES = [ROOT / "README.md", ROOT / "pyproject.toml", *sorted((ROOT / "docs").glob("*.md"))]
DOTTED = re.compile(r"(?<![\w./-])judged(?:\.[A-Za-z_]\w*)+")
FILE_SUFFIXES = ("py", "md", "toml", "txt", "c", "html", "json")  # judged.py (a measures module), not a path
SRC_PATH = re.compile(r"(?<![\w/.-])(?:src/)?(judged/[\w/]+\.(?:py|c))\b")
TEST_PATH = re.compile(r"(?<![\w/.-])(tests/[\w/]+\.py)\b")


def _named(pattern, paths) -> dict:
    """Each match of ``pattern``'s first group (or whole match) -> the first FILE:LINE naming it."""
    out = {}
    for path in paths:
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for m in pattern.finditer(line):
                out.setdefault(m.group(m.lastindex or 0), f"{path.relative_to(ROOT)}:{lineno}")
    return out


def _top_level_names(path: str) -> set:
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {t.id for t in targets if isinstance(t, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _spec(name: str):
    try:
        return importlib.util.find_spec(name)
    except ImportError:  # a parent that needs an optional package, or no such parent
        return None


def names_something(dotted: str) -> bool:
    """``dotted`` is a module of judged, or a name in one (attributes followed). A module
    needing an optional package that is not installed is read, not imported: its
    top-level names."""
    parts = dotted.split(".")
    i = next((i for i in range(len(parts), 0, -1) if _spec(".".join(parts[:i])) is not None), 0)
    if i == 0:
        return False
    module, rest = ".".join(parts[:i]), parts[i:]
    if not rest:
        return True
    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        if (exc.name or "").split(".")[0] == "judged":
            raise
        return rest[0] in _top_level_names(_spec(module).origin)
    for name in rest:
        if not hasattr(obj, name):
            return False
        obj = getattr(obj, name)
    return True


def test_names_something_tells_a_moved_module_from_a_real_one():
    assert names_something("judged.analyses.holes.unjudged.holes_report") and names_something("judged.core.io")
    assert names_something("judged.evaluate") and names_something("judged.integrations.mlflow.log_result")
    assert not names_something("judged.holes") and not names_something("judged.core.io.no_such_reader")
    assert not names_something("judged.integrations.mlflow.no_such_function")


@pytest.mark.parametrize("dotted, where", sorted(
    (d, w) for d, w in _named(DOTTED, GUIDES).items() if d.rsplit(".", 1)[-1] not in FILE_SUFFIXES))
def test_a_guide_names_a_module_path_that_imports(dotted, where):
    assert names_something(dotted), f"{where}: {dotted} names no module or name of judged"


def test_every_source_and_test_path_a_guide_or_the_source_cites_exists():
    sources = [*GUIDES, *sorted((ROOT / "src" / "judged").rglob("*.py")), *sorted((ROOT / "benchmarks").glob("*.py"))]
    missing = {p: w for p, w in _named(TEST_PATH, sources).items() if not (ROOT / p).is_file()}
    missing |= {p: w for p, w in _named(SRC_PATH, GUIDES).items() if not (ROOT / "src" / p).is_file()}
    assert missing == {}


def kernels_in_source() -> set:
    """Every ``@kernel`` function, as ``module.name`` below judged.core (else from judged)."""
    out = set()
    for path in sorted((ROOT / "src" / "judged").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT / "src").with_suffix("").parts).removesuffix(".__init__")
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Name) and d.id == "kernel" for d in node.decorator_list):
                out.add(f"{module}.{node.name}".removeprefix("judged.core.").removeprefix("judged."))
    return out


def test_the_architecture_guide_lists_every_kernel():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    kernels = kernels_in_source()
    assert len(kernels) >= 20
    assert sorted(k for k in kernels if f"`{k}`" not in text) == []
