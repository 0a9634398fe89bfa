package fn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"

	"sigs.k8s.io/kustomize/kyaml/fn/framework"
	"sigs.k8s.io/kustomize/kyaml/kio"

	"github.com/computeplane-dev/computeplane-fn/pkg/api"
	"github.com/computeplane-dev/computeplane-fn/pkg/input"
)

// Execute runs p as a KRM function: it reads a ResourceList from r and
// writes the resulting ResourceList to w, through kyaml's framework.Execute.
//
// Before kyaml reads anything, readResourceList bounds and checks the bytes
// and the shape of the list (see there why). A list it refuses, or one that
// kyaml then fails on, is answered with a ResourceList of no items and one
// error result per problem, written by framework.Execute as well, and
// Execute returns a *Refusal. The output reaches w only once it is complete.
func Execute(p Processor, r io.Reader, w io.Writer) error {
	if p.Budget == nil {
		p.Budget = new(input.Budget)
	}
	list, problems := readResourceList(r, p.Budget)
	var out []byte
	var err error
	if len(problems) == 0 {
		// kyaml parses the bytes again, into a tree of its own: the one
		// checked is garbage now, and collected here it does not add to
		// kyaml's in the peak (a list of one object of 1.1 million nodes:
		// 418 MiB without this, 247 with it, 236 when only one tree was
		// built). The second parse costs under a tenth of a run.
		runtime.GC()
		out, err = execute(p, list)
		if _, refused := AsProblems(err); err != nil && !refused {
			problems = api.Problems{{File: stdinFile, Message: fmt.Sprintf("kyaml failed on the ResourceList: %v", err)}}
		}
	}
	if len(problems) > 0 {
		refusal := framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
			return refuse(rl, problems.Capped())
		})
		// The items of the input play no part: the list is only wrapped
		// as the input was.
		out, err = execute(refusal, resourceList{apiVersion: list.apiVersion, kind: list.kind})
		if _, refused := AsProblems(err); !refused {
			return fmt.Errorf("failed to write the refusal: %w", err)
		}
	}
	if _, werr := w.Write(out); werr != nil {
		return errors.Join(err, fmt.Errorf("failed to write the ResourceList: %w", werr))
	}
	return err
}

// execute runs p on list.doc with framework.Execute and returns what it
// wrote.
func execute(p framework.ResourceListProcessor, list resourceList) ([]byte, error) {
	var buf bytes.Buffer
	rw := &kio.ByteReadWriter{
		Reader: bytes.NewReader(list.doc),
		Writer: &buf,
		// The items keep the annotations kpt and kustomize set (path,
		// index), and kyaml adds none: its reader would put them on the
		// ResourceList itself, which is not written.
		KeepReaderAnnotations: true,
		OmitReaderAnnotations: true,
		// Set ahead, so that kyaml keeps them rather than reading them: a
		// ResourceList with neither items nor functionConfig is read by
		// kyaml as one item (which Process refuses, for want of a config),
		// and the answer must still be a ResourceList.
		WrappingAPIVersion: list.apiVersion,
		WrappingKind:       list.kind,
	}
	err := framework.Execute(framework.ResourceListProcessorFunc(func(rl *framework.ResourceList) error {
		// The results of the input are those of an earlier run: kyaml
		// would write them back as this run's when it has none.
		rw.Results = nil
		return p.Process(rl)
	}), rw)
	return buf.Bytes(), err
}
