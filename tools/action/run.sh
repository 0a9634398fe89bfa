#!/usr/bin/env bash
# Runs computeplane-fn for action.yml: renders COMPUTEPLANE_FN_CONFIG into
# the fleet folder COMPUTEPLANE_FN_OUTPUT_DIR (mode render), or checks it
# (mode check: exit 1 with a diff when it is out of date), and writes the
# summaries that are named. Its exit status is computeplane-fn's.
set -euo pipefail
fail() { echo "::error title=computeplane-fn::$*" >&2; exit 2; }
config=${COMPUTEPLANE_FN_CONFIG:-}
dir=${COMPUTEPLANE_FN_OUTPUT_DIR:-}
[[ -n $config ]] || fail "the input config is required: the ComputePlaneGenerator of the fleet"
[[ -n $dir ]] || fail "the input output-dir is required: the fleet folder to render or check"
args=(--output-dir "$dir")
case ${COMPUTEPLANE_FN_MODE:-check} in
check) args+=(--check) ;;
render) ;;
*) fail "mode must be check or render, not '${COMPUTEPLANE_FN_MODE}'" ;;
esac
[[ -z ${COMPUTEPLANE_FN_SUMMARY:-} ]] || args+=(--summary "$COMPUTEPLANE_FN_SUMMARY")
[[ -z ${COMPUTEPLANE_FN_SUMMARY_JSON:-} ]] || args+=(--summary-json "$COMPUTEPLANE_FN_SUMMARY_JSON")
exec computeplane-fn "${args[@]}" "$config"
