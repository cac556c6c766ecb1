# Shared by scripts/app.sh and scripts/test.sh: create .venv once, (re)install when
# pyproject.toml changed. Sourced, not run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
STAMP=.venv/.clusterplan-installed
WANT="$(sha256sum pyproject.toml | cut -d' ' -f1)-${EXTRAS:-}"
if [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ]; then
  .venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
  .venv/bin/python -m pip install -q -e ".${EXTRAS:+[$EXTRAS]}" 2>&1 | grep -v "^WARNING: Location" || true
  .venv/bin/python -c "import planner, streamlit, pandas, altair, pydantic" 
  echo "$WANT" > "$STAMP"
fi
