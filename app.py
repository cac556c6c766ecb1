"""Streamlit entry point: the page frame and the navigation, nothing else.

Run with ``streamlit run app.py`` (or ``bash scripts/app.sh``). Pages live in ``app_pages/``;
all logic lives in the ``planner`` package.
"""

from pathlib import Path

import streamlit as st

_PAGES = Path(__file__).resolve().parent / "app_pages"

#: Main-area width (px, padding excluded) below which rows of st.columns wrap. A 1,280 px window
#: leaves the main area 820 px with the sidebar open, and the pages are laid out for that; a
#: narrower area (a 1,200 px window: 740 px; 800 px: 468 px, the sidebar stays open down to
#: 768 px) cut the headline numbers to "0.87 …", squeezed the goodput-vs-interval chart to a
#: vertical line with its title and axis cut off, and hid the Monte Carlo summary's P50 / P90
#: (review 2026-11-30, 800 px).
NARROW_MAIN_PX = 800

#: Below NARROW_MAIN_PX: top-level rows of three or four columns (headline numbers, Explore's
#: controls, Compare's slots) two per line; rows of two (the charts side by side) one per line.
#: A row inside a column (the Monte Carlo's Trials | Seed) keeps its layout. A container query on
#: the main area, so it follows the sidebar being open or closed, not the window width.
#: Style only (st.html of a lone <style> goes to the event container: no space, nothing fetched).
NARROW_CSS = f"""<style>
[data-testid="stMainBlockContainer"] {{ container-type: inline-size; }}
@container (max-width: {NARROW_MAIN_PX - 0.02}px) {{
  [data-testid="stHorizontalBlock"]:not([data-testid="stColumn"] *) > [data-testid="stColumn"] {{
    min-width: calc(50% - 1rem);
  }}
  [data-testid="stHorizontalBlock"]:not([data-testid="stColumn"] *):has(> [data-testid="stColumn"]:nth-child(2):last-child)
    > [data-testid="stColumn"] {{ min-width: 100%; }}
}}
</style>"""


def main() -> None:
    st.set_page_config(page_title="clusterplan", page_icon="🧮", layout="wide")
    st.html(NARROW_CSS)
    nav = st.navigation([
        st.Page(_PAGES / "plan.py", title="Plan", icon=":material/calculate:", default=True),
        st.Page(_PAGES / "explore.py", title="Explore", icon=":material/scatter_plot:"),
        st.Page(_PAGES / "compare.py", title="Compare", icon=":material/compare_arrows:"),
        st.Page(_PAGES / "validate.py", title="Validate", icon=":material/fact_check:"),
    ])
    nav.run()


main()
