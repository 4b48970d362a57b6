"""matplotlib for the benchmark drivers' plots, drawn to files (no display)."""
import sys


def pyplot(driver):
    """matplotlib.pyplot, or None (with a note from `driver`) when it is missing."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"{driver}: matplotlib missing, no plot", file=sys.stderr)
        return None
    return plt
