package output

import (
	"bufio"
	"io"
	"sync"

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
// they are ready, so that only a few chunks are ever held as text. Each
// document is written on its own (render.Object.AppendYAML, package
// yamltext), never by one encoder over the stream: the library's encoder
// keeps every event it has written, so it would grow without bound and slow
// down with every document.
func Encode(w io.Writer, objs []render.Object) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	chunks := (len(objs) + chunkSize - 1) / chunkSize
	err := parallel.Ordered(chunks, parallel.Workers(),
		func(c int) (*[]byte, error) {
			buf := getBuffer()
			lo, hi := c*chunkSize, min((c+1)*chunkSize, len(objs))
			for i, o := range objs[lo:hi] {
				if c > 0 || i > 0 {
					*buf = append(*buf, docSeparator...)
				}
				var err error
				if *buf, err = o.AppendYAML(*buf); err != nil {
					putBuffer(buf)
					return nil, err
				}
			}
			return buf, nil
		},
		func(c int, buf *[]byte) error {
			defer putBuffer(buf)
			_, err := bw.Write(*buf)
			return err
		})
	if err != nil {
		return err
	}
	return bw.Flush()
}

var buffers = sync.Pool{New: func() any { return new([]byte) }}

func getBuffer() *[]byte { return buffers.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) > 4<<20 {
		return // a huge object: let it go rather than pin its memory
	}
	*b = (*b)[:0]
	buffers.Put(b)
}

// EncodeOne returns one object as a YAML document.
func EncodeOne(o render.Object) ([]byte, error) {
	return o.AppendYAML(nil)
}
