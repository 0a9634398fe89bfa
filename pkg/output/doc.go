// Package output writes rendered objects: as one YAML stream (the standalone
// CLI's stdout) and, for fleet repos, as a folder of one file per object.
package output
