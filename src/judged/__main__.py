from judged.cli import run

run()
