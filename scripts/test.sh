#!/usr/bin/env bash
# Install (first run only) and run every test: engine, properties, validation, AppTest and
# real-browser tests (Playwright driving Debian's Chromium; installed here with apt-get).
EXTRAS="test" source "$(dirname "$0")/_venv.sh"
# The browser tests use $CLUSTERPLAN_CHROMIUM (default /usr/bin/chromium, tests/e2e/conftest.py).
CHROMIUM="${CLUSTERPLAN_CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM" ] && command -v chromium >/dev/null 2>&1; then
  CHROMIUM="$(command -v chromium)"  # elsewhere on PATH: tell the tests where
  export CLUSTERPLAN_CHROMIUM="$CHROMIUM"
fi
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing Debian's chromium for the browser tests ..."
    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
      || echo "warning: could not install chromium; the browser tests (tests/e2e, -m e2e) will fail" >&2
  else
    echo "warning: $CHROMIUM not found and not installed here (needs root and apt-get):" \
      "the browser tests (tests/e2e, -m e2e) will fail; install it with" \
      "'sudo apt-get install -y chromium' or set CLUSTERPLAN_CHROMIUM=/path/to/chromium" >&2
  fi
fi
exec .venv/bin/python -m pytest "$@"
