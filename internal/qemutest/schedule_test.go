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
		inLanes(context.Background(), n, lanes, lanes, func(i int, _ func()) {
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
	inLanes(context.Background(), 5, 1, 1, func(i int, _ func()) { order = append(order, i) })
	if !slices.Equal(order, []int{0, 1, 2, 3, 4}) {
		t.Errorf("order %v", order)
	}
}

// A cancelled run starts no more boots and waits for those under way.
func TestInLanesStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran []int
	inLanes(ctx, 5, 1, 2, func(i int, _ func()) {
		ran = append(ran, i)
		if i == 1 {
			cancel()
		}
	})
	if !slices.Equal(ran, []int{0, 1}) {
		t.Errorf("ran %v after a cancel in 1, want [0 1]", ran)
	}
}

// A boot that leaves its lane (its guest only waits now) lets the next
// start beside it, up to alive boots at once; leaving twice, or leaving
// and then ending, frees one lane only.
func TestInLanesLeaveStartsTheNext(t *testing.T) {
	const n, lanes, alive = 4, 1, 2
	started := make(chan int, n)
	leaves := make([]chan struct{}, n)
	ends := make([]chan struct{}, n)
	for i := range n {
		leaves[i], ends[i] = make(chan struct{}), make(chan struct{})
	}
	done := make(chan struct{})
	go func() {
		inLanes(context.Background(), n, lanes, alive, func(i int, leave func()) {
			started <- i
			select {
			case <-leaves[i]:
				leave()
				leave()
				<-ends[i]
			case <-ends[i]:
			}
		})
		close(done)
	}()
	expect := func(want int) {
		t.Helper()
		select {
		case i := <-started:
			if i != want {
				t.Fatalf("plan %d started, want %d", i, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("plan %d did not start", want)
		}
	}
	quiet := func(why string) {
		t.Helper()
		select {
		case i := <-started:
			t.Fatalf("plan %d started %s", i, why)
		case <-time.After(20 * time.Millisecond):
		}
	}
	expect(0)
	quiet("with the lane taken")
	close(leaves[0])
	expect(1)
	close(leaves[1])
	quiet("with two boots up, alive 2")
	close(ends[0])
	expect(2)
	quiet("with the lane taken by plan 2")
	close(ends[2]) // ends without leaving: its lane frees
	expect(3)
	close(ends[1])
	close(ends[3])
	<-done
}
