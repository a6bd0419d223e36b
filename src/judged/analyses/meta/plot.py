"""matplotlib on the Agg backend (no display), and saving with typed errors."""

from __future__ import annotations

from ...core.errors import JudgedError
from ...core.io.output import replacing


def pyplot():
    """matplotlib.pyplot on the Agg backend, or a clear error when it is not installed."""
    try:
        import matplotlib
    except ImportError:
        raise JudgedError("plotting needs matplotlib, a dependency of judged missing here: pip install matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, path) -> None:
    """Write the figure (format from the file's suffix: png, svg, pdf, ...) and close it."""
    plt = pyplot()
    try:
        with replacing(path, what="plot") as tmp:
            fig.savefig(tmp)
    except ValueError as exc:
        raise JudgedError(f"cannot write plot {path}: {exc}")
    finally:
        plt.close(fig)
