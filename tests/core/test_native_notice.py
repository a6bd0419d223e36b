"""An install without the compiled extension says so: at build time (setup.py), in
``judged --version``, and once on stderr when a large file is read on the slow path;
``JUDGED_PURE_PYTHON=1`` (a deliberate choice) keeps the note silent."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import judged.core.native

ROOT = Path(__file__).resolve().parents[2]
# judged imported with the extension missing, as on a machine without a C compiler
NOT_BUILT = "import sys; sys.modules['judged.core._native'] = None\n"


def python(code: str, tmp_path, **env) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if k != "JUDGED_PURE_PYTHON"} | env
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path,
                          env=environment, timeout=300)


def test_version_names_the_path_that_runs(tmp_path):
    code = "from judged.cli import main; main(['--version'])"
    missing = python(NOT_BUILT + code, tmp_path)
    assert missing.stdout.splitlines()[0] == f"judged {judged.__version__}"
    assert missing.stdout.splitlines()[1].startswith("compiled extension: not built (")
    assert "the pure Python/numpy path runs (about 4x slower); to build it, install a C compiler" in missing.stdout
    off = python(code, tmp_path, JUDGED_PURE_PYTHON="1")
    assert off.stdout.splitlines()[1] == ("compiled extension: off (JUDGED_PURE_PYTHON=1): the pure Python/numpy "
                                          "path runs (about 4x slower)")
    if judged.core.native.compiled() is not None:
        assert python(code, tmp_path).stdout.splitlines()[1].startswith("compiled extension: built")


READ_TWICE = """
import judged, judged.core.native
judged.core.native.NOTE_BYTES = 1000
open("qrels", "w").write("1 0 d0 1\\n")
open("run", "w").write("".join(f"1 Q0 d{i} {i + 1} {1000 - i} t\\n" for i in range(200)))
for _ in range(2):
    judged.evaluate("qrels", "run", ["AP"])
    judged.read_run("run")
print(judged.core.native.status()[0])
"""


def test_a_large_file_on_the_slow_path_gets_one_note(tmp_path):
    done = python(NOT_BUILT + READ_TWICE, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "pure"
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("judged: note: run (0 MB) is read and scored on the pure Python path, about 4x slower")
    assert "the compiled extension is not built" in lines[0] and "JUDGED_PURE_PYTHON=1" in lines[0]


def test_a_deliberate_pure_path_and_small_files_stay_silent(tmp_path):
    assert python(READ_TWICE, tmp_path, JUDGED_PURE_PYTHON="1").stderr == ""
    small = READ_TWICE.replace("NOTE_BYTES = 1000", "NOTE_BYTES = 1 << 20")
    assert python(NOT_BUILT + small, tmp_path).stderr == ""
    if judged.core.native.compiled() is not None:
        assert python(READ_TWICE, tmp_path).stderr == ""


@pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None, reason="needs setuptools' compiler setup")
def test_the_build_says_why_the_extension_is_missing(tmp_path):
    """setup.py with a compiler that fails (CC=false): the install goes on (exit 0, the
    extension optional) and stderr says what that means and how to build it."""
    for name in ("setup.py", "pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    for source in (ROOT / "src").rglob("*.c"):  # the extension's units
        (tmp_path / source.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source, tmp_path / source.relative_to(ROOT))
    (tmp_path / "src" / "judged" / "__init__.py").write_text("")
    shutil.copy(ROOT / "src" / "judged" / "core" / "__init__.py", tmp_path / "src" / "judged" / "core")  # the version
    done = subprocess.run([sys.executable, "setup.py", "-q", "build_ext", "--inplace"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, env={**os.environ, "CC": "false"})
    assert done.returncode == 0, done.stderr
    assert "judged: the compiled extension (judged.core._native) could not be built:" in done.stderr
    assert "apt-get install gcc python3-dev" in done.stderr
    assert not list((tmp_path / "src" / "judged").rglob("_native*.so"))
