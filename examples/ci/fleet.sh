#!/bin/sh
# Renders the fleet's ComputePlanes into rendered/ and checks that what is
# committed there is what the inputs in fleet/ produce. The same script runs
# on a laptop and in CI.
#
#   ./fleet.sh render [FLAG...]   write rendered/ (then commit it with the input
#                                 change); flags such as --allow-prune go on to
#                                 computeplane-fn
#   ./fleet.sh check [FLAG...]    the CI gate: exit 1, with a diff on stdout, when
#                                 rendered/ is out of date; writes summary.md, the
#                                 Markdown for the pull request comment, and
#                                 summary.json, the same for a bot (gate a second
#                                 approval on "weakens"); --allow-guard-move for
#                                 the pull request that moves the guard on purpose
#
# BASE, for check, is a Git revision (a pull request's base branch or commit):
# the summaries then say how the posture changes from rendered/ as BASE holds
# it to what the inputs render now. Without it they compare with rendered/ as
# it is, which is right for a local render before committing, never for a
# pull request whose rendered/ is committed with its inputs.
#
# COMPUTEPLANE_FN names the binary (default: computeplane-fn on PATH). The
# config's spec.inputs are relative to fleet/, where it lives; the script runs
# from its own folder for rendered/ and the summaries.
set -eu
cd "$(dirname "$0")"
fn=${COMPUTEPLANE_FN:-computeplane-fn}

case "${1:-}" in
render)
	shift
	exec "$fn" --output-dir rendered "$@" fleet/config.yaml
	;;
check)
	shift
	exec "$fn" --output-dir rendered --check ${BASE:+--base "$BASE"} --summary summary.md --summary-json summary.json "$@" fleet/config.yaml
	;;
*)
	echo "usage: $0 render [FLAG...] | check [FLAG...]   (BASE=<revision> $0 check compares with a base)" >&2
	exit 2
	;;
esac
