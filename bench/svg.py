"""Minimal SVG charts for bench/report.py (standard library only): log/linear line charts
and grouped bar charts, with axes, ticks, a legend and a title."""
import math
from xml.sax.saxutils import escape

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
          "#bcbd22", "#17becf", "#393b79", "#637939"]
W, H = 760, 420
L, R, T, B = 80, 200, 40, 60  # margins; the legend sits in the right margin


def _svg(body, title):
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
            f'font-family="sans-serif" font-size="12">\n<rect width="{W}" height="{H}" fill="white"/>\n'
            f'<text x="{(L + W - R) / 2}" y="22" text-anchor="middle" font-size="15">{escape(title)}</text>\n'
            + "\n".join(body) + "\n</svg>\n")


def _ticks(lo, hi, log):
    if log:
        a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
        step = max(1, (b - a) // 8)
        return [10.0 ** e for e in range(a, b + 1, step)]
    span = hi - lo or 1.0
    raw = span / 6
    mag = 10 ** math.floor(math.log10(raw))
    step = min((m * mag for m in (1, 2, 5, 10) if m * mag >= raw), default=mag)
    start = math.floor(lo / step) * step
    return [start + i * step for i in range(int((hi - start) / step) + 2)]


def _fmt(v):
    if v == 0:
        return "0"
    if 1 <= abs(v) < 1e4 and v == int(v):
        return str(int(v))
    if abs(v) >= 1e4 or abs(v) < 1e-2:
        e = math.floor(math.log10(abs(v)))
        m = v / 10 ** e
        return f"1e{e}" if abs(m - 1) < 1e-9 else f"{m:.3g}e{e}"
    return f"{v:.3g}"


def line_chart(path, title, series, xlabel, ylabel, xlog=True, ylog=True, hlines=(), xfmt=_fmt):
    """series: [(label, [(x, y), ...]) or (label, points, {"color": i, "dash": bool})];
    hlines: [(y, label)] dashed reference lines."""
    series = [(t[0], t[1], t[2] if len(t) > 2 else {}) for t in series]
    pts = [p for _, s, _ in series for p in s if (not xlog or p[0] > 0) and (not ylog or p[1] > 0)]
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts] + [h for h, _ in hlines]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if ylog:
        y0, y1 = 10 ** math.floor(math.log10(y0)), 10 ** math.ceil(math.log10(y1))
    else:
        pad = (y1 - y0) * 0.1 or abs(y1) * 0.1 or 1.0
        y0, y1 = y0 - pad, y1 + pad
    if x0 == x1:
        x1 = x0 * 2 if xlog else x0 + 1
    fx = (lambda v: math.log10(v)) if xlog else (lambda v: v)
    fy = (lambda v: math.log10(v)) if ylog else (lambda v: v)
    px = lambda v: L + (fx(v) - fx(x0)) / (fx(x1) - fx(x0)) * (W - L - R)
    py = lambda v: H - B - (fy(v) - fy(y0)) / (fy(y1) - fy(y0)) * (H - T - B)
    body = [f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="#333"/>']
    for t in _ticks(y0, y1, ylog):
        if y0 <= t <= y1:
            body.append(f'<line x1="{L}" x2="{W - R}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#ddd"/>')
            body.append(f'<text x="{L - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
    xt = sorted(set(xs)) if len(set(xs)) <= 12 else _ticks(x0, x1, xlog)
    last = -1e9
    for t in xt:
        if x0 <= t <= x1:
            body.append(f'<line x1="{px(t):.1f}" x2="{px(t):.1f}" y1="{T}" y2="{H - B}" stroke="#eee"/>')
            if px(t) - last >= 48:  # skip a label that would overlap the previous one
                body.append(f'<text x="{px(t):.1f}" y="{H - B + 16}" text-anchor="middle">{escape(xfmt(t))}</text>')
                last = px(t)
    for y, label in hlines:
        body.append(f'<line x1="{L}" x2="{W - R}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#555" '
                    f'stroke-dasharray="5,4"/>')
        body.append(f'<text x="{W - R - 4}" y="{py(y) - 4:.1f}" text-anchor="end" fill="#555">{escape(label)}</text>')
    for i, (label, s, style) in enumerate(series):
        c = COLORS[style.get("color", i) % len(COLORS)]
        dash = ' stroke-dasharray="6,3"' if style.get("dash") else ""
        s = [p for p in s if (not xlog or p[0] > 0) and (not ylog or p[1] > 0)]
        if not s:
            continue
        d = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s)
        body.append(f'<polyline points="{d}" fill="none" stroke="{c}" stroke-width="2"{dash}/>')
        for x, y in s:
            body.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{c}"/>')
        ly = T + 14 + i * 18
        body.append(f'<line x1="{W - R + 10}" x2="{W - R + 30}" y1="{ly - 4}" y2="{ly - 4}" stroke="{c}" '
                    f'stroke-width="2"{dash}/>')
        body.append(f'<text x="{W - R + 36}" y="{ly}">{escape(label)}</text>')
    body.append(f'<text x="{(L + W - R) / 2}" y="{H - 18}" text-anchor="middle">{escape(xlabel)}</text>')
    body.append(f'<text x="18" y="{(T + H - B) / 2}" text-anchor="middle" '
                f'transform="rotate(-90 18 {(T + H - B) / 2})">{escape(ylabel)}</text>')
    with open(path, "w") as f:
        f.write(_svg(body, title))


def bar_chart(path, title, categories, series, ylabel, ylog=False, hlines=()):
    """categories: x labels; series: [(label, [value per category])] drawn side by side."""
    vals = [v for _, s in series for v in s if v is not None and (not ylog or v > 0)] + [h for h, _ in hlines]
    y1 = max(vals) * 1.1
    y0 = 0.0
    if ylog:
        y0, y1 = 10 ** math.floor(math.log10(min(vals))), 10 ** math.ceil(math.log10(max(vals)))
    fy = (lambda v: math.log10(v)) if ylog else (lambda v: v)
    py = lambda v: H - B - (fy(v) - fy(y0)) / (fy(y1) - fy(y0)) * (H - T - B)
    body = [f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="#333"/>']
    for t in _ticks(y0 if not ylog else y0, y1, ylog):
        if y0 <= t <= y1:
            body.append(f'<line x1="{L}" x2="{W - R}" y1="{py(t):.1f}" y2="{py(t):.1f}" stroke="#ddd"/>')
            body.append(f'<text x="{L - 6}" y="{py(t) + 4:.1f}" text-anchor="end">{_fmt(t)}</text>')
    gw = (W - L - R) / len(categories)
    bw = gw * 0.8 / max(1, len(series))
    for ci, cat in enumerate(categories):
        gx = L + ci * gw + gw * 0.1
        body.append(f'<text x="{L + (ci + 0.5) * gw:.1f}" y="{H - B + 16}" text-anchor="middle">{escape(cat)}</text>')
        for si, (_, s) in enumerate(series):
            v = s[ci]
            if v is None or (ylog and v <= 0):
                continue
            x, top = gx + si * bw, py(v)
            body.append(f'<rect x="{x:.1f}" y="{top:.1f}" width="{bw * 0.95:.1f}" height="{H - B - top:.1f}" '
                        f'fill="{COLORS[si % len(COLORS)]}"><title>{escape(_fmt(v))}</title></rect>')
    for y, label in hlines:
        body.append(f'<line x1="{L}" x2="{W - R}" y1="{py(y):.1f}" y2="{py(y):.1f}" stroke="#555" stroke-dasharray="5,4"/>')
        body.append(f'<text x="{W - R - 4}" y="{py(y) - 4:.1f}" text-anchor="end" fill="#555">{escape(label)}</text>')
    for si, (label, _) in enumerate(series):
        ly = T + 14 + si * 18
        body.append(f'<rect x="{W - R + 10}" y="{ly - 10}" width="14" height="10" fill="{COLORS[si % len(COLORS)]}"/>')
        body.append(f'<text x="{W - R + 30}" y="{ly}">{escape(label)}</text>')
    body.append(f'<text x="18" y="{(T + H - B) / 2}" text-anchor="middle" '
                f'transform="rotate(-90 18 {(T + H - B) / 2})">{escape(ylabel)}</text>')
    with open(path, "w") as f:
        f.write(_svg(body, title))
