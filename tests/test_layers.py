"""Layering you can see: lower layers never import higher ones, no import cycles, no
private name imported across modules (issue 17). Read from the source with ``ast``
(imports inside functions count: they are how cycles hide).

The allow-lists hold the violations of the day this test was written; they may only shrink.
An entry that no longer occurs fails the test too, so that it is removed once fixed.
"""

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

# layer -> module name prefixes (judged.<prefix>); a module's layer is its longest match
LAYERS = [
    ("base", ["errors", "conventions", "native", "_native", "kernels", "naturalsort", "runnames", "progress"]),
    ("io", ["io", "data"]),
    ("align", ["align"]),
    ("side data", ["sidefiles", "scale", "evidence", "eligibility", "answers", "abstention", "answer_key"]),
    ("kernels", ["measures"]),
    ("engine", ["results", "blocks", "evaluation", "stream", "spill", "querysets", "checks", "manifest", "explain",
                "stats"]),
    ("analyses", ["holes", "estimate", "pool", "pooling", "sampling", "qrels_ops", "machine", "machine_pool",
                  "comparison", "meta", "inference", "ppi"]),
    ("front ends", ["cli", "judge", "report", "notebook", "compat", "integrations", "spark", "demo", "__init__",
                    "__main__"]),
]
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}
UNLISTED = "analyses"  # a module not named above (new ones: name them in LAYERS)

# (importer, imported) edges from a lower layer to a higher one, as of issue 17
UPWARD_ALLOWED = {
    ('judged.comparison', 'judged.notebook'),
    ('judged.evaluation', 'judged.notebook'),
    ('judged.machine', 'judged.judge.agreement'),
    ('judged.measures', 'judged.holes'),
}
# strongly connected components of the import graph (cycles) allowed, as of issue 17;
# a cycle must stay inside one of these sets
CYCLES_ALLOWED = [
    ['judged.io', 'judged.io.beir'],
    ['judged.comparison', 'judged.estimate', 'judged.evaluation', 'judged.holes', 'judged.manifest',
     'judged.measures', 'judged.meta.power', 'judged.meta.scores', 'judged.notebook', 'judged.report.plots'],
    ['judged.machine_pool', 'judged.pool'],
    ['judged.judge.campaign', 'judged.judge.ordering'],
]
# (importer, imported module, private name)
PRIVATE_ALLOWED = {
    ('judged.cli.infer', 'judged.evaluation', '_named_runs'),
    ('judged.holes', 'judged.evaluation', '_named_runs'),
    ('judged.inference', 'judged.evaluation', '_named_runs'),
    ('judged.meta.holdout', 'judged.evaluation', '_named_runs'),
    ('judged.meta.pooling', 'judged.evaluation', '_named_runs'),
    ('judged.meta.pooling', 'judged.pool', '_score_impact'),
    ('judged.meta.stability', 'judged.evaluation', '_named_runs'),
    ('judged.pool', 'judged.evaluation', '_named_runs'),
    ('judged.ppi', 'judged.evaluation', '_named_runs'),
}


def _modules() -> dict:
    out = {}
    for path in sorted((SRC / "judged").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(modules: dict):
    """(importer, imported module, name or None) of every judged import, at any depth."""
    for mod, path in modules.items():
        package = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] == "judged":
                        yield mod, _known(alias.name, modules), None
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[:len(package) - node.level + 1] + ([node.module] if node.module else [])
                    target = ".".join(base)
                else:
                    target = node.module or ""
                if target.split(".")[0] != "judged":
                    continue
                for alias in node.names:
                    if target == "judged" and alias.name in ("__version__", "_native"):
                        continue  # the package's version; the compiled extension (judged.native loads it)
                    sub = f"{target}.{alias.name}"
                    if sub in modules:
                        yield mod, sub, None
                    else:
                        yield mod, _known(target, modules), alias.name


def _known(name: str, modules: dict) -> str:
    while name not in modules and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def layer(mod: str) -> str:
    rest = mod.split(".", 1)[1] if "." in mod else "__init__"
    best, length = UNLISTED, -1
    for name, prefixes in LAYERS:
        for prefix in prefixes:
            if (rest == prefix or rest.startswith(prefix + ".")) and len(prefix) > length:
                best, length = name, len(prefix)
    return best


def _graph():
    modules = _modules()
    edges = {}
    for a, b, _ in _imports(modules):
        if a != b:
            edges.setdefault(a, set()).add(b)
    return modules, edges


def _cycles(nodes, edges) -> list:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def upward_imports() -> set:
    _, edges = _graph()
    return {(a, b) for a, targets in edges.items() for b in targets if RANK[layer(a)] < RANK[layer(b)]}


def private_imports() -> set:
    return {(a, b, name) for a, b, name in _imports(_modules())
            if name and name.startswith("_") and not name.startswith("__") and a != b}


def test_no_lower_layer_imports_a_higher_one():
    found = upward_imports()
    assert found - UPWARD_ALLOWED == set(), "a lower layer imports a higher one (see LAYERS)"
    assert UPWARD_ALLOWED - found == set(), "fixed: remove from UPWARD_ALLOWED"


def test_no_new_import_cycle():
    modules, edges = _graph()
    cycles = _cycles(modules, edges)
    allowed = [set(c) for c in CYCLES_ALLOWED]
    new = [sorted(c) for c in cycles if not any(c <= a for a in allowed)]
    assert new == [], "an import cycle (imports inside functions count)"
    stale = [sorted(a) for a in allowed if not any(c <= a and len(c) == len(a) for c in cycles)]
    assert stale == [], "a cycle shrank or is gone: write the remaining one in CYCLES_ALLOWED"


def test_no_private_name_imported_across_modules():
    found = private_imports()
    assert found - PRIVATE_ALLOWED == set(), "a private name imported from another module: make it public"
    assert PRIVATE_ALLOWED - found == set(), "fixed: remove from PRIVATE_ALLOWED"


def test_every_module_has_a_layer():
    assert layer("judged.align") == "align" and layer("judged.io.trec") == "io" and layer("judged") == "front ends"
    assert layer("judged.measures.dcg") == "kernels" and layer("judged.cli.eval") == "front ends"
