#!/usr/bin/env bash
# Installs the test tools that Go does not bring: Chromium (to check the
# run report in a browser) and DuckDB's Node.js package (to run the
# SQL of README.md and docs/ against real output). Idempotent; without them it says so and
# the tests that need them skip.
set -euo pipefail
cd "$(dirname "$0")/.."

# Chromium, from Debian, for e2e/report_test.go. Installed only when it is
# missing and we are root (as in CI); otherwise the test skips.
if [ -x /usr/bin/chromium ]; then
  echo "install-test-tools: chromium found at /usr/bin/chromium"
elif [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "install-test-tools: installing chromium: apt-get update && apt-get install -y --no-install-recommends chromium"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends chromium
  echo "install-test-tools: chromium installed at /usr/bin/chromium"
else
  echo "install-test-tools: /usr/bin/chromium not found and not root (or no apt-get); the report's browser test will be skipped"
fi

dir=.cache/test-tools
if ! command -v npm >/dev/null 2>&1; then
  echo "install-test-tools: npm not found; DuckDB checks will be skipped"
  exit 0
fi
if [ ! -d "$dir/node_modules/@duckdb/node-api" ]; then
  mkdir -p "$dir"
  (cd "$dir" && npm install --no-audit --no-fund --loglevel=error @duckdb/node-api@1.5.6-r.1)
fi
echo "install-test-tools: DuckDB node package in $dir/node_modules"
