"""Charts as inline SVG strings: nothing to load, nothing to run, readable offline and printable.

Two shapes serve the report: grouped bars (a bucket per group, a system per bar, the interval as
a whisker) and lines over ordered buckets (word accuracy by frequency). Missing values (an empty
bucket) draw nothing. Colors are the Okabe-Ito palette, distinguishable with color blindness.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#999999", "#000000")
FONT = "font-family:system-ui,-apple-system,'Segoe UI',Helvetica,Arial,sans-serif"


def color(k: int) -> str:
    return PALETTE[k % len(PALETTE)]


@dataclass
class Series:
    name: str
    values: Sequence[float | None]
    lo: Sequence[float | None] | None = None
    hi: Sequence[float | None] | None = None
    color: str = PALETTE[0]


def _ok(x: float | None) -> bool:
    return x is not None and not (isinstance(x, float) and math.isnan(x))


def _nice_max(values: Sequence[float | None], floor: float = 1.0) -> float:
    top = max([v for v in values if _ok(v)] + [floor])
    if top <= 100 and top > 50:
        return 100.0
    magnitude = 10 ** math.floor(math.log10(top))
    for step in (1, 2, 2.5, 5, 10):
        if step * magnitude >= top:
            return step * magnitude
    return top


def _axis(x0: float, y0: float, width: float, height: float, y_max: float, label: str) -> list[str]:
    out = []
    for k in range(5):
        v = y_max * k / 4
        y = y0 + height - height * k / 4
        out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + width}" y2="{y:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11">{v:g}</text>')
    out.append(f'<text x="12" y="{y0 + height / 2:.1f}" font-size="11" text-anchor="middle" '
               f'transform="rotate(-90 12 {y0 + height / 2:.1f})">{escape(label)}</text>')
    return out


def _legend(series: Sequence[Series], x: float, y: float) -> list[str]:
    out = []
    for k, s in enumerate(series):
        yy = y + 16 * k
        out.append(f'<rect x="{x}" y="{yy - 9}" width="10" height="10" fill="{s.color}"/>')
        out.append(f'<text x="{x + 14}" y="{yy}" font-size="11">{escape(s.name)}</text>')
    return out


def _all_values(series: Sequence[Series]) -> list[float | None]:
    return [v for s in series for v in [*s.values, *(s.hi or [])]]


LEFT, RIGHT, TOP = 48, 150, 26   # margins: y axis labels, legend, title room


def _frame(series: Sequence[Series], width: int, height: int, bottom: int, y_max: float | None, y_label: str,
           title: str) -> tuple[list[str], tuple[float, float, float, float, float]]:
    """The opening tag, title and y axis of a chart, and its plot area (left, top, width, height, y max)."""
    plot_w, plot_h = width - LEFT - RIGHT, height - TOP - bottom
    y_max = y_max or _nice_max(_all_values(series))
    parts = [f'<svg role="img" viewBox="0 0 {width} {height}" width="{width}" '
             f'height="{height}" style="{FONT}"><title>{escape(title)}</title>']
    parts += _axis(LEFT, TOP, plot_w, plot_h, y_max, y_label)
    return parts, (LEFT, TOP, plot_w, plot_h, y_max)


def _close(parts: list[str], series: Sequence[Series], legend_x: float, legend_y: float) -> str:
    return "".join([*parts, *_legend(series, legend_x, legend_y), "</svg>"])


def grouped_bars(groups: Sequence[str], series: Sequence[Series], *, y_label: str, title: str,
                 y_max: float | None = None, width: int = 760, height: int = 260) -> str:
    """Bars per group and series, whiskers from lo to hi."""
    parts, (left, top, plot_w, plot_h, y_max) = _frame(series, width, height, 46, y_max, y_label, title)
    n_groups, n_series = max(1, len(groups)), max(1, len(series))
    group_w = plot_w / n_groups
    bar_w = min(28.0, group_w * 0.8 / n_series)

    def y_of(v: float) -> float:
        return top + plot_h - plot_h * min(max(v, 0.0), y_max) / y_max

    for g, label in enumerate(groups):
        gx = left + g * group_w + (group_w - bar_w * n_series) / 2
        for k, s in enumerate(series):
            v = s.values[g]
            x = gx + k * bar_w
            if not _ok(v):
                continue
            y = y_of(v)
            parts.append(f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w - 2:.1f}" height="{top + plot_h - y:.1f}" '
                         f'fill="{s.color}"><title>{escape(s.name)}, {escape(label)}: {v:.1f}</title></rect>')
            if s.lo is not None and s.hi is not None and _ok(s.lo[g]) and _ok(s.hi[g]):
                cx = x + (bar_w - 2) / 2
                y_lo, y_hi = y_of(s.lo[g]), y_of(s.hi[g])
                parts.append(f'<path d="M{cx:.1f} {y_lo:.1f}V{y_hi:.1f}M{cx - 3:.1f} {y_lo:.1f}h6M{cx - 3:.1f} '
                             f'{y_hi:.1f}h6" stroke="#333" stroke-width="1"/>')
        text = label if len(label) <= 18 else label[:17] + "\u2026"
        parts.append(f'<text x="{left + (g + 0.5) * group_w:.1f}" y="{top + plot_h + 16}" font-size="11" '
                     f'text-anchor="middle">{escape(text)}<title>{escape(label)}</title></text>')
    return _close(parts, series, left + plot_w + 16, top + 10)


def lines(groups: Sequence[str], series: Sequence[Series], *, y_label: str, x_label: str, title: str,
          y_max: float | None = None, width: int = 760, height: int = 280) -> str:
    """A line per series over ordered groups, with whiskers from lo to hi."""
    parts, (left, top, plot_w, plot_h, y_max) = _frame(series, width, height, 56, y_max, y_label, title)
    step = plot_w / max(1, len(groups))

    def xy(g: int, v: float) -> tuple[float, float]:
        return left + (g + 0.5) * step, top + plot_h - plot_h * min(max(v, 0.0), y_max) / y_max

    for g, label in enumerate(groups):
        parts.append(f'<text x="{left + (g + 0.5) * step:.1f}" y="{top + plot_h + 16}" font-size="11" '
                     f'text-anchor="middle">{escape(label)}</text>')
    parts.append(f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" font-size="11" '
                 f'text-anchor="middle">{escape(x_label)}</text>')
    n = max(1, len(series))
    for k, s in enumerate(series):
        offset = (k - (n - 1) / 2) * 3   # side by side whiskers stay apart
        points = [(g, v) for g, v in enumerate(s.values) if _ok(v)]
        if len(points) > 1:
            d = " ".join(f"{'M' if j == 0 else 'L'}{xy(g, v)[0] + offset:.1f} {xy(g, v)[1]:.1f}"
                         for j, (g, v) in enumerate(points))
            parts.append(f'<path d="{d}" fill="none" stroke="{s.color}" stroke-width="2"/>')
        for g, v in points:
            x, y = xy(g, v)
            x += offset
            if s.lo is not None and s.hi is not None and _ok(s.lo[g]) and _ok(s.hi[g]):
                parts.append(f'<path d="M{x:.1f} {xy(g, s.lo[g])[1]:.1f}V{xy(g, s.hi[g])[1]:.1f}" '
                             f'stroke="{s.color}" stroke-width="1"/>')
            parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3" fill="{s.color}"><title>{escape(s.name)}, '
                         f'{escape(groups[g])}: {v:.1f}</title></circle>')
    return _close(parts, series, left + plot_w + 16, top + 10)
