#!/usr/bin/env bash
# go build, then one line saying which binary was built and how long it took
# (make e2e-tools prints one per component it had to build).
set -euo pipefail
go=${GO:-go}
start=$(date +%s)
out=""
prev=""
for a in "$@"; do
	[ "$prev" = "-o" ] && out=$a
	prev=$a
done
"$go" build "$@"
echo "e2e-tools: built $(basename "$out") in $(( $(date +%s) - start )) s"
