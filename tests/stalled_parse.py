"""A one-shot process whose SearXNG parse stalls, as a parse of hostile input can: ``python tests/stalled_parse.py
STALL_S cli ARGS...`` runs the ``serpfuse`` CLI with ARGS; ``... STALL_S library QUERY DEADLINE_S`` runs
``serpfuse.search(QUERY, engines=["searxng"])`` and prints the engines' statuses as JSON.

The stall is a sleep (it releases the GIL, as lexbor does while it builds a tree), so only the parse thread
waits: the search gives up on it at its budget, and the process must then end without waiting for it.
"""

from __future__ import annotations

import json
import sys
import time

from serpfuse.engines import searxng

_parse = searxng.parse
STALL_S = float(sys.argv[1])


def stalled_parse(*args, **kwargs):
    time.sleep(STALL_S)
    return _parse(*args, **kwargs)


searxng.parse = stalled_parse

if __name__ == "__main__":
    mode = sys.argv[2]
    if mode == "cli":
        from serpfuse.cli import main

        sys.argv = ["serpfuse", *sys.argv[3:]]
        main()
    else:
        import serpfuse

        response = serpfuse.search(sys.argv[3], engines=["searxng"], deadline_s=float(sys.argv[4]))
        print(json.dumps({e.engine: e.status for e in response.engines}), flush=True)
