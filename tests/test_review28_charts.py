"""Review 2026-12-03: the validation scatter's legend lists every source group.

The out-of-sample page had ~80 groups and its legend showed about 20: Vega drops a symbol
legend's entries past ``symbolLimit`` (Vega's legend config default is 30) and a legend taller than
the chart was cut. A legend over 20 groups goes under the plot in columns, and the chart's height
grows by its rows (Streamlit fits the whole chart, legend included, into the height).
"""
import pandas as pd
import pytest

from planner import charts


def _rows(n_groups: int) -> pd.DataFrame:
    return pd.DataFrame({"published": [100.0 + i for i in range(n_groups)],
                         "predicted": [105.0 + i for i in range(n_groups)],
                         "group": [f"G{i:02d}" for i in range(n_groups)],
                         "run_id": [f"r{i}" for i in range(n_groups)]})


@pytest.mark.parametrize("n_groups", [2, 12, 20])
def test_few_groups_keep_the_right_hand_legend_with_no_entry_limit(n_groups):
    spec = charts.validation_scatter(_rows(n_groups), "published", "predicted", color="group").to_dict()
    leg = spec["layer"][1]["encoding"]["color"]["legend"]
    assert leg["symbolLimit"] == 0          # 0 = no limit (Vega legend docs)
    assert "orient" not in leg              # Vega-Lite's default: right of the plot
    assert spec["height"] == 380


@pytest.mark.parametrize("n_groups", [21, 62, 80])
def test_many_groups_legend_goes_under_the_plot_and_the_chart_grows_by_its_rows(n_groups):
    spec = charts.validation_scatter(_rows(n_groups), "published", "predicted", color="group").to_dict()
    enc = spec["layer"][1]["encoding"]
    for ch in ("color", "shape"):  # one combined legend: both channels carry the same settings
        leg = enc[ch]["legend"]
        assert leg["symbolLimit"] == 0 and leg["orient"] == "bottom" and leg["columns"] == charts.LEGEND_COLUMNS == 2
    rows = -(-n_groups // 2)                # ceil(n / 2) legend rows: 11, 31, 40
    assert spec["height"] == 380 + 18 * rows + 40


def test_every_group_is_in_the_data_the_legend_is_drawn_from():
    d = _rows(62)
    spec = charts.validation_scatter(d, "published", "predicted", color="group").to_dict()
    data = spec["datasets"][spec["layer"][1]["data"]["name"]] if "datasets" in spec else None
    if data is None:  # inline values
        data = spec["layer"][1]["data"]["values"]
    assert {r["group"] for r in data} == set(d["group"])


@pytest.mark.parametrize("width, expected", [(900.0, 200.0), (420.0, 165.0), (330.0, 120.0), (100.0, 40.0)])
def test_many_groups_labels_end_inside_their_column_at_any_plot_width(width, expected):
    """The legend under the plot has 2 columns; a label may take the plot's width / 2 less 45 px (the
    symbol, its offset and the column padding), at most 200 px and at least 40 px, so a narrow window
    ends a long name with "…" (Vega's label limit) instead of cutting the second column at the chart's
    edge (in Chromium at 800 px with the sidebar open: 4 names were cut). By hand: 420 / 2 − 45 = 165,
    330 / 2 − 45 = 120; 900 / 2 − 45 = 405 capped at 200; 100 / 2 − 45 = 5 raised to 40."""
    spec = charts.validation_scatter(_rows(62), "published", "predicted", color="group").to_dict()
    expr = spec["layer"][1]["encoding"]["color"]["legend"]["labelLimit"]["expr"]
    # Vega's clamp(value, min, max), evaluated on the expression as written
    got = eval(expr, {"__builtins__": {}}, {"clamp": lambda v, lo, hi: min(max(v, lo), hi), "width": width})
    assert got == expected
