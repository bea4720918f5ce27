"""Make bench/benchlib importable (the benchmark harness lives outside the collection)."""
import pathlib
import sys

BENCH = pathlib.Path(__file__).resolve().parents[3] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))
