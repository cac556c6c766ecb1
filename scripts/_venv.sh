# Shared by scripts/app.sh and scripts/test.sh: create .venv once, (re)install when
# pyproject.toml changed. Sourced, not run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-python3}"
# pyproject.toml: requires-python = ">=3.11". Checked before anything is created, and again on
# an existing .venv (one made earlier by an older python3 would otherwise fail on every run
# with a ModuleNotFoundError, whatever PYTHON says).
_pyver() {  # prints X.Y; status 0 when the interpreter is 3.11 or newer
  "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2]); sys.exit(sys.version_info < (3, 11))' 2>/dev/null
}
if [ -x .venv/bin/python ]; then
  if ! VENV_VER="$(_pyver .venv/bin/python)"; then
    echo "clusterplan: .venv uses Python ${VENV_VER:-(unknown)}; clusterplan needs Python >= 3.11." >&2
    echo "  Remove it and start again with a newer interpreter: rm -rf .venv && PYTHON=python3.11 bash $0" >&2
    exit 1
  fi
else
  if ! command -v "$PY" >/dev/null 2>&1; then
    echo "clusterplan: '$PY' not found; clusterplan needs Python >= 3.11 (set PYTHON=/path/to/python3.11)." >&2
    exit 1
  fi
  if ! PY_VER="$(_pyver "$PY")"; then
    echo "clusterplan: '$PY' is Python ${PY_VER:-(unknown)}; clusterplan needs Python >= 3.11." >&2
    echo "  Run with a newer interpreter: PYTHON=python3.11 bash $0" >&2
    exit 1
  fi
  if ! "$PY" -m venv .venv; then
    echo "clusterplan: '$PY -m venv .venv' failed (on Debian / Ubuntu: apt install python3-venv); then: rm -rf .venv" >&2
    exit 1
  fi
fi
if ! .venv/bin/python -m pip --version >/dev/null 2>&1; then  # a venv made without pip (python3-venv missing)
  echo "clusterplan: .venv has no pip (made without it: on Debian / Ubuntu install python3-venv)." >&2
  echo "  Remove it and start again: rm -rf .venv && bash $0" >&2
  exit 1
fi
STAMP=.venv/.clusterplan-installed
HASH="$(sha256sum pyproject.toml | cut -d' ' -f1)"
WANT="$HASH-${EXTRAS:-}"
HAVE="$(cat "$STAMP" 2>/dev/null || true)"
# An install with extras (test.sh: the test extras) holds everything the plain one (app.sh) needs:
# the app does not reinstall over it (found by review 19c: alternating the two scripts reinstalled
# each time, a minute or two with the network)
if [ "$HAVE" != "$WANT" ] && { [ -n "${EXTRAS:-}" ] || [ "${HAVE%%-*}" != "$HASH" ]; }; then
  _pip() {  # pip's own messages stay visible; its exit status is kept (grep alone would hide it)
    local rc
    set +e
    .venv/bin/python -m pip install -q "$@" 2>&1 | grep -v "^WARNING: Location"
    rc=${PIPESTATUS[0]}
    set -e
    return "$rc"
  }
  echo "clusterplan: installing into .venv (first run or pyproject.toml changed; a minute or two)..." >&2
  _pip --upgrade pip || echo "clusterplan: warning: could not upgrade pip; installing with the one in .venv" >&2
  if ! _pip -e ".${EXTRAS:+[$EXTRAS]}"; then
    echo "clusterplan: installing the project into .venv failed (pip's message above; a package index must be reachable)." >&2
    exit 1
  fi
  .venv/bin/python -c "import planner, streamlit, pandas, altair, pydantic"
  echo "$WANT" > "$STAMP"
fi
