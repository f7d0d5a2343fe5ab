#!/usr/bin/env bash
# Rerunnable benchmark report: builds the release binary, measures teamctl against a
# Claude-Code-style Node writer and a jq+mv script, and rewrites docs/performance.md.
# Needs node (+ `npm ci --prefix tests/peer`), jq and bash. Extra arguments go to bench/run.py
# (e.g. --runs 10 for a quick look).
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 bench/run.py --out docs/performance.md "$@"
