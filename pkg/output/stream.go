package output

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/yaml"

	"github.com/computeplane-dev/computeplane-fn/internal/parallel"
	"github.com/computeplane-dev/computeplane-fn/pkg/render"
)

// chunkSize is how many objects one worker encodes at a time.
const chunkSize = 64

// docSeparator starts every document of a stream but the first, as the YAML
// library writes it.
const docSeparator = "---\n"

// Encode writes the objects as one multi-document YAML stream, in the same
// style as kustomize and kpt write YAML (two-space indent, compact lists), so
// that the three ways of running produce the same text.
//
// Chunks of objects are encoded on all cores and written in order as soon as
// they are ready, so that only a few chunks are ever held as text. Each chunk
// gets an encoder of its own: the library's encoder keeps every event it has
// written, so one encoder over a long stream grows without bound and slows
// down with every document.
func Encode(w io.Writer, objs []render.Object) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	chunks := (len(objs) + chunkSize - 1) / chunkSize
	err := parallel.Ordered(chunks, parallel.Workers(),
		func(c int) (*bytes.Buffer, error) {
			buf := getBuffer()
			lo, hi := c*chunkSize, min((c+1)*chunkSize, len(objs))
			if err := encodeChunk(buf, objs[lo:hi]); err != nil {
				putBuffer(buf)
				return nil, err
			}
			return buf, nil
		},
		func(c int, buf *bytes.Buffer) error {
			defer putBuffer(buf)
			if c > 0 {
				if _, err := bw.WriteString(docSeparator); err != nil {
					return err
				}
			}
			_, err := bw.Write(buf.Bytes())
			return err
		})
	if err != nil {
		return err
	}
	return bw.Flush()
}

func encodeChunk(buf *bytes.Buffer, objs []render.Object) error {
	enc := yaml.NewEncoder(buf)
	for _, o := range objs {
		if err := enc.Encode(o.Node); err != nil {
			return fmt.Errorf("failed to encode %s %s/%s: %w", o.Kind, o.Namespace, o.Name, err)
		}
	}
	if err := enc.Close(); err != nil {
		return fmt.Errorf("failed to encode output: %w", err)
	}
	return nil
}

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func getBuffer() *bytes.Buffer { return buffers.Get().(*bytes.Buffer) }

func putBuffer(b *bytes.Buffer) {
	if b.Cap() > 4<<20 {
		return // one huge object: let it go rather than pin its memory
	}
	b.Reset()
	buffers.Put(b)
}

// EncodeOne returns one object as a YAML document.
func EncodeOne(o render.Object) ([]byte, error) {
	return yaml.Marshal(o.Node)
}
