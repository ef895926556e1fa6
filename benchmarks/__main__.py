"""``python -m benchmarks``: the research bench's command line (``benchmarks.cli``)."""

from benchmarks.cli import main

main()
