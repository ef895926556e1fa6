"""``serpfuse judge``: grade a recording's candidates blind, on a page served on loopback.

The pool is every row the recording holds for each query (every engine's rows), one row per canonical URL
(``urls.dedup_key``, the key ``bench`` and ``calibrate`` match judgments by), in a random order seeded by the
query, so it is the same after a restart and says nothing about which engine ranked a row where. The page shows
a row's title, URL and snippet only. Each grade is written to the JSON Lines judgments file as it is given.
"""
