// SPDX-License-Identifier: GPL-2.0-only

package qemutest

import (
	"context"
	"slices"
	"testing"
	"time"
)

// Boots start in plan order, never more than the lanes at once: when a
// lane frees, the next plan takes it, whichever boot ended.
func TestInLanesStartsInPlanOrder(t *testing.T) {
	const n, lanes = 5, 2
	started := make(chan int, n)
	end := make([]chan struct{}, n)
	for i := range end {
		end[i] = make(chan struct{})
	}
	done := make(chan struct{})
	go func() {
		inLanes(context.Background(), n, lanes, func(i int) {
			started <- i
			<-end[i]
		})
		close(done)
	}()
	next := func() int {
		select {
		case i := <-started:
			return i
		case <-time.After(5 * time.Second):
			t.Fatal("no boot started")
			return -1
		}
	}
	quiet := func() {
		select {
		case i := <-started:
			t.Fatalf("plan %d started with every lane taken", i)
		case <-time.After(20 * time.Millisecond):
		}
	}
	first := []int{next(), next()}
	slices.Sort(first)
	if !slices.Equal(first, []int{0, 1}) {
		t.Fatalf("first started %v, want plans 0 and 1", first)
	}
	quiet()
	for _, tc := range []struct{ ends, starts int }{{1, 2}, {2, 3}, {0, 4}} {
		close(end[tc.ends])
		if got := next(); got != tc.starts {
			t.Fatalf("plan %d ended: plan %d started, want %d", tc.ends, got, tc.starts)
		}
		quiet()
	}
	close(end[3])
	close(end[4])
	<-done
}

// One lane runs the plans one after the other, strictly in order.
func TestInLanesOneLane(t *testing.T) {
	var order []int
	inLanes(context.Background(), 5, 1, func(i int) { order = append(order, i) })
	if !slices.Equal(order, []int{0, 1, 2, 3, 4}) {
		t.Errorf("order %v", order)
	}
}

// A cancelled run starts no more boots and waits for those under way.
func TestInLanesStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran []int
	inLanes(ctx, 5, 1, func(i int) {
		ran = append(ran, i)
		if i == 1 {
			cancel()
		}
	})
	if !slices.Equal(ran, []int{0, 1}) {
		t.Errorf("ran %v after a cancel in 1, want [0 1]", ran)
	}
}
