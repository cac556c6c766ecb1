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
