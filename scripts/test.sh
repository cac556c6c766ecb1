#!/usr/bin/env bash
# Install (first run only) and run every test: engine, properties, validation, AppTest and
# real-browser tests (Playwright driving Debian's Chromium; installed here with apt-get).
EXTRAS="test" source "$(dirname "$0")/_venv.sh"
if ! command -v chromium >/dev/null 2>&1 && [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null; then
  echo "installing Debian's chromium for the browser tests ..."
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
    || echo "warning: could not install chromium; browser tests will fail"
fi
exec .venv/bin/python -m pytest "$@"
