// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/arch"
	"github.com/ftrace-stackmap/conformance/internal/matrix"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
)

// A server that answers as LAVA's REST API does: a refusal keeps the
// server's words, a job is followed to its end, its log fetched.
func TestServerAPI(t *testing.T) {
	polls := 0
	h := http.NewServeMux()
	h.HandleFunc("POST /api/v0.2/jobs/", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Token T" {
			w.WriteHeader(http.StatusUnauthorized)
			fmt.Fprint(w, `{"detail":"Invalid token."}`)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprint(w, `{"message":"Devices unavailable: Device type 'nosuch' is unavailable."}`)
	})
	h.HandleFunc("GET /api/v0.2/jobs/7/", func(w http.ResponseWriter, r *http.Request) {
		polls++
		state, health := "Running", "Unknown"
		if polls > 2 {
			state, health = "Finished", "Complete"
		}
		fmt.Fprintf(w, `{"id":7,"state":%q,"health":%q,"actual_device":"smct-qemu-01"}`, state, health)
	})
	h.HandleFunc("GET /api/v0.2/jobs/7/logs/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "- {\"dt\": \"x\", \"lvl\": \"info\", \"msg\": \"hello\"}\n")
	})
	ts := httptest.NewServer(h)
	defer ts.Close()
	ctx := context.Background()

	var refused *Refused
	for token, want := range map[string]string{"T": "Device type 'nosuch' is unavailable", "wrong": "Invalid token."} {
		_, err := Server{URL: ts.URL, Token: token}.Submit(ctx, []byte("job"))
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), want) {
			t.Errorf("token %s: %v, want a refusal naming %q", token, err, want)
		}
	}
	srv := Server{URL: ts.URL, Token: "T"}
	var seen []string
	j, err := srv.Wait(ctx, 7, time.Millisecond, func(j JobState) { seen = append(seen, j.State+" "+j.Health) })
	if err != nil || !j.Finished() || strings.Join(seen, ", ") != "Running Unknown, Finished Complete" {
		t.Errorf("Wait: %+v, %v, states told %v", j, err, seen)
	}
	if log, err := srv.Logs(ctx, 7); err != nil || !strings.Contains(string(log), "hello") {
		t.Errorf("Logs: %q, %v", log, err)
	}
	if _, err := srv.Job(ctx, 8); err == nil || !strings.Contains(err.Error(), "HTTP 4") {
		t.Errorf("an unknown job: %v, want the server's refusal", err)
	}
}

// A cell whose job the server cancels, or loses, has no verdict and says
// why; one that ends is judged from the log the server kept.
func TestCellOnServer(t *testing.T) {
	h := http.NewServeMux()
	h.HandleFunc("GET /api/v0.2/jobs/5/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"id":5,"state":"Finished","health":"Canceled","actual_device":null,"start_time":null,"end_time":"2026-11-29T09:00:00Z"}`)
	})
	ts := httptest.NewServer(h)
	defer ts.Close()
	srv := Server{URL: ts.URL, Token: "T"}
	ctx := context.Background()
	job, err := onServer(ctx, nil, qemutest.Options{}, srv, 5, &Files{Dir: t.TempDir()}, time.Millisecond, func(JobState) {}, &matrix.Cell{})
	var infra *qemutest.InfraError
	if !errors.As(err, &infra) || !strings.Contains(err.Error(), "canceled job 5") || job.End == "" {
		t.Errorf("a canceled job: %+v, %v; want no verdict naming the job", job, err)
	}
	_, err = onServer(ctx, nil, qemutest.Options{}, srv, 6, &Files{Dir: t.TempDir()}, time.Millisecond, func(JobState) {}, &matrix.Cell{})
	if !errors.As(err, &infra) || !strings.Contains(err.Error(), "following job 6") {
		t.Errorf("a job the server lost: %v; want no verdict naming the job", err)
	}
	finished := func(id int, device, start, end string) JobState {
		return JobState{ID: id, State: "Finished", Health: "Complete", Device: device, Start: start, End: end}
	}
	cells := []LabCell{{Cell: matrix.Cell{Entry: "reference", Arch: arch.MustLookup("arm64")}, Job: finished(5, "smct-qemu-02", "2026-11-29T09:00:00Z", "2026-11-29T09:01:00Z")},
		{Cell: matrix.Cell{Entry: "reference", Arch: arch.MustLookup("x86_64")}, Job: finished(6, "smct-qemu-01", "2026-11-29T09:00:30Z", "2026-11-29T09:02:30Z")},
		{Cell: matrix.Cell{Entry: "debian-6.12", Arch: arch.MustLookup("x86_64")}}}
	want := "reference-arm64: job 5 on smct-qemu-02, 2026-11-29T09:00:00Z to 2026-11-29T09:01:00Z, Finished Complete\n" +
		"reference-x86_64: job 6 on smct-qemu-01, 2026-11-29T09:00:30Z to 2026-11-29T09:02:30Z, Finished Complete\n" +
		"debian-6.12-x86_64: no job\n" +
		"2 jobs on 2 devices, 2m30s from the first start to the last end, 1m30s a job on average; 50 trees x 2 arches (100 jobs) would take about 1h15m0s on 2 devices, 15m0s on 10\n"
	if got := LabText(cells); got != want {
		t.Errorf("lab.txt:\n%s\nwant\n%s", got, want)
	}
}
