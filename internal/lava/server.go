// SPDX-License-Identifier: GPL-2.0-only

package lava

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/ftrace-stackmap/conformance/internal/cachelimit"
	"github.com/ftrace-stackmap/conformance/internal/qemutest"
	"github.com/ftrace-stackmap/conformance/internal/results"
)

// Server is a LAVA server's REST API (v0.2), the one lavacli and the
// server's own web pages use: submit a job, follow it, fetch its log.
type Server struct {
	URL   string // the server's root, e.g. http://127.0.0.1:8000
	Token string // a user's REST token
}

// LabToken is the token of make lab's server: $LAB_TOKEN, else the one
// the lab keeps in its area of the cache at cacheDir; "" when neither.
func LabToken(cacheDir string) string {
	if t := os.Getenv("LAB_TOKEN"); t != "" {
		return t
	}
	b, err := os.ReadFile(cachelimit.Lab.In(cacheDir, "token"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// JobState is where a job stands on the server.
type JobState struct {
	ID     int    `json:"id"`
	State  string `json:"state"`  // Submitted, Scheduling, Scheduled, Running, Canceling, Finished
	Health string `json:"health"` // Unknown, Complete, Incomplete, Canceled
	Device string `json:"actual_device"`
	// Start and End are the server's times of the job on its device
	// ("" until then), as its REST API gives them.
	Start string `json:"start_time"`
	End   string `json:"end_time"`
}

// Finished says whether the server is done with the job.
func (j JobState) Finished() bool { return j.State == "Finished" }

// Refused is a job the server would not take, in the server's words.
type Refused struct {
	Status  int
	Message string
}

func (r *Refused) Error() string {
	return fmt.Sprintf("the LAVA server refused the job (HTTP %d): %s", r.Status, r.Message)
}

// call makes one request of the API and decodes a JSON answer into out
// (nil keeps the body in raw).
func (s Server) call(ctx context.Context, method, path string, body any, out any) ([]byte, error) {
	var in io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		in = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(s.URL, "/")+"/api/v0.2/"+path, in)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Token "+s.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("LAVA server %s: %w", s.URL, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("LAVA server %s: reading %s: %w", s.URL, path, err)
	}
	if resp.StatusCode >= 300 {
		var m struct{ Message, Detail string }
		json.Unmarshal(raw, &m)
		msg := strings.TrimSpace(m.Message + m.Detail)
		if msg == "" {
			msg = strings.TrimSpace(string(raw))
		}
		if method == http.MethodPost && path == "jobs/" {
			return nil, &Refused{Status: resp.StatusCode, Message: msg}
		}
		return nil, fmt.Errorf("LAVA server %s: %s %s: HTTP %d: %s", s.URL, method, path, resp.StatusCode, msg)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return nil, fmt.Errorf("LAVA server %s: %s: not the API's answer: %w", s.URL, path, err)
		}
	}
	return raw, nil
}

// Check asks the server who the token is, with one authenticated call and
// a short limit, before anything is built for it: a server that does not
// answer, or a token it does not take, is said at once.
func (s Server) Check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var who struct {
		User string `json:"user"`
	}
	if _, err := s.call(ctx, http.MethodGet, "system/whoami/", nil, &who); err != nil {
		return err
	}
	if who.User == "" {
		return fmt.Errorf("LAVA server %s: the token is no user's", s.URL)
	}
	return nil
}

// Submit gives the server a job definition and returns the job's id; a
// job the server refuses (its schema, a device type it has not, a
// timeout it will not take) is a *Refused with the server's message.
func (s Server) Submit(ctx context.Context, definition []byte) (int, error) {
	var answer struct {
		IDs []int `json:"job_ids"`
	}
	if _, err := s.call(ctx, http.MethodPost, "jobs/", map[string]string{"definition": string(definition)}, &answer); err != nil {
		return 0, err
	}
	if len(answer.IDs) != 1 {
		return 0, fmt.Errorf("LAVA server %s: submitted one job, got ids %v", s.URL, answer.IDs)
	}
	return answer.IDs[0], nil
}

// Job is where a job stands.
func (s Server) Job(ctx context.Context, id int) (JobState, error) {
	var j JobState
	_, err := s.call(ctx, http.MethodGet, fmt.Sprintf("jobs/%d/", id), nil, &j)
	return j, err
}

// Wait follows a job until the server is done with it, telling each new
// state; a context that ends cancels the job on the server.
func (s Server) Wait(ctx context.Context, id int, every time.Duration, tell func(JobState)) (JobState, error) {
	var last JobState
	for {
		j, err := s.Job(ctx, id)
		if ctx.Err() != nil {
			// Not left running for nobody: the lab's device is freed.
			s.call(context.Background(), http.MethodPost, fmt.Sprintf("jobs/%d/cancel/", id), nil, nil)
			return last, ctx.Err()
		}
		if err != nil {
			return last, err
		}
		if j != last {
			tell(j)
			last = j
		}
		if j.Finished() {
			return j, nil
		}
		select {
		case <-ctx.Done():
		case <-time.After(every):
		}
	}
}

// Logs is a job's log, in the YAML-lines form lava-run writes.
func (s Server) Logs(ctx context.Context, id int) ([]byte, error) {
	return s.call(ctx, http.MethodGet, fmt.Sprintf("jobs/%d/logs/", id), nil, nil)
}

// JobURL is the job's page on the server.
func (s Server) JobURL(id int) string {
	return fmt.Sprintf("%s/scheduler/job/%d", strings.TrimSuffix(s.URL, "/"), id)
}

// OnServer is a run made as a job on a LAVA server.
type OnServer struct {
	Files *Files
	Job   JobState
	Log   *Log
}

// RunOnServer writes a run's job, submits it to srv, follows it, and
// judges the log the server kept, as lava-results does, into a run
// directory of its own. The log is kept as lava.log beside the job. Like
// qemutest.Run, a run without a verdict returns an *qemutest.InfraError,
// with the run directory in the result when there is one.
func RunOnServer(ctx context.Context, rn *qemutest.Runner, o qemutest.Options, at Served, srv Server, tell func(format string, args ...any)) (*results.Result, *OnServer, error) {
	files, res, err := WriteJob(ctx, rn, o, at)
	if err != nil {
		return res, nil, AsInfra(err)
	}
	on := &OnServer{Files: files}
	id, err := srv.Submit(ctx, files.Definition)
	if err != nil {
		return res, on, AsInfra(err)
	}
	tell("job %d submitted: %s", id, srv.JobURL(id))
	job, err := srv.Wait(ctx, id, 3*time.Second, func(j JobState) {
		tell("job %d: %s %s %s", j.ID, j.State, j.Health, j.Device)
	})
	on.Job = job
	if err != nil {
		return res, on, AsInfra(fmt.Errorf("following job %d: %w", id, err))
	}
	log, err := srv.Logs(ctx, id)
	if err == nil {
		err = os.WriteFile(LogFile(files), log, 0o644)
	}
	if err != nil {
		return res, on, AsInfra(fmt.Errorf("job %d's log: %w", id, err))
	}
	o.ResultsDir = filepath.Dir(res.Dir)
	judged, l, err := Results(ctx, rn, o, LogFile(files))
	on.Log = l
	return judged, on, err
}
