"""What ``serpfuse bench`` needs to judge a ranking on your own data: metrics checked against trec_eval
(``metrics``), TREC run and qrels files (``trec``, also ``serpfuse fuse``'s I/O), the paired bootstrap
(``bootstrap``), grid sweeps (``sweep``), configurations named on the command line (``config_specs``), reports
and their tables (``report``), a recording scored against JSON Lines judgments (``judged_recording``) and the
ways to run it (``modes``). The research corpora and experiments live in the repository's ``benchmarks/``."""
