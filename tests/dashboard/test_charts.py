from __future__ import annotations

from reviewer.dashboard.charts import Series, columns_chart, hbars_chart, line_chart, nice_max


def test_nice_scale_tops():
    assert [nice_max(v) for v in (0, 1, 3, 7, 12, 180, 240, 400)] == [1, 1, 3, 10, 20, 200, 250, 500]


def test_stacked_columns_share_the_scale_and_keep_the_figures_for_the_table():
    chart = columns_chart(
        id="c", title="t", description="d", categories=["a", "b"],
        series=[Series("x", [2, 0], "c-x"), Series("y", [2, 1], "c-y")],
    )  # fmt: skip
    # the tallest stack (4) fills the plot; zero values draw nothing
    heights = [round(r.height, 1) for r in chart.rects]
    assert len(chart.rects) == 3 and heights[0] == heights[1] == 2 * heights[2]
    assert chart.table_headers == ["When", "x", "y", "Total"]
    assert chart.table_rows == [["a", "2", "2", "4"], ["b", "0", "1", "1"]]
    assert not chart.empty


def test_a_line_has_one_point_per_bucket_and_a_fixed_top():
    chart = line_chart(id="l", title="t", description="d", categories=["a", "b", "c"],
                       series=[Series("rate", [0, 50, 100], "c-x")], unit="%", top=100)  # fmt: skip
    ys = [float(p.split(",")[1]) for p in chart.lines[0].points.split()]
    assert ys[0] > ys[1] > ys[2] and ys[0] - ys[1] == ys[1] - ys[2]
    assert chart.y_ticks[-1].label == "100%"


def test_horizontal_bars_grow_with_their_rows_and_say_when_empty():
    chart = hbars_chart(id="h", title="t", description="d", categories=["r1", "r2", "r3"],
                        series=[Series("n", [0, 0, 0], "c-x")], category_header="Rule")  # fmt: skip
    assert chart.empty and chart.rects == [] and chart.height > 3 * 24


def test_a_bucket_with_nothing_to_measure_breaks_the_line():
    chart = line_chart(id="l", title="t", description="d", categories=["a", "b", "c", "d"],
                       series=[Series("rate", [50, None, 20, 30], "c-x")], unit="%", top=100)  # fmt: skip
    assert [len(line.points.split()) for line in chart.lines] == [1, 2]
    assert [row[1] for row in chart.table_rows] == ["50", "—", "20", "30"]


def test_axis_steps_are_round():
    assert [t.label for t in columns_chart(id="c", title="t", description="d", categories=["a"],
                                           series=[Series("n", [3], "c-x")]).y_ticks] == ["0", "1", "2", "3"]  # fmt: skip
    assert [t.label for t in line_chart(id="l", title="t", description="d", categories=["a"],
                                        series=[Series("h", [180], "c-x")], unit=" h").y_ticks] == [
        "0 h", "50 h", "100 h", "150 h", "200 h"]  # fmt: skip
