#!/usr/bin/env bash
# Installs the release COMPUTEPLANE_FN_VERSION (vX.Y.Z) of computeplane-fn
# for this runner's OS and architecture, checked against the release's
# SHA256SUMS, into $RUNNER_TEMP and puts it on $GITHUB_PATH (action.yml).
# COMPUTEPLANE_FN_RELEASES is where the releases are (default: GitHub's
# download URL of the project; the tests give a file:// folder).
set -euo pipefail
version=${COMPUTEPLANE_FN_VERSION:-}
releases=${COMPUTEPLANE_FN_RELEASES:-https://github.com/computeplane-dev/computeplane-fn/releases/download}
fail() { echo "::error title=computeplane-fn::$*" >&2; exit 1; }

[[ $version =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]] ||
	fail "version must be a release tag such as v0.1.0, not '$version': pin the release the fleet was rendered with"
case $(uname -s) in
Linux) os=linux ;;
Darwin) os=darwin ;;
*) fail "no release binary for $(uname -s): the releases are for Linux and macOS" ;;
esac
case $(uname -m) in
x86_64 | amd64) arch=amd64 ;;
aarch64 | arm64) arch=arm64 ;;
*) fail "no release binary for $(uname -m): the releases are for amd64 and arm64" ;;
esac
file=computeplane-fn-$os-$arch
dir=${RUNNER_TEMP:?RUNNER_TEMP is not set}/computeplane-fn-$version
mkdir -p "$dir"
curl --fail --silent --show-error --location --retry 3 -o "$dir/$file" "$releases/$version/$file" ||
	fail "failed to download $releases/$version/$file"
curl --fail --silent --show-error --location --retry 3 -o "$dir/SHA256SUMS" "$releases/$version/SHA256SUMS" ||
	fail "failed to download $releases/$version/SHA256SUMS"
want=$(awk -v f="$file" '$2 == f { print $1 }' "$dir/SHA256SUMS")
[[ -n $want ]] || fail "SHA256SUMS of $version names no $file"
if command -v sha256sum >/dev/null; then
	got=$(sha256sum "$dir/$file" | awk '{ print $1 }')
else
	got=$(shasum -a 256 "$dir/$file" | awk '{ print $1 }')
fi
[[ $got == "$want" ]] || fail "$file of $version does not match SHA256SUMS (sha256 $got, want $want)"
mv "$dir/$file" "$dir/computeplane-fn"
chmod +x "$dir/computeplane-fn"
printed=$("$dir/computeplane-fn" --version)
[[ $printed == "computeplane-fn $version "* ]] || fail "the binary of $version says it is: $printed"
echo "$dir" >>"${GITHUB_PATH:?GITHUB_PATH is not set}"
echo "$printed"
