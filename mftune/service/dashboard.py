"""The live dashboard: HTML pages with SVG charts drawn on the server.

No JavaScript, no CDN, no asset to download: each page is one HTML document
with inline CSS and SVG, and refreshes itself every few seconds (``<meta
http-equiv="refresh">``). Its facts come from the same summary ``mftune
status`` and ``mftune report`` print (:func:`mftune.engine.summary.study_summary`,
read through a read-only connection), plus the stored pulls for the
candidates × fidelities table.
"""

from __future__ import annotations

import html
import json
import math

__all__ = ["index_page", "study_page"]

REFRESH_SECONDS = 2
_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1100px}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.1em;margin:1.2em 0 .4em}
table{border-collapse:collapse;margin:.3em 0}td,th{padding:2px 8px;border-bottom:1px solid #ddd;
text-align:right}th{background:#f3f3f3}td.l,th.l{text-align:left}
.out{color:#999}.best{font-weight:bold;background:#eef7ee}.bar{background:#eee;width:320px;
height:14px;display:inline-block;vertical-align:middle}.bar span{display:block;height:14px;
background:#4a8}.cert{padding:.5em .8em;border-left:4px solid #4a8;background:#f4faf6}
.pending{border-left-color:#d90;background:#fdf8ec}.charts svg{margin-right:12px}
.muted{color:#777}
"""


def _e(x) -> str:
    return html.escape(str(x))


def _fmt(x, digits: int = 4) -> str:
    if x is None:
        return "-"
    if isinstance(x, float):
        return f"{x:.{digits}g}"
    return str(x)


def _doc(title: str, body: str) -> str:
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{_e(title)}</title>"
            f"<meta http-equiv='refresh' content='{REFRESH_SECONDS}'>"
            f"<style>{_CSS}</style></head><body>{body}</body></html>")


# -- charts ------------------------------------------------------------------------
def chart(xs, ys, *, title: str, xlabel: str, ylabel: str, step: bool = False,
          chart_id: str = "", y_min: float | None = None) -> str:
    """A line (or step) chart as inline SVG, 340 × 220 px (y from ``y_min`` if given)."""
    w, h, left, bottom, top, right = 340, 220, 52, 36, 24, 10
    pts = [(float(x), float(y)) for x, y in zip(xs, ys, strict=True)
           if x is not None and y is not None and math.isfinite(x) and math.isfinite(y)]
    head = (f"<svg id='{_e(chart_id)}' class='chart' xmlns='http://www.w3.org/2000/svg' "
            f"width='{w}' height='{h}' role='img' aria-label='{_e(title)}'>"
            f"<text x='{w / 2}' y='15' text-anchor='middle' font-size='13'>{_e(title)}</text>")
    if not pts:
        return head + f"<text x='{w / 2}' y='{h / 2}' text-anchor='middle' fill='#999'>" \
                      "no data yet</text></svg>"
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y0, y1 = min(p[1] for p in pts), max(p[1] for p in pts)
    if y_min is not None:
        y0 = min(y0, y_min)
    if y1 <= y0:  # a flat line: a small band around it
        pad = max(abs(y0) * 0.05, 1e-3)
        y0, y1 = y0 - pad, y1 + pad
    x1 = x1 if x1 > x0 else x0 + 1

    def sx(x):
        return left + (x - x0) / (x1 - x0) * (w - left - right)

    def sy(y):
        return h - bottom - (y - y0) / (y1 - y0) * (h - bottom - top)

    path = []
    for i, (x, y) in enumerate(pts):
        if i and step:
            path.append(f"L{sx(x):.1f},{sy(pts[i - 1][1]):.1f}")
        path.append(f"{'L' if i else 'M'}{sx(x):.1f},{sy(y):.1f}")
    axes = (f"<line x1='{left}' y1='{h - bottom}' x2='{w - right}' y2='{h - bottom}' "
            f"stroke='#888'/><line x1='{left}' y1='{top}' x2='{left}' y2='{h - bottom}' "
            f"stroke='#888'/>")
    ticks = (f"<text x='{left - 4}' y='{sy(y1) + 4:.1f}' text-anchor='end' font-size='10'>"
             f"{_fmt(y1, 3)}</text><text x='{left - 4}' y='{sy(y0) + 4:.1f}' "
             f"text-anchor='end' font-size='10'>{_fmt(y0, 3)}</text>"
             f"<text x='{left}' y='{h - bottom + 13}' font-size='10'>{_fmt(x0, 3)}</text>"
             f"<text x='{w - right}' y='{h - bottom + 13}' text-anchor='end' font-size='10'>"
             f"{_fmt(x1, 3)}</text>"
             f"<text x='{(left + w) / 2}' y='{h - 6}' text-anchor='middle' font-size='11'>"
             f"{_e(xlabel)}</text><text x='12' y='{(top + h - bottom) / 2}' font-size='11' "
             f"text-anchor='middle' transform='rotate(-90 12 {(top + h - bottom) / 2})'>"
             f"{_e(ylabel)}</text>")
    dots = "".join(f"<circle cx='{sx(x):.1f}' cy='{sy(y):.1f}' r='2' fill='#275'/>"
                   for x, y in pts[-60:])
    return (head + axes + ticks + f"<path d='{' '.join(path)}' fill='none' stroke='#275' "
            f"stroke-width='1.8'/>" + dots + "</svg>")


def bars(labels, values, *, title: str, xlabel: str, ylabel: str, chart_id: str = "") -> str:
    """A bar chart as inline SVG, 340 × 220 px."""
    w, h, left, bottom, top = 340, 220, 52, 36, 36
    vmax = max([float(v) for v in values] + [1e-12])
    n = max(len(values), 1)
    slot = (w - left - 10) / n
    out = [f"<svg id='{_e(chart_id)}' class='chart' xmlns='http://www.w3.org/2000/svg' "
           f"width='{w}' height='{h}' role='img' aria-label='{_e(title)}'>"
           f"<text x='{w / 2}' y='15' text-anchor='middle' font-size='13'>{_e(title)}</text>"
           f"<line x1='{left}' y1='{h - bottom}' x2='{w - 10}' y2='{h - bottom}' "
           f"stroke='#888'/>"]
    for i, (label, v) in enumerate(zip(labels, values, strict=True)):
        bh = float(v) / vmax * (h - bottom - top)
        x = left + i * slot + slot * 0.15
        out.append(f"<rect x='{x:.1f}' y='{h - bottom - bh:.1f}' width='{slot * 0.7:.1f}' "
                   f"height='{bh:.1f}' fill='#4a8'><title>{_e(label)}: {_fmt(v)}</title>"
                   f"</rect><text x='{x + slot * 0.35:.1f}' y='{h - bottom + 13}' "
                   f"text-anchor='middle' font-size='10'>{_e(label)}</text>"
                   f"<text x='{x + slot * 0.35:.1f}' y='{h - bottom - bh - 3:.1f}' "
                   f"text-anchor='middle' font-size='10'>{_fmt(float(v), 3)}</text>")
    out.append(f"<text x='{(left + w) / 2}' y='{h - 6}' text-anchor='middle' font-size='11'>"
               f"{_e(xlabel)}</text><text x='12' y='{(top + h - bottom) / 2}' font-size='11' "
               f"text-anchor='middle' transform='rotate(-90 12 {(top + h - bottom) / 2})'>"
               f"{_e(ylabel)}</text></svg>")
    return "".join(out)


# -- pages -------------------------------------------------------------------------
def index_page(views: list[dict], summaries: list[dict]) -> str:
    """The list of studies: state, pulls, survivors, best so far."""
    rows = []
    for v, s in zip(views, summaries, strict=True):
        best = (s.get("best") or {}).get("score")
        n = (s.get("study") or {}).get("n_candidates", "-")
        rows.append(f"<tr><td class='l'><a href='studies/{_e(v['name'])}'>{_e(v['name'])}</a>"
                    f"</td><td class='l'>{_e(v['state'])}</td><td>{_e(s.get('pulls', '-'))}"
                    f"</td><td>{_e(s.get('running', '-'))}</td><td>{_e(s.get('alive', n))} of "
                    f"{_e(n)}</td><td>{_fmt(best)}</td><td class='l'>"
                    f"{_e(s.get('status', s.get('error', '')))}</td></tr>")
    table = ("<table id='studies'><tr><th class='l'>study</th><th class='l'>engine</th>"
             "<th>pulls</th><th>running</th><th>alive</th><th>best so far</th>"
             "<th class='l'>status</th></tr>" + "".join(rows) + "</table>")
    empty = "" if rows else "<p class='muted'>No study yet: create one with the API.</p>"
    return _doc("mftune studies", f"<h1>mftune studies</h1>{table}{empty}")


def _arm_table(summary: dict, rows: list, settings: dict | None) -> str:
    """Candidates × fidelities: mean ± 95% half-width (n) of the finished pulls."""
    st = summary["study"]
    values = st["values"]
    k = st["n_candidates"]
    stats: dict[tuple[int, int], list[float]] = {}
    for r in rows:
        if r.status == "done" and r.score is not None:
            stats.setdefault((r.arm, r.fidelity), []).append(float(r.score))
    sigma = (settings or {}).get("sigma")
    sigmas = sigma if isinstance(sigma, list) else [sigma] * len(values)
    arms = {a["arm"]: a for a in summary.get("arms", [])}
    best_arm = (summary.get("best") or {}).get("arm")
    head = "".join(f"<th>{_e(st['fidelity'])}={_e(v)}</th>" for v in values)
    out = [f"<table id='candidates'><tr><th>arm</th><th class='l'>configuration</th>{head}"
           "<th class='l'>state</th></tr>"]
    for a in range(k):
        cells = []
        for m in range(len(values)):
            xs = stats.get((a, m), [])
            if not xs:
                cells.append("<td class='muted'>-</td>")
                continue
            mean = sum(xs) / len(xs)
            if len(xs) > 1:
                sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1))
            else:
                sd = sigmas[m] if m < len(sigmas) and sigmas[m] is not None else float("nan")
            half = 1.96 * sd / math.sqrt(len(xs))
            cells.append(f"<td>{mean:.4g} ± {half:.2g} <span class='muted'>({len(xs)})"
                         "</span></td>")
        info = arms.get(a)
        if info is None:
            state = "-"
        elif "run" in info:  # a Gaussian-process study: proposed, and run or not yet
            state = "evaluated" if info["run"] else "proposed, not run"
        elif info["active"]:
            state = "alive"
        else:
            state = f"eliminated at {_e(st['fidelity'])}={_e(values[info['eliminated_at']])}"
        cls = "best" if a == best_arm else ("out" if info and not info["active"] else "")
        cfg = json.dumps(_config_of(summary, rows, a))
        out.append(f"<tr class='{cls}'><td>{a}</td><td class='l'>{_e(cfg)}</td>"
                   f"{''.join(cells)}<td class='l'>{state}</td></tr>")
    out.append("</table><p class='muted'>mean ± 95% half-width (1.96 s/√n; σ when n = 1), "
               "(n) finished pulls; the recommended arm in bold.</p>")
    return "".join(out)


def _config_of(summary: dict, rows: list, arm: int) -> dict:
    configs = summary.get("configs") or {}
    return configs.get(arm, {})


def study_page(view: dict, summary: dict, rows: list, configs: list | None = None) -> str:
    """One study: progress, certificate, candidates table, survivors and the charts."""
    name = view["name"]
    if "error" in summary and "study" not in summary:
        return _doc(name, f"<h1>{_e(name)}</h1><p>not readable yet: {_e(summary['error'])}"
                          "</p>")
    st = summary["study"]
    if configs is not None:
        summary = {**summary, "configs": dict(enumerate(configs))}
    k = st["n_candidates"]
    alive = summary.get("alive", k)
    done_frac = 1.0 if summary.get("status") == "finished" else (
        (k - alive) / max(k - 1, 1))
    certified = summary.get("status") == "finished"
    statement = summary.get("statement") or (
        "calibrating: the settings (σ, bias bounds, costs) are not known yet")
    engine = (f"(engine: {_e(view['state'])}"
              f"{', ' + _e(view['reason']) if view.get('reason') else ''})")
    evaluated = summary.get("evaluated")  # a Gaussian-process study: nothing is eliminated
    if evaluated is not None:
        between = (f"<p id='between'>{_e(st['algorithm'])} proposes configurations until its "
                   f"budget or pull cap and gives no certificate: {evaluated} of {k} "
                   f"evaluated so far {engine}.</p>")
        done_frac, counted = evaluated / max(k, 1), f"{evaluated} of {k} configurations evaluated"
    else:
        between = "" if certified else (
            f"<p id='between'>Between the study and its certificate: {alive} of {k} "
            "configurations still alive; the elimination rule must separate them at "
            f"{_e(st['fidelity'])}={_e(st['values'][-1])} {engine}.</p>")
        counted = f"{alive} of {k} configurations alive"
    progress = (f"<p id='progress'><b>{summary['pulls']}</b> pulls finished "
                f"({summary['failed']} failed), {summary['running']} running, cost "
                f"{summary['cost']:.2f} s · {counted} "
                f"<span class='bar'><span style='width:{100 * done_frac:.0f}%'></span></span>"
                f" · leases {view['leases']}, expired {view['expired_leases']}</p>")
    head = "Certificate" if certified else "No certificate yet"
    cert = (f"<div id='certificate' class='cert{'' if certified else ' pending'}'>"
            f"<b>{head}</b> — {_e(statement)}</div>")
    fids = summary["fidelities"]
    surv = ("<table id='survivors'><tr><th>" + _e(st["fidelity"]) + "</th><th>pulls</th>"
            "<th>running</th><th>pending</th><th>cost_s</th><th>arms reached</th>"
            "<th>eliminated there</th></tr>" + "".join(
                f"<tr><td>{_e(f['value'])}</td><td>{f['pulls']}</td><td>{f['running']}</td>"
                f"<td>{f['pending']}</td><td>{f['cost']:.3g}</td><td>{f['arms']}</td>"
                f"<td>{f['eliminated']}</td></tr>" for f in fids) + "</table>")
    tl = summary.get("timeline", [])
    charts = ("<div class='charts'>"
              + chart([t["cost"] for t in tl], [t["best_score"] for t in tl],
                      title="best so far", xlabel="cumulative cost (s)",
                      ylabel=st["objective"], chart_id="chart-best")
              + chart([t["cost"] for t in tl], [t["survivors"] for t in tl], step=True,
                      title="eliminations over time" if evaluated is None
                      else "configurations evaluated", xlabel="cumulative cost (s)",
                      ylabel="configurations alive" if evaluated is None else "evaluated",
                      chart_id="chart-survivors", y_min=0)
              + bars([str(f["value"]) for f in fids], [f["cost"] for f in fids],
                     title="cost per fidelity", xlabel=st["fidelity"], ylabel="cost (s)",
                     chart_id="chart-cost")
              + "</div>")
    body = (f"<p><a href='../'>all studies</a></p><h1 id='study-name'>{_e(name)}</h1>"
            f"<p class='muted'>{_e(st['algorithm'])}, {_e(st['direction'])} "
            f"{_e(st['objective'])}, {k} configurations, seed {_e(st['seed'])} — "
            f"{_e(summary.get('status'))}</p>{progress}{cert}{between}"
            f"<h2>Charts</h2>{charts}<h2>Candidates × fidelities</h2>"
            f"{_arm_table(summary, rows, summary.get('settings'))}"
            f"<h2>Survivors and cost per fidelity</h2>{surv}")
    return _doc(f"{name} — mftune", body)
