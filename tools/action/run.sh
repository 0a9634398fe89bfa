#!/usr/bin/env bash
# Runs computeplane-fn for action.yml: renders COMPUTEPLANE_FN_CONFIG into
# the fleet folder COMPUTEPLANE_FN_OUTPUT_DIR (mode render), or checks it
# (mode check: exit 1 with a diff when it is out of date), and writes the
# summaries that are named. With COMPUTEPLANE_FN_BASE (a Git revision: the
# pull request's base commit, by default) the summaries compare the render
# with the fleet folder as the base holds it; the base is fetched first when
# the clone lacks it (actions/checkout fetches one commit). With
# COMPUTEPLANE_FN_ALLOW_GUARD_MOVE=true it passes --allow-guard-move. Its exit status
# is computeplane-fn's.
set -euo pipefail
fail() { echo "::error title=computeplane-fn::$*" >&2; exit 2; }
config=${COMPUTEPLANE_FN_CONFIG:-}
dir=${COMPUTEPLANE_FN_OUTPUT_DIR:-}
base=${COMPUTEPLANE_FN_BASE:-}
[[ -n $config ]] || fail "the input config is required: the ComputePlaneGenerator of the fleet"
[[ -n $dir ]] || fail "the input output-dir is required: the fleet folder to render or check"
args=(--output-dir "$dir")
case ${COMPUTEPLANE_FN_MODE:-check} in
check) args+=(--check) ;;
render) ;;
*) fail "mode must be check or render, not '${COMPUTEPLANE_FN_MODE}'" ;;
esac
case ${COMPUTEPLANE_FN_ALLOW_GUARD_MOVE:-false} in
true) args+=(--allow-guard-move) ;;
false | "") ;;
*) fail "allow-guard-move must be true or false, not '${COMPUTEPLANE_FN_ALLOW_GUARD_MOVE}'" ;;
esac
[[ -z ${COMPUTEPLANE_FN_SUMMARY:-} ]] || args+=(--summary "$COMPUTEPLANE_FN_SUMMARY")
[[ -z ${COMPUTEPLANE_FN_SUMMARY_JSON:-} ]] || args+=(--summary-json "$COMPUTEPLANE_FN_SUMMARY_JSON")
if [[ -n $base && ( -n ${COMPUTEPLANE_FN_SUMMARY:-} || -n ${COMPUTEPLANE_FN_SUMMARY_JSON:-} ) ]]; then
	[[ $base != -* ]] || fail "base must be a Git revision, not '$base'"
	if ! git rev-parse --quiet --verify "$base^{commit}" >/dev/null; then
		echo "computeplane-fn: fetching the base $base (the clone does not hold it)" >&2
		git fetch --quiet --no-tags --depth=1 origin "$base" ||
			fail "failed to fetch the base $base from origin; fetch it before this step (actions/checkout with fetch-depth: 0, or git fetch origin $base)"
	fi
	args+=(--base "$base")
fi
exec computeplane-fn "${args[@]}" -- "$config"
