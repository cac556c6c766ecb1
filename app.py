"""Streamlit entry point: the page frame and the navigation, nothing else.

Run with ``streamlit run app.py`` (or ``bash scripts/app.sh``). Pages live in ``app_pages/``;
all logic lives in the ``planner`` package.
"""

from pathlib import Path

import streamlit as st

_PAGES = Path(__file__).resolve().parent / "app_pages"


def main() -> None:
    st.set_page_config(page_title="clusterplan", page_icon="🧮", layout="wide")
    nav = st.navigation([
        st.Page(_PAGES / "plan.py", title="Plan", icon=":material/calculate:", default=True),
        st.Page(_PAGES / "explore.py", title="Explore", icon=":material/scatter_plot:"),
        st.Page(_PAGES / "compare.py", title="Compare", icon=":material/compare_arrows:"),
        st.Page(_PAGES / "validate.py", title="Validate", icon=":material/fact_check:"),
    ])
    nav.run()


main()
