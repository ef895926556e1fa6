"""How the perf probe's engines read the fake engines' answers: a module's own top-level function, as every real
engine's ``parse`` is, so a server sends these parses to its parse workers (pickled by reference, imported
there) exactly as it sends a real engine's. A closure would parse in a thread of the server instead, and the
probe would measure neither the workers' hops nor their memory. The probe puts this directory (this
module alone) on ``PYTHONPATH`` so a worker can import it; the engine's name comes in the answer."""

from __future__ import annotations

from typing import Any


def parse(status: int, headers: Any, body: bytes, q: Any) -> list:
    from serpfuse.engines.bodies import json_body
    from serpfuse.engines.rows import make_row

    answer = json_body(body)
    rows = [
        make_row(answer["engine"], i, r["url"], r["title"], r["content"])
        for i, r in enumerate(answer["results"], 1)
    ]
    return [r for r in rows if r is not None]
