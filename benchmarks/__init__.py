"""Research benchmarks on the recorded corpora under $SERPFUSE_DATA: crw56, MQ2008-agg, the consensus-v2.1 frozen
lists, the article-extraction corpus, the robustness experiments and the performance probes.

Not part of the installed package: run from the repository root as ``python -m benchmarks ...`` (or through the
Makefile's ``bench-*`` targets); ``serpfuse bench`` is the part a user runs on their own recording.
"""
