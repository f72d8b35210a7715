#!/usr/bin/env bash
# Installs the test tools that Go does not bring: DuckDB's Node.js package
# (to run the README's SQL against real output). Idempotent; without npm it
# says so and the tests that need it skip.
set -euo pipefail
cd "$(dirname "$0")/.."
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
