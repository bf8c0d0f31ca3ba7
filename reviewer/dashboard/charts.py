"""Charts drawn on the server as SVG geometry, each with the table it is drawn from.

Pure functions, no database: the insights selectors hand in labels and series, the template
draws the shapes and prints the same numbers as an HTML table for screen readers and for
anyone who wants the figures. Three shapes: columns over time (stacked), a line over time,
and horizontal stacked bars for a breakdown.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

WIDTH = 640
HEIGHT = 220
LEFT, RIGHT, TOP, BOTTOM = 48, 12, 12, 28
ROW_HEIGHT = 24
LABEL_WIDTH = 150


@dataclass(frozen=True)
class Series:
    name: str
    values: Sequence[float | None]  # None: nothing to measure in that bucket (a gap in a line)
    css: str


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    width: float
    height: float
    css: str
    title: str


@dataclass(frozen=True)
class Line:
    points: str
    css: str
    name: str


@dataclass(frozen=True)
class Tick:
    x: float
    y: float
    label: str


@dataclass
class Chart:
    id: str
    title: str
    description: str
    kind: str  # "columns", "line" or "hbars"
    categories: list[str]
    series: list[Series]
    unit: str = ""
    width: float = WIDTH
    height: float = HEIGHT
    rects: list[Rect] = field(default_factory=list)
    lines: list[Line] = field(default_factory=list)
    dots: list[Rect] = field(default_factory=list)
    x_ticks: list[Tick] = field(default_factory=list)
    y_ticks: list[Tick] = field(default_factory=list)
    category_header: str = ""
    totals: bool = True
    plot_left: float = LEFT
    plot_bottom: float = HEIGHT - BOTTOM

    @property
    def empty(self) -> bool:
        return not any(s.values[i] for s in self.series for i in range(len(self.categories)))

    @property
    def table_headers(self) -> list[str]:
        return [self.category_header, *[s.name for s in self.series], *(["Total"] if self.totals else [])]

    @property
    def table_rows(self) -> list[list[str]]:
        rows = []
        for index, category in enumerate(self.categories):
            values = [s.values[index] for s in self.series]
            total = sum(v or 0 for v in values)
            rows.append([category, *[_fmt(v) for v in values], *([_fmt(total)] if self.totals else [])])
        return rows


def _fmt(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def nice_scale(value: float) -> tuple[float, int]:
    """The top of an axis at or above `value`, and how many equal steps to mark on it: whole
    numbers up to 5, else 1, 2, 2.5 or 5 times a power of ten, in steps that read as round."""
    if value <= 5:
        top = max(1, math.ceil(value))
        return top, top
    power = 10 ** math.floor(math.log10(value))
    scales = ((1, 5), (2, 4), (2.5, 5), (5, 5), (10, 5))
    return next((step * power, steps) for step, steps in scales if step * power >= value)


def nice_max(value: float) -> float:
    return nice_scale(value)[0]


def _y_ticks(top: float, unit: str, plot_height: float) -> list[Tick]:
    steps = nice_scale(top)[1]
    return [
        Tick(x=LEFT - 6, y=TOP + plot_height * (1 - i / steps), label=f"{_fmt(top * i / steps)}{unit}")
        for i in range(steps + 1)
    ]


def _x_ticks(categories: list[str], slot: float) -> list[Tick]:
    every = max(1, math.ceil(len(categories) / 8))
    return [
        Tick(x=LEFT + slot * (i + 0.5), y=HEIGHT - BOTTOM + 16, label=label)
        for i, label in enumerate(categories)
        if i % every == 0
    ]


def columns_chart(
    *, id: str, title: str, description: str, categories: list[str], series: list[Series], unit: str = "",
    category_header: str = "When",
) -> Chart:  # fmt: skip
    """Stacked columns, one per category (a time bucket or a histogram bin)."""
    chart = Chart(
        id, title, description, "columns", categories, series, unit, category_header=category_header
    )
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    totals = [sum(s.values[i] or 0 for s in series) for i in range(len(categories))]
    top = nice_max(max(totals, default=0))
    slot = plot_width / max(len(categories), 1)
    bar = max(slot * 0.7, 1)
    for i, category in enumerate(categories):
        base = 0.0
        for s in series:
            value = s.values[i] or 0
            if value <= 0:
                continue
            height = plot_height * value / top
            y = TOP + plot_height * (1 - (base + value) / top)
            x = LEFT + slot * i + (slot - bar) / 2
            chart.rects.append(Rect(x, y, bar, height, s.css, f"{category}: {s.name} {_fmt(value)}{unit}"))
            base += value
    chart.y_ticks = _y_ticks(top, unit, plot_height)
    chart.x_ticks = _x_ticks(categories, slot)
    return chart


def line_chart(
    *, id: str, title: str, description: str, categories: list[str], series: list[Series], unit: str = "",
    top: float | None = None,
) -> Chart:  # fmt: skip
    """One line per series over time buckets; `top` fixes the scale (100 for a percentage)."""
    chart = Chart(
        id, title, description, "line", categories, series, unit, category_header="When", totals=False
    )
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    scale = top or nice_max(max((v for s in series for v in s.values if v is not None), default=0))
    slot = plot_width / max(len(categories), 1)
    for s in series:
        run: list[tuple[float, float]] = []
        for i, value in enumerate([*s.values, None]):
            if value is None:  # a gap: end the line drawn so far
                if run:
                    chart.lines.append(Line(" ".join(f"{x:.1f},{y:.1f}" for x, y in run), s.css, s.name))
                run = []
                continue
            x, y = LEFT + slot * (i + 0.5), TOP + plot_height * (1 - min(value, scale) / scale)
            run.append((x, y))
            chart.dots.append(
                Rect(x - 2.5, y - 2.5, 5, 5, s.css, f"{categories[i]}: {s.name} {_fmt(value)}{unit}")
            )
    chart.y_ticks = _y_ticks(scale, unit, plot_height)
    chart.x_ticks = _x_ticks(categories, slot)
    return chart


def hbars_chart(
    *,
    id: str,
    title: str,
    description: str,
    categories: list[str],
    series: list[Series],
    category_header: str,
) -> Chart:
    """One stacked horizontal bar per category (a source, a rule, an agent), longest first as given."""
    height = TOP + BOTTOM + ROW_HEIGHT * max(len(categories), 1)
    chart = Chart(
        id, title, description, "hbars", categories, series, height=height, category_header=category_header
    )
    chart.plot_left, chart.plot_bottom = LABEL_WIDTH, height - BOTTOM
    plot_width = WIDTH - LABEL_WIDTH - RIGHT
    totals = [sum(s.values[i] or 0 for s in series) for i in range(len(categories))]
    top, steps = nice_scale(max(totals, default=0))
    for i, category in enumerate(categories):
        y = TOP + ROW_HEIGHT * i + 4
        chart.y_ticks.append(Tick(x=LABEL_WIDTH - 6, y=y + (ROW_HEIGHT - 8) / 2 + 4, label=_clip(category)))
        base = 0.0
        for s in series:
            value = s.values[i] or 0
            if value <= 0:
                continue
            x = LABEL_WIDTH + plot_width * base / top
            width = plot_width * value / top
            chart.rects.append(
                Rect(x, y, width, ROW_HEIGHT - 8, s.css, f"{category}: {s.name} {_fmt(value)}")
            )
            base += value
    chart.x_ticks = [
        Tick(x=LABEL_WIDTH + plot_width * i / steps, y=height - BOTTOM + 16, label=_fmt(top * i / steps))
        for i in range(steps + 1)
    ]
    return chart


def _clip(text: str, limit: int = 22) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
