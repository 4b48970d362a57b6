"""The hybrid-runtime API against Linux (issue 41), from hrt-bench.json."""
from tables.render import block, verdicts

STEM = "hrt-bench"


def hrt(results):
    import hrt_bench  # the driver renders its own table
    data = results.get(STEM)
    if data is None:
        return block(data, verdicts(STEM, data))
    return block(data, hrt_bench.table(data), verdicts(STEM, data))


BLOCKS = {"hrt": hrt}
