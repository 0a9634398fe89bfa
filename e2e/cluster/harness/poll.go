package harness

import (
	"context"
	"fmt"
	"time"
)

// Poll calls check every interval until it reports true, the timeout passes
// or ctx ends. check returns what it saw; the error of a timeout carries the
// last of it, so that a failure says what the component said.
func Poll(ctx context.Context, timeout, interval time.Duration, check func() (bool, string)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	last := ""
	for {
		ok, seen := check()
		if ok {
			return nil
		}
		if seen != "" {
			last = seen
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not within %s; last seen: %s", timeout, last)
		case <-time.After(interval):
		}
	}
}
