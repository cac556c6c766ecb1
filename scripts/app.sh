#!/usr/bin/env bash
# Install (first run only) and start the dashboard on http://localhost:8501
EXTRAS="" source "$(dirname "$0")/_venv.sh"
exec .venv/bin/python -m streamlit run app.py --server.address localhost --server.port "${PORT:-8501}" "$@"
