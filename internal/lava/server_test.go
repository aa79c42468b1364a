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
