#!/usr/bin/env bash
# Prints the module version of the source tree the way Go names module
# versions, for the Makefile to stamp into every build (-ldflags -X):
#   - HEAD tagged vX.Y.Z:              vX.Y.Z
#   - after a tag vX.Y.Z:              vX.Y.(Z+1)-0.<commit time UTC>-<12 hex of commit>
#   - after a pre-release vX.Y.Z-pre:  vX.Y.Z-pre.0.<time>-<hash>
#   - no tag yet:                      v0.0.0-<time>-<hash>
# with "+dirty" appended when tracked files differ from HEAD (as go build
# with VCS stamping does). Outside a Git work tree it prints "(devel)", what
# Go itself reports for a build from source. The time is the commit's, never
# the clock's, so that building the same commit twice stamps the same bytes.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! commit=$(git rev-parse --verify HEAD 2>/dev/null); then
	echo "(devel)"
	exit 0
fi
time=$(TZ=UTC git log -1 --format=%cd --date=format-local:%Y%m%d%H%M%S HEAD)
short=${commit:0:12}
dirty=""
if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then
	dirty="+dirty"
fi
semver='v[0-9]*.[0-9]*.[0-9]*'
if tag=$(git describe --tags --exact-match --match "$semver" HEAD 2>/dev/null); then
	echo "$tag$dirty"
elif base=$(git describe --tags --abbrev=0 --match "$semver" HEAD 2>/dev/null); then
	case $base in
	*-*) echo "$base.0.$time-$short$dirty" ;;
	*) echo "${base%.*}.$((${base##*.} + 1))-0.$time-$short$dirty" ;;
	esac
else
	echo "v0.0.0-$time-$short$dirty"
fi
