#!/bin/sh
# Renders the fleet's ComputePlanes into rendered/ and checks that what is
# committed there is what the inputs in fleet/ produce. The same script runs
# on a laptop and in CI.
#
#   ./fleet.sh render   write rendered/ (then commit it with the input change)
#   ./fleet.sh check    the CI gate: exit 1, with a diff on stdout, when
#                       rendered/ is out of date; writes summary.md, the
#                       Markdown for the pull request comment, and summary.json,
#                       the same for a bot (gate a second approval on "weakens")
#
# COMPUTEPLANE_FN names the binary (default: computeplane-fn on PATH).
set -eu
cd "$(dirname "$0")"
fn=${COMPUTEPLANE_FN:-computeplane-fn}

case "${1:-}" in
render)
	exec "$fn" --output-dir rendered fleet/config.yaml
	;;
check)
	exec "$fn" --output-dir rendered --check --summary summary.md --summary-json summary.json fleet/config.yaml
	;;
*)
	echo "usage: $0 render|check" >&2
	exit 2
	;;
esac
