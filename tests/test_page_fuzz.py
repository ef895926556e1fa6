"""The page's HTML routes under generated input, against a real `serpfuse serve` on loopback (the API's routes
have schemathesis, test_api_fuzz.py; the page is not in /openapi.json). Whatever the query string or form holds,
the answer is below 500 and HTML or a redirect; the server's own /metrics counts no 5xx."""

from __future__ import annotations

import re
from urllib.parse import urlencode

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from redis_server import ServeProcess

FIELDS = ("q", "time_range", "engines", "view", "pageno", "format", "categories", "language", "safesearch")
# text a user or a hostile link might carry: controls, surrogates' neighbours, markup, very long runs
VALUES = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "0", "-1", "99999999999999999999", "1e9", "day", "YEAR", "html", "json", "rss",
                     "csv", "explain", "bing,nope", "google", "<script>", "%00", "\u2029", "\x1b[2J"]),
    st.text(alphabet="ab ", min_size=500, max_size=3000),
)  # fmt: skip
PARAMS = st.lists(st.tuples(st.sampled_from(FIELDS), VALUES), max_size=6)


def _answered(api: ServeProcess) -> tuple[int, int]:
    """(requests the server counted, of them 5xx) from its /metrics."""
    _, _, raw = api.get("/metrics")
    counted = re.findall(r"^serpfuse_http_requests_total\{([^}]*)\} (\S+)$", raw.decode(), re.M)
    total = sum(int(float(v)) for _, v in counted)
    return total, sum(int(float(v)) for labels, v in counted if 'status="5' in labels)


def _check(status: int, headers: dict[str, str], raw: bytes) -> None:
    assert status < 500, raw[:300]
    kind = headers.get("content-type", "")
    assert status in (301, 302, 303, 307, 308) or kind.startswith(("text/html", "application/json", "text/csv",
                                                                    "application/rss+xml", "application/xml")), kind  # fmt: skip


def test_no_generated_page_request_gets_a_server_error(api: ServeProcess):
    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(params=PARAMS, method=st.sampled_from(["GET", "POST"]), path=st.sampled_from(["/", "/search"]))
    def ask(params, method, path):
        encoded = urlencode(params)
        if method == "GET":
            _check(*api.get(f"{path}?{encoded}" if encoded else path))
        else:
            form = {"Content-Type": "application/x-www-form-urlencoded"}
            _check(*api.post(path, None, headers=form, raw=encoded.encode()))

    ask()
    api.get("/search?q=" + "x" * 5000 + "&pageno=-3&view=%00")
    # the server's own count, whatever the client saw: the requests arrived, none was a 5xx
    total, errors = _answered(api)
    assert total > 100 and errors == 0
