// Package checksums writes and verifies dist/SHA256SUMS in the format of
// GNU sha256sum ("<hex>  <name>", sorted by name), so that a user checks a
// download with `sha256sum --check --ignore-missing SHA256SUMS` (or
// `shasum -a 256 -c` on macOS).
package checksums
