"""The benchmark harness: metrics checked against trec_eval, TREC file I/O, paired bootstrap and sweeps, and
the corpora's protocols (crw56 here; MQ2008-agg in ``mq2008``). ``serpfuse bench`` drives them."""
