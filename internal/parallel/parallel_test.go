package parallel_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/computeplane-dev/computeplane-fn/internal/parallel"
)

func TestOrderedKeepsOrder(t *testing.T) {
	for _, workers := range []int{0, 1, 2, 7} {
		for _, n := range []int{0, 1, 2, 3, 50, 1000} {
			var got []int
			err := parallel.Ordered(n, workers,
				func(i int) (int, error) { return i * i, nil },
				func(i, v int) error {
					if v != i*i {
						return fmt.Errorf("result %d for %d", v, i)
					}
					got = append(got, i)
					return nil
				})
			if err != nil {
				t.Fatalf("workers %d, n %d: %v", workers, n, err)
			}
			want := make([]int, n)
			for i := range want {
				want[i] = i
			}
			if !slices.Equal(got, want) {
				t.Fatalf("workers %d, n %d: consumed %v", workers, n, got)
			}
		}
	}
}

func TestOrderedStopsAtFirstErrorInOrder(t *testing.T) {
	for _, workers := range []int{1, 3} {
		consumed := 0
		err := parallel.Ordered(100, workers,
			func(i int) (int, error) {
				if i == 40 || i == 60 {
					return 0, fmt.Errorf("failed at %d", i)
				}
				return i, nil
			},
			func(i, v int) error { consumed++; return nil })
		if err == nil || err.Error() != "failed at 40" || consumed != 40 {
			t.Fatalf("workers %d: err %v after %d consumed; want failed at 40 after 40", workers, err, consumed)
		}
		sentinel := errors.New("consumer stops")
		err = parallel.Ordered(100, workers,
			func(i int) (int, error) { return i, nil },
			func(i, v int) error {
				if i == 10 {
					return sentinel
				}
				return nil
			})
		if !errors.Is(err, sentinel) {
			t.Fatalf("workers %d: %v", workers, err)
		}
	}
}

func TestOrderedTurnsPanicsIntoErrors(t *testing.T) {
	for _, workers := range []int{1, 2} {
		err := parallel.Ordered(10, workers,
			func(i int) (int, error) {
				if i == 5 {
					panic("boom")
				}
				return i, nil
			},
			func(int, int) error { return nil })
		if err == nil {
			t.Fatalf("workers %d: a panic was not reported", workers)
		}
	}
}
