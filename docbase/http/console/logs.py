"""The Logs page: the requests every process of the server served, and their minutes.

``GET /_/logs`` lists the newest requests of this database's request log
(:mod:`docbase.core.requestlog`), :data:`PAGE_SIZE` a page (``?page=N``), each with its
time, method, route template, status, duration and kind of credential, and draws three
charts of the last ``?hours=`` (1, 3 or 24; :data:`HOURS`) per minute: requests, errors
(4xx and 5xx apart) and the 99th percentile of the durations. The log is read from the
store, so the page shows what every worker wrote, each within a second of its request.
With ``request_log_keep = 0`` nothing is logged and the page says so.
"""

from __future__ import annotations

from urllib.parse import urlencode

from litestar import Response, get

from docbase.core.requestlog import MinuteFigures, logged_count, per_minute, recent_requests
from docbase.http.console.charts import Chart, line_chart, minute_label
from docbase.http.console.guard import HttpRequest, console_paths, signed_in
from docbase.http.console.rendering import render

LOG_STATE = "docbase_request_log"
"""App state key, true when the server keeps a request log (``docbase serve`` with
``request_log_keep`` above 0); an app without it (embedded) logs no request."""
PAGE_SIZE = 50
HOURS = (1, 3, 24)
"""The spans the charts can show; the first of the query or 3."""


def _whole(text: str | None, default: int) -> int:
    try:
        return int(text) if text is not None else default
    except ValueError:
        return default


def charts(figures: list[MinuteFigures]) -> list[Chart]:
    """The three charts of the Logs page."""
    minutes = [f.minute for f in figures]
    total = sum(f.requests for f in figures)
    busiest = max(figures, key=lambda f: f.requests, default=None)
    client = sum(f.client_errors for f in figures)
    server = sum(f.server_errors for f in figures)
    latencies = [f.p99_ms for f in figures if f.p99_ms is not None]
    peak = (f"; busiest minute {minute_label(busiest.minute)} UTC with {busiest.requests}"
            if busiest and busiest.requests else "")
    return [
        line_chart("Requests per minute", minutes,
                   [("requests", "series-requests", [float(f.requests) for f in figures])],
                   unit="/min", summary=f"{total} requests{peak}."),
        line_chart("Errors per minute", minutes,
                   [("4xx", "series-client", [float(f.client_errors) for f in figures]),
                    ("5xx", "series-server", [float(f.server_errors) for f in figures])],
                   unit="/min", summary=f"{client} answers 4xx and {server} answers 5xx."),
        line_chart("99th percentile of durations", minutes,
                   [("p99", "series-latency", [f.p99_ms for f in figures])],
                   unit="ms", summary=(f"at most {max(latencies):.1f} ms in a minute."
                                       if latencies else "no request.")),
    ]


@get(console_paths("/logs"))
async def logs_page(request: HttpRequest) -> Response[str]:
    """``GET /_/logs``: the newest logged requests and the charts of the last hours."""
    console = await signed_in(request)
    store = console.database.store
    page = max(1, _whole(request.query_params.get("page"), 1))
    hours = _whole(request.query_params.get("hours"), 3)
    hours = hours if hours in HOURS else 3
    shown = await recent_requests(store, skip=(page - 1) * PAGE_SIZE, limit=PAGE_SIZE + 1)
    figures = await per_minute(store, hours * 60)

    def link(number: int) -> str:
        return f"{console.base}/logs?{urlencode({'page': number, 'hours': hours})}"

    return render("logs.html", **console.page(
        title="Logs", requests=shown[:PAGE_SIZE], charts=charts(figures), hours=hours,
        spans=HOURS, page=page, held=await logged_count(store),
        unlisted=sum(f.unlisted for f in figures),
        enabled=bool(request.app.state.get(LOG_STATE, False)),
        previous=link(page - 1) if page > 1 else None,
        next=link(page + 1) if len(shown) > PAGE_SIZE else None))

LOG_HANDLERS = [logs_page]
