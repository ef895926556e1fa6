"""The engine client's connection pool: its defaults, which settings override (kept apart from ``transport`` so
settings read them without importing the HTTP client).

Measured, not assumed (100 concurrent searches over five loopback engines, BENCHMARKS.md "Performance"): curl's
pool (libcurl's multi handle, in C) costs the same per request at 512 transfers at once as at 100, so the
connections are sized for 100 searches' fan-out; queueing 500 requests for 100 connections alone kept a batch
at twice the network's time. httpx2's pool (used only with impersonation off) re-examines every connection per
request it queues, which is why few connections stay idle.
"""

DEFAULT_CONNECTIONS = 512
DEFAULT_IDLE_CONNECTIONS = 20
DEFAULT_KEEPALIVE_S = 5.0
# An engine's answer, after decompression: the largest recorded SERP (aql-serps) decodes to 0.68 MB. Sixteen
# engines each sending this much at once cost the event loop ~100 ms of reading (/healthz 94-152 ms, 39-51 ms
# at 1 MB; BENCHMARKS.md "Reliability"): ``engine_max_bytes`` trades headroom for that.
DEFAULT_MAX_BYTES = 5 * 1024 * 1024
