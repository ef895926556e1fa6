"""`serpfuse judge`: grade a recording's candidates blind in the browser, for ``bench`` and ``calibrate``.

    serpfuse judge REC.json [--out judgments.jsonl] [--port 8767]

Serves a page on 127.0.0.1 only (the judge is the person at this machine). Each grade is written to the JSON
Lines file at once; started again on the same file, the page opens at the first row without a grade.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import Annotated

import typer

from serpfuse.cli.errors import fail, fail_on
from serpfuse.errors import SerpfuseError

HOST = "127.0.0.1"


def register(app: typer.Typer) -> None:
    @app.command("judge")
    def judge_command(
        recording: Annotated[
            Path, typer.Argument(help="a recording (serpfuse record's or a SearXNG JSON list)")
        ],
        out: Annotated[
            Path, typer.Option("--out", "-o", help='the judgments, JSON Lines {"query", "url", "rel"}')
        ] = Path("judgments.jsonl"),
        port: Annotated[int, typer.Option("--port", min=0, max=65535, help="port on 127.0.0.1")] = 8767,
    ) -> None:
        """Grade a recording's candidates blind (0, 1, 2 from the keyboard) on a page served on loopback."""
        import uvicorn

        from serpfuse.bench.judged_recording import JudgmentsError
        from serpfuse.cli.serve import listen
        from serpfuse.judge.app import Judging, create_app
        from serpfuse.judge.pool import load_pool
        from serpfuse.judge.store import JudgmentsFile

        try:
            pool = load_pool(recording)
        except SerpfuseError as exc:
            fail_on(exc)
        if not pool:
            fail(f"the recording {recording} holds no rows to judge")
        if out.is_dir():
            fail(f"--out {out} is a directory; give a file")
        try:
            store = JudgmentsFile.claimed(out)
        except (JudgmentsError, OSError) as exc:
            fail(str(exc).splitlines()[0])
        judging = Judging(pool, store)
        sock = listen(HOST, port)
        progress = judging.progress(0)
        rows = "row" if progress.total == 1 else "rows"
        print(
            f"serpfuse: judging http://{HOST}:{sock.getsockname()[1]}/ ({len(pool)} queries, {progress.total} "
            f"{rows}, {progress.graded} graded; grades go to {out})",
            file=sys.stderr,
            flush=True,
        )
        config = uvicorn.Config(create_app(judging), log_level="warning", access_log=False)
        with contextlib.suppress(KeyboardInterrupt):
            uvicorn.Server(config).run(sockets=[sock])
