"""CLI comfort: --version, python -m judged, an example in every --help, shell completion."""

import shutil
import subprocess
import sys

import pytest

import judged
from judged.cli import COMMANDS, build_parser, main
from judged.cli.completion_command import _subparsers


def test_python_dash_m_judged_runs_the_cli():
    out = subprocess.run([sys.executable, "-m", "judged", "--version"], capture_output=True, text=True, check=True)
    first, path = out.stdout.splitlines()  # the version, then which path runs (tests/core/test_native_notice.py)
    assert first == f"judged {judged.__version__}" and path.startswith("compiled extension: ")


def test_every_command_help_has_an_example():
    parser = build_parser()
    commands = _subparsers(parser)
    assert {"eval", "explain", "demo", "completion"} <= set(commands)
    assert "example" in parser.format_help()
    for name, sub in commands.items():
        text = sub.format_help()
        assert "example" in text, f"judged {name} --help has no example"
        assert f"judged {name}" in text.split("example", 1)[1], f"judged {name}: the example does not run {name}"
        for inner, nested in _subparsers(sub).items():  # judged qrels merge, judged meta power, ...
            text = nested.format_help()
            assert "example" in text, f"judged {name} {inner} --help has no example"
            assert f"judged {name} {inner}" in text.split("example", 1)[1], f"judged {name} {inner}: bad example"


def complete(script: str, *words: str) -> list[str]:
    """COMPREPLY of the generated bash function for a command line (the last word is being typed)."""
    words_q = " ".join(f"'{w}'" for w in words)
    prog = f"{script}\nCOMP_WORDS=({words_q}); COMP_CWORD={len(words) - 1}; _judged; printf '%s\\n' \"${{COMPREPLY[@]}}\""
    out = subprocess.run(["bash", "-c", prog], capture_output=True, text=True, check=True)
    return [w for w in out.stdout.splitlines() if w]


@pytest.fixture(scope="module")
def bash_script(tmp_path_factory):
    if not shutil.which("bash"):
        pytest.skip("no bash")
    return subprocess.run([sys.executable, "-m", "judged", "completion", "bash"], capture_output=True, text=True,
                          check=True).stdout


def test_bash_completion_commands_options_and_choices(bash_script):
    assert complete(bash_script, "judged", "ev") == ["eval"]
    # every subcommand (a module may register two, as compare and compare-records)
    assert complete(bash_script, "judged", "") == ["-h", "--help", "--version"] + list(_subparsers(build_parser()))
    assert set(COMMANDS) <= set(_subparsers(build_parser()))
    assert complete(bash_script, "judged", "eval", "--ig") == ["--ignore-identical-ids"]
    assert complete(bash_script, "judged", "eval", "q.txt", "--ties", "") == ["trec", "input", "rank"]
    assert complete(bash_script, "judged", "eval", "--format", "t") == ["table", "tsv", "trec_eval"]
    assert "nDCG@10" in complete(bash_script, "judged", "eval", "-m", "nD")
    assert complete(bash_script, "judged", "completion", "") == ["bash", "zsh"]


def test_bash_completion_offers_files_for_positionals(bash_script, tmp_path):
    (tmp_path / "qrels.txt").write_text("q 0 d 1\n")
    assert complete(bash_script, "judged", "eval", str(tmp_path / "qr")) == [str(tmp_path / "qrels.txt")]


def test_zsh_script_wraps_the_bash_one(capsys):
    assert main(["completion", "zsh"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("#compdef judged\n") and "bashcompinit" in out and "complete -o filenames -F _judged judged" in out


def test_unknown_shell_is_refused(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["completion", "fish"])
    assert exc.value.code == 2
    assert "invalid choice: 'fish'" in capsys.readouterr().err
