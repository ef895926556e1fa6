"""``python tests/healthz_probe.py BASE_URL``: GET BASE_URL/healthz every 50 ms until stdin closes, then print
the latencies (ms) as one JSON list. A process of its own, so a fake engine serving megabytes from the
measuring process (its threads hold that process's GIL) does not add its own delay to the server's figure."""

from __future__ import annotations

import json
import sys
import threading
import time
import urllib.request

INTERVAL_S = 0.05


def main(base: str) -> None:
    closed = threading.Event()
    threading.Thread(target=lambda: (sys.stdin.read(), closed.set()), daemon=True).start()
    print("ready", flush=True)
    probes: list[float] = []
    while not closed.is_set():
        started = time.monotonic()
        try:
            with urllib.request.urlopen(base + "/healthz", timeout=10) as reply:
                reply.read()
                if reply.status == 200 and not closed.is_set():
                    probes.append(round((time.monotonic() - started) * 1000, 1))
        except OSError:
            pass
        closed.wait(INTERVAL_S)
    print(json.dumps(probes), flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
