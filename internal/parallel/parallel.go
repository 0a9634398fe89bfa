package parallel

import (
	"fmt"
	"runtime"
	"sync"
)

// Workers is the number of goroutines Ordered uses by default: one per core
// the Go runtime may use.
func Workers() int { return runtime.GOMAXPROCS(0) }

// Ordered calls produce(i) for every i in [0, n) on up to workers goroutines
// and consume(i, result) on the calling goroutine in order of i. At most
// 2×workers results are produced ahead of the one consume waits for, so
// memory holds a bounded window of results, whatever n.
//
// The first error, of produce or consume, in order of i stops the run and is
// returned; a panic in produce is returned as an error rather than crashing
// the process from a goroutine no recover can reach.
func Ordered[T any](n, workers int, produce func(i int) (T, error), consume func(i int, v T) error) error {
	if workers < 1 {
		workers = 1
	}
	if workers == 1 || n <= 1 {
		for i := range n {
			v, err := safely(i, produce)
			if err != nil {
				return err
			}
			if err := consume(i, v); err != nil {
				return err
			}
		}
		return nil
	}

	type result struct {
		v   T
		err error
	}
	window := 2 * workers
	// Indices in flight are always fewer than window and consecutive, so
	// slot i%window is free when i is produced.
	slots := make([]chan result, window)
	for k := range slots {
		slots[k] = make(chan result, 1)
	}
	tokens := make(chan struct{}, window)
	jobs := make(chan int)
	quit := make(chan struct{})

	go func() {
		defer close(jobs)
		for i := range n {
			select {
			case tokens <- struct{}{}:
			case <-quit:
				return
			}
			select {
			case jobs <- i:
			case <-quit:
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				v, err := safely(i, produce)
				slots[i%window] <- result{v, err}
			}
		}()
	}
	stop := func() {
		close(quit)
		// Let the workers drain the jobs they were given; their results
		// land in free slots and are dropped.
		wg.Wait()
	}

	for i := range n {
		r := <-slots[i%window]
		<-tokens
		if r.err != nil {
			stop()
			return r.err
		}
		if err := consume(i, r.v); err != nil {
			stop()
			return err
		}
	}
	close(quit)
	wg.Wait()
	return nil
}

func safely[T any](i int, produce func(int) (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic in task %d: %v", i, r)
		}
	}()
	return produce(i)
}
