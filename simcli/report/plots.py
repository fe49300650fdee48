"""Plot plumbing shared by every figure: matplotlib without a display, a figure as PNG bytes.

Figures never touch the disk on their own: a command gets bytes and the output contract
writes them beside the tables (no temporary folder to read back, nothing left on interruption).
"""
from __future__ import annotations

import io


def pyplot():
    """matplotlib.pyplot on the Agg backend (imported only when a figure is drawn)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def figure_bytes(fig, dpi: int | None = None) -> bytes:
    """The figure as PNG bytes (no software stamp, so equal figures give equal bytes); closes it."""
    plt = pyplot()
    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    finally:
        plt.close(fig)
    return buf.getvalue()
