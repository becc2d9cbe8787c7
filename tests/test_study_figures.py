"""The report's charts read: a legend clear of the title, axis values that do not run together."""

import pandas as pd

from contend.study import figures


def drawn(monkeypatch, draw):
    """The figure `draw` makes, drawn, and its renderer, before it is saved and closed."""
    seen = []

    def keep(fig, path, **kwargs):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        canvas = FigureCanvasAgg(fig)
        canvas.draw()
        seen.append((fig, canvas.get_renderer()))

    monkeypatch.setattr(figures, "save", keep)
    draw()
    return seen[0]


def test_a_bandwidth_sweep_of_one_panel_has_its_legend_beside_the_title_and_readable_values(monkeypatch, tmp_path):
    # The tester's report: one application, one job size, nine bandwidths from x/16 to 16x, a title of two lines.
    scales = [2.0 ** k for k in range(-4, 5)]
    m = pd.DataFrame({"app": "app.yaml", "ranks": 16, "bandwidth_scale": scales,
                      "speedup": [min(s, 1) for s in scales]})
    fig, renderer = drawn(monkeypatch, lambda: figures.bars_per_axis(
        m, "bandwidth_scale", "speed-up against bandwidth_scale (other axes at the baseline)\n../programs/app.yaml",
        str(tmp_path / "c.png")))
    legend, title = fig.legends[0].get_window_extent(renderer), fig._suptitle.get_window_extent(renderer)
    assert not legend.overlaps(title), (legend, title)
    ax = fig.axes[0]
    # Seed 003's notation, as the bandwidth line charts write it.
    assert [t.get_text() for t in ax.get_xticklabels()] == ["x/16", "x/8", "x/4", "x/2", "x", "2x", "4x", "8x", "16x"]
    boxes = [t.get_window_extent(renderer) for t in ax.get_xticklabels()]
    assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:], strict=False))
