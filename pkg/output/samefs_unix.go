//go:build unix

package output

import (
	"os"
	"syscall"
)

// sameFileSystem reports whether a and b are on one file system, so that a
// rename between them is atomic.
func sameFileSystem(a, b string) bool {
	ia, err := os.Stat(a)
	if err != nil {
		return false
	}
	ib, err := os.Stat(b)
	if err != nil {
		return false
	}
	sa, okA := ia.Sys().(*syscall.Stat_t)
	sb, okB := ib.Sys().(*syscall.Stat_t)
	return okA && okB && sa.Dev == sb.Dev
}
