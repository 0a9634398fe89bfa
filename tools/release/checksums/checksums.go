package checksums

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File is the name of the checksum file in the dist folder.
const File = "SHA256SUMS"

// Sum is the sha256 of one file, in hex.
type Sum struct {
	Name string
	Hex  string
}

// Compute returns the sums of every regular file directly in dir, except
// the checksum file itself and hidden files, sorted by name. Folders (the
// OCI layout) are left out: their blobs are content-addressed already.
func Compute(dir string) ([]Sum, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("failed to list %s: %w", dir, err)
	}
	var sums []Sum
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == File || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		h, err := hashFile(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		sums = append(sums, Sum{Name: e.Name(), Hex: h})
	}
	slices.SortFunc(sums, func(a, b Sum) int { return strings.Compare(a.Name, b.Name) })
	return sums, nil
}

func hashFile(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("failed to hash %s: %w", path, err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("failed to hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Format writes sums as sha256sum does.
func Format(sums []Sum) []byte {
	var b bytes.Buffer
	for _, s := range sums {
		fmt.Fprintf(&b, "%s  %s\n", s.Hex, s.Name)
	}
	return b.Bytes()
}

// Write computes the sums of dir and writes them to dir/SHA256SUMS.
func Write(dir string) ([]Sum, error) {
	sums, err := Compute(dir)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, File), Format(sums), 0o644); err != nil {
		return nil, fmt.Errorf("failed to write %s: %w", File, err)
	}
	return sums, nil
}

// Parse reads a checksum file in sha256sum's format (text or binary mode
// marker).
func Parse(data []byte) ([]Sum, error) {
	var sums []Sum
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		hexSum, name, ok := strings.Cut(line, " ")
		name = strings.TrimPrefix(name, " ")
		name = strings.TrimPrefix(name, "*")
		if !ok || len(hexSum) != sha256.Size*2 || name == "" {
			return nil, fmt.Errorf("line %d: %q is not \"<sha256>  <name>\"", n, line)
		}
		if _, err := hex.DecodeString(hexSum); err != nil {
			return nil, fmt.Errorf("line %d: %q is not \"<sha256>  <name>\"", n, line)
		}
		sums = append(sums, Sum{Name: name, Hex: hexSum})
	}
	return sums, sc.Err()
}

// Verify checks every file named in dir/SHA256SUMS against its sum, and
// that every file the checksum file should cover is named in it.
func Verify(dir string) error {
	data, err := os.ReadFile(filepath.Join(dir, File))
	if err != nil {
		return fmt.Errorf("failed to verify: %w", err)
	}
	listed, err := Parse(data)
	if err != nil {
		return fmt.Errorf("failed to verify: %s: %w", File, err)
	}
	actual, err := Compute(dir)
	if err != nil {
		return fmt.Errorf("failed to verify: %w", err)
	}
	want := map[string]string{}
	for _, s := range listed {
		want[s.Name] = s.Hex
	}
	var problems []string
	for _, s := range actual {
		switch h, ok := want[s.Name]; {
		case !ok:
			problems = append(problems, s.Name+": not in "+File)
		case h != s.Hex:
			problems = append(problems, fmt.Sprintf("%s: sha256 %s, %s says %s", s.Name, s.Hex, File, h))
		}
		delete(want, s.Name)
	}
	for name := range want {
		problems = append(problems, name+": named in "+File+" but missing")
	}
	slices.Sort(problems)
	if len(problems) > 0 {
		return fmt.Errorf("failed to verify %s: %s", File, strings.Join(problems, "; "))
	}
	return nil
}
