package input

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/yamlnode"
)

// ReadStream reads a stream that holds one YAML document of the given kind,
// such as the ResourceList a KRM function reads on stdin, with the checks
// of a file: at most MaxInputBytes (a regular file redirected to the stream
// is refused from its size, without reading it), YAML text (CheckBytes; the
// first 64 KiB before reading on, so that binary data is refused at once),
// and charged to the budget (ChargeBytes). name names the stream in
// messages.
//
// It returns the root node of the one document that is not empty, nil when
// every document is, and the lines of that document alone, without the
// comments and empty documents around it, for a reader that takes bytes
// (kyaml's). A second document that is not empty is refused.
func (b *Budget) ReadStream(r io.Reader, name, kind string) (root *yaml.Node, doc []byte, problems api.Problems) {
	fail := func(format string, args ...any) (*yaml.Node, []byte, api.Problems) {
		return nil, nil, api.Problems{{File: name, Message: fmt.Sprintf(format, args...)}}
	}
	data, err := readStream(r, kind)
	if err != nil {
		return fail("%v", err)
	}
	if ps := b.ChargeBytes(data, name); len(ps) > 0 {
		return nil, nil, ps
	}
	start, end := 0, len(data)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for index := 0; ; index++ {
		var d yaml.Node
		panicked, err := decodeOne(dec, &d)
		switch {
		case panicked != nil:
			return nil, nil, api.Problems{api.Internal(fmt.Errorf("%s: document %d: the YAML parser failed: %v", name, index+1, panicked))}
		case errors.Is(err, io.EOF):
			return root, data[start:end], nil
		case err != nil:
			return fail("invalid YAML: %v", err)
		}
		if root != nil && end == len(data) {
			end = lineStart(data, d.Line)
		}
		if len(d.Content) == 0 || yamlnode.IsNull(d.Content[0]) {
			continue
		}
		if root != nil {
			return fail("expected one %s, found a second YAML document (document %d)", kind, index+1)
		}
		root, start = d.Content[0], lineStart(data, d.Line)
	}
}

// readStream reads at most MaxInputBytes of UTF-8 text.
func readStream(r io.Reader, kind string) ([]byte, error) {
	if f, ok := r.(interface{ Stat() (os.FileInfo, error) }); ok {
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() && info.Size() > MaxInputBytes {
			return nil, fmt.Errorf("the %s is %d MiB, larger than the %d MiB one run reads", kind, info.Size()>>20, MaxInputBytes>>20)
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if head, _ := br.Peek(64 << 10); len(head) > 0 {
		if len(head) == 64<<10 {
			// The last character may be cut off.
			for i := 0; i < utf8.UTFMax && len(head) > 0 && !utf8.RuneStart(head[len(head)-1]); i++ {
				head = head[:len(head)-1]
			}
			head = head[:max(0, len(head)-1)]
		}
		if err := CheckBytes(head); err != nil {
			return nil, err
		}
	}
	data, err := io.ReadAll(io.LimitReader(br, MaxInputBytes+1))
	if err != nil {
		return nil, fmt.Errorf("failed to read the %s: %w", kind, err)
	}
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("the %s is larger than %d MiB, the most one run reads", kind, MaxInputBytes>>20)
	}
	return data, CheckBytes(data)
}

// lineStart returns the offset of line (1-based) in data.
func lineStart(data []byte, line int) int {
	at := 0
	for ; line > 1; line-- {
		i := bytes.IndexByte(data[at:], '\n')
		if i < 0 {
			return len(data)
		}
		at += i + 1
	}
	return at
}
