"""The engine client's connection pool: its defaults, which settings override (kept apart from ``transport`` so
settings read them without importing the HTTP client).

Measured, not assumed (100 concurrent searches over five loopback engines, BENCHMARKS.md "Performance"): a pool
sized for the whole fan-out (512 connections, all kept idle) cost 2-3 × the CPU per search of this one and
doubled the batch, because httpcore's pool re-examines every connection (a socket probe for each idle one) on
each request it queues or releases; queueing for 100 connections costs less than that.
"""

DEFAULT_CONNECTIONS = 100
DEFAULT_IDLE_CONNECTIONS = 20
DEFAULT_KEEPALIVE_S = 5.0
