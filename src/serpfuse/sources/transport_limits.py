"""The engine client's connection pool, sized for the fan-out (its defaults, which settings override).

A search asks each engine at once, so N concurrent searches hold up to N connections per HTTP/1.1 engine host
(one per host over HTTP/2). The pool allows that many and keeps every idle one: a pool that queues requests
for a free connection adds a queue wait to each of them (with 100, a batch of 100 searches over five fake
engines took twice the raw floor), and one that closes idle connections pays a new TLS handshake for each
under load. Kept apart from ``transport`` so settings read the defaults without importing the HTTP client.
"""

DEFAULT_CONNECTIONS = 512
DEFAULT_KEEPALIVE_S = 30.0
