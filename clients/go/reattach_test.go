package forge_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Durable runs (reattach) against real forge-server processes with the
// SQLite journal: a network break through a TCP proxy the test cuts, a server
// killed and restarted on the same port, and a server without a journal.

// cutProxy forwards TCP connections to target until cut closes them all.
type cutProxy struct {
	ln     net.Listener
	target string
	// framed: the proxy reads the HTTP/2 frames it forwards, so that it can
	// withhold some (see withhold).
	framed bool

	mu       sync.Mutex
	conns    []net.Conn
	accepted int
	// withholding: the direction (withholdReplies or withholdRequests) in
	// which only the frames of stream 0 (the connection's own: SETTINGS,
	// PING, WINDOW_UPDATE...) get through, until the next cut.
	withholding string
}

// The directions a framed proxy can withhold.
const (
	withholdReplies  = "replies"  // server to client
	withholdRequests = "requests" // client to server
)

func newCutProxy(t *testing.T, target string) *cutProxy {
	return startCutProxy(t, &cutProxy{target: target})
}

// newFramedProxy is a cutProxy that can withhold the frames of every RPC
// in one direction: the connection stays up, no RPC message gets through.
func newFramedProxy(t *testing.T, target string) *cutProxy {
	return startCutProxy(t, &cutProxy{target: target, framed: true})
}

func startCutProxy(t *testing.T, p *cutProxy) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.ln = ln
	go p.serve()
	t.Cleanup(func() {
		ln.Close()
		p.cut()
	})
	return p
}

func (p *cutProxy) addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		client, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		target := p.target
		p.mu.Unlock()
		server, err := net.Dial("tcp", target)
		if err != nil {
			client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.accepted++
		p.mu.Unlock()
		pipe := func(dst, src net.Conn, direction string) {
			if p.framed {
				_ = p.copyFrames(dst, src, direction)
			} else {
				_, _ = io.Copy(dst, src)
			}
			dst.Close()
			src.Close()
		}
		go pipe(server, client, withholdRequests)
		go pipe(client, server, withholdReplies)
	}
}

// http2Preface opens every HTTP/2 connection, from the client.
const http2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// copyFrames forwards the HTTP/2 frames of src to dst, less those of a
// stream (id > 0) while the proxy withholds direction.
func (p *cutProxy) copyFrames(dst, src net.Conn, direction string) error {
	r := bufio.NewReader(src)
	if direction == withholdRequests {
		preface := make([]byte, len(http2Preface))
		if _, err := io.ReadFull(r, preface); err != nil {
			return err
		}
		if _, err := dst.Write(preface); err != nil {
			return err
		}
	}
	for {
		// A frame header: length (24 bits), type, flags, stream id (31
		// bits, the high bit reserved).
		header := make([]byte, 9)
		if _, err := io.ReadFull(r, header); err != nil {
			return err
		}
		length := int(header[0])<<16 | int(header[1])<<8 | int(header[2])
		frame := make([]byte, 9+length)
		copy(frame, header)
		if _, err := io.ReadFull(r, frame[9:]); err != nil {
			return err
		}
		if binary.BigEndian.Uint32(header[5:9])&0x7fffffff != 0 && p.withholds(direction) {
			continue
		}
		if _, err := dst.Write(frame); err != nil {
			return err
		}
	}
}

// withhold makes a framed proxy drop the frames of every RPC in direction
// (withholdReplies or withholdRequests) on the connections open and to come,
// until the next cut.
func (p *cutProxy) withhold(direction string) {
	if !p.framed {
		panic("withhold needs a framed proxy")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.withholding = direction
}

func (p *cutProxy) withholds(direction string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.withholding == direction
}

// cut closes every connection open through the proxy (both sides), and
// stops withholding frames; new connections are still accepted.
func (p *cutProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
	p.withholding = ""
}

// retarget sends the connections accepted from now on to target.
func (p *cutProxy) retarget(target string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.target = target
}

func (p *cutProxy) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

func dialAddr(t *testing.T, addr string) *forge.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := forge.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// weatherTwice: get_weather for Paris, then Oslo, then the report.
func weatherTwice() []any {
	return []any{
		toolCall("get_weather", map[string]any{"city": "Paris"}),
		toolCall("get_weather", map[string]any{"city": "Oslo"}),
		toolCall("report_weather", map[string]any{"city": "Paris", "weather": "sunny"}),
	}
}

// eventLog records a run's events and checks that none came twice.
type eventLog struct {
	mu     sync.Mutex
	events []forge.Event
}

func (e *eventLog) add(ev forge.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.events = append(e.events, ev)
}

// check fails t if an event was delivered twice, and returns the calls'
// ids in order.
// checkReattachedEvents: one Reattached event per break, naming the run
// and the attempts it took, and RunCompleted last with the run's result.
func checkReattachedEvents(t *testing.T, e *eventLog, res *forge.RunResult, breaks int) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	var reattached []forge.Reattached
	for _, ev := range e.events {
		if r, ok := ev.(forge.Reattached); ok {
			reattached = append(reattached, r)
		}
	}
	if len(reattached) != breaks {
		t.Errorf("%d Reattached events, want %d: %+v", len(reattached), breaks, reattached)
	}
	for _, r := range reattached {
		if r.RunID != res.RunID || r.Attempts < 1 || r.AfterSeq == 0 {
			t.Errorf("Reattached %+v, want run %s, after a seq, with at least one attempt", r, res.RunID)
		}
	}
	if n := len(e.events); n == 0 {
		t.Error("no events")
	} else if done, ok := e.events[n-1].(forge.RunCompleted); !ok || done.Result != res {
		t.Errorf("the last event is %T, want RunCompleted with the run's result", e.events[n-1])
	}
}

func (e *eventLog) check(t *testing.T) []string {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	started, finished := map[string]int{}, map[string]int{}
	var ids []string
	runStarted := 0
	nextIndex := -1
	for _, ev := range e.events {
		switch ev := ev.(type) {
		case forge.RunStarted:
			runStarted++
			if ev.ReattachGrace != 30*time.Second {
				t.Errorf("RunStarted.ReattachGrace = %s, want 30s", ev.ReattachGrace)
			}
		case forge.ToolCallStarted:
			started[ev.CallID]++
			if started[ev.CallID] == 1 {
				ids = append(ids, ev.CallID)
			}
		case forge.ToolCallFinished:
			finished[ev.CallID]++
			if ev.Discarded {
				t.Errorf("the result of %s (%s) was discarded", ev.CallID, ev.ToolName)
			}
		case forge.MessageAppended:
			if nextIndex >= 0 && ev.Index != nextIndex {
				t.Errorf("MessageAppended index %d after %d", ev.Index, nextIndex-1)
			}
			nextIndex = ev.Index + 1
		}
	}
	if runStarted != 1 {
		t.Errorf("%d RunStarted events, want 1", runStarted)
	}
	for id, n := range started {
		if n != 1 || finished[id] != 1 {
			t.Errorf("call %s: %d ToolCallStarted and %d ToolCallFinished events, want 1 each", id, n, finished[id])
		}
	}
	if len(ids) != 3 {
		t.Errorf("%d tool calls, want 3 (get_weather twice, report_weather)", len(ids))
	}
	return ids
}

// callCounts counts the tool functions' runs by key.
type callCounts struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *callCounts) add(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = map[string]int{}
	}
	c.n[key]++
}

func (c *callCounts) want(t *testing.T, keys ...string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		if c.n[k] != 1 {
			t.Errorf("%s ran %d times, want once (counts %v)", k, c.n[k], c.n)
		}
	}
	if len(c.n) != len(keys) {
		t.Errorf("tool runs %v, want one each of %v", c.n, keys)
	}
}

// journaledArgs are the server flags of a journaled server.
func journaledArgs(t *testing.T) []string {
	return []string{
		"--journal", "sqlite:///" + filepath.Join(t.TempDir(), "j.db"),
		"--reattach-grace", "30",
	}
}

// fastReattach: the tests' backoff, short.
var fastReattach = forge.WithReattachBackoff(20*time.Millisecond, 500*time.Millisecond)

func TestReattachAfterNetworkBreak(t *testing.T) {
	srv := ownScriptedServer(t, map[string][]any{
		"go_reattach_proxy":    weatherTwice(),
		"go_reattach_proxy_no": weatherTwice(),
		"go_reattach_approval": {
			toolCall("delete_service", map[string]any{"service": "staging"}),
		},
	}, append(journaledArgs(t),
		// The run left behind by WithReattach(false) waits for a reattach
		// that never comes: do not let it hold the shutdown up.
		"--shutdown-grace", "0.5")...)
	proxy := newCutProxy(t, srv.addr)
	client := dialAddr(t, proxy.addr())

	t.Run("the run survives two breaks", func(t *testing.T) {
		var runs callCounts
		var events eventLog
		cutAfterResult := make(chan struct{})
		var cutOnce sync.Once
		wf := forge.NewWorkflow("go_reattach_proxy", "Look up the weather, then report it.")
		forge.AddTool(wf, "get_weather", "Get current weather for a city",
			func(ctx context.Context, in weatherArgs) (string, error) {
				runs.add(in.City)
				if in.City == "Paris" {
					// A break while this call is in flight; the call goes
					// on and its result goes out on the next stream.
					proxy.cut()
					select {
					case <-time.After(300 * time.Millisecond):
					case <-ctx.Done():
						return "", context.Cause(ctx)
					}
				}
				return "sunny in " + in.City, nil
			}, forge.AsRequired())
		forge.AddTool(wf, "report_weather", "Report the weather to the user. Ends the task.",
			func(ctx context.Context, in reportArgs) (string, error) {
				runs.add("report")
				// The run cannot end before the second break.
				select {
				case <-cutAfterResult:
				case <-time.After(10 * time.Second):
					return "", errors.New("no second break")
				}
				return "reported " + in.Weather, nil
			}, forge.AsTerminal())
		res, err := client.Run(context.Background(), wf, "Weather in Paris and Oslo?", fastReattach,
			forge.WithEvents(func(e forge.Event) {
				events.add(e)
				// A break right after Oslo's result was sent.
				if f, ok := e.(forge.ToolCallFinished); ok && strings.Contains(f.Output, "Oslo") {
					cutOnce.Do(func() {
						proxy.cut()
						close(cutAfterResult)
					})
				}
			}))
		if err != nil {
			t.Fatalf("run: %v\nserver log:\n%s", err, srv.log.String())
		}
		if res.TerminalTool != "report_weather" || res.Value != "reported sunny" {
			t.Errorf("result %s %v", res.TerminalTool, res.Value)
		}
		text := transcriptText(res.Transcript)
		for _, want := range []string{"sunny in Paris", "sunny in Oslo"} {
			if strings.Count(text, want) != 1 {
				t.Errorf("%q appears %d times in the transcript:\n%s", want, strings.Count(text, want), text)
			}
		}
		runs.want(t, "Paris", "Oslo", "report")
		events.check(t)
		checkReattachedEvents(t, &events, res, 2)
		if n := proxy.connections(); n < 3 {
			t.Errorf("%d connections through the proxy, want 3 (two reattaches)", n)
		}
		if n := strings.Count(srv.log.String(), res.RunID+": reattached after seq"); n != 2 {
			t.Errorf("the server logged %d reattaches of %s, want 2\nserver log:\n%s", n, res.RunID, srv.log.String())
		}
	})

	t.Run("an approval and its call survive breaks", func(t *testing.T) {
		var runs callCounts
		var events eventLog
		wf := forge.NewWorkflow("go_reattach_approval", "Carry out the operation the user asks for on a service.")
		type deleteArgs struct {
			Service string `json:"service"`
		}
		forge.AddTool(wf, "delete_service", "Delete a service and its deployment permanently. Ends the task.",
			func(_ context.Context, in deleteArgs) (string, error) {
				runs.add("delete")
				proxy.cut()
				time.Sleep(200 * time.Millisecond)
				return in.Service + " deleted", nil
			}, forge.AsDestructive(), forge.AsTerminal())
		res, err := client.Run(context.Background(), wf, "Delete the old staging service.", fastReattach,
			forge.WithApproveDestructiveCalls(), forge.WithEvents(events.add),
			forge.WithApprover(func(ctx context.Context, req forge.ApprovalRequest) (forge.Approval, error) {
				runs.add("approver")
				proxy.cut()
				select {
				case <-time.After(300 * time.Millisecond):
				case <-ctx.Done():
					return forge.Approval{}, context.Cause(ctx)
				}
				return forge.Approval{Approved: true}, nil
			}))
		if err != nil {
			t.Fatalf("run: %v\nserver log:\n%s", err, srv.log.String())
		}
		if res.Value != "staging deleted" {
			t.Errorf("result %v", res.Value)
		}
		runs.want(t, "approver", "delete")
		events.mu.Lock()
		defer events.mu.Unlock()
		counts := map[string]int{}
		for _, e := range events.events {
			counts[fmt.Sprintf("%T", e)]++
		}
		for _, kind := range []string{"forge.RunStarted", "forge.ApprovalRequested", "forge.ApprovalDecided", "forge.ToolCallStarted", "forge.ToolCallFinished"} {
			if counts[kind] != 1 {
				t.Errorf("%d %s events, want 1 (all: %v)", counts[kind], kind, counts)
			}
		}
	})

	t.Run("WithReattach(false) fails with ConnectionLostError", func(t *testing.T) {
		var runs callCounts
		wf := weatherWorkflow("go_reattach_proxy_no", func(ctx context.Context, in weatherArgs) (string, error) {
			runs.add(in.City)
			proxy.cut()
			<-ctx.Done()
			return "", context.Cause(ctx)
		})
		_, err := client.Run(context.Background(), wf, "Weather in Paris?", forge.WithReattach(false))
		var lost *forge.ConnectionLostError
		if !errors.As(err, &lost) {
			t.Fatalf("err = %v (%T), want *ConnectionLostError", err, err)
		}
		runs.want(t, "Paris")
	})
}

func TestReattachBeforeRunStarted(t *testing.T) {
	// The stream breaks before the run's run_started reached the client.
	// The SDK named the run (StartRun.run_id), so it reattaches by that id;
	// when the server does not know the run, the start never arrived and
	// the SDK sends it again. Each case has its own server, the client
	// reaching it through a proxy that withholds the frames of every RPC in
	// one direction until the cut.
	type setup struct {
		srv        *serverProcess
		proxy      *cutProxy
		activeRuns func() uint32
	}
	// run starts a run while the proxy withholds direction; before is
	// called (nothing got through yet) before the cut.
	run := func(t *testing.T, direction string, before func(setup)) *serverProcess {
		srv := ownScriptedServer(t, map[string][]any{"go_prestart": weatherTwice()}, journaledArgs(t)...)
		proxy := newFramedProxy(t, srv.addr)
		client := dialAddr(t, proxy.addr())
		direct := dialAddr(t, srv.addr)
		activeRuns := func() uint32 {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			info, err := direct.ServerInfo(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return info.GetActiveRuns()
		}
		var runs callCounts
		var events eventLog
		wf := weatherWorkflow("go_prestart", func(_ context.Context, in weatherArgs) (string, error) {
			runs.add(in.City)
			return "sunny in " + in.City, nil
		})
		proxy.withhold(direction)
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		stream, err := client.Start(ctx, wf, "Weather in Paris and Oslo?", fastReattach, forge.WithEvents(events.add))
		if err != nil {
			t.Fatal(err)
		}
		before(setup{srv, proxy, activeRuns})
		events.mu.Lock()
		early := len(events.events)
		events.mu.Unlock()
		if early != 0 {
			t.Fatalf("%d events got through the proxy before the cut", early)
		}
		proxy.cut()
		res, err := stream.Wait()
		if err != nil {
			t.Fatalf("run: %v\nserver log:\n%s", err, srv.log.String())
		}
		if res.TerminalTool != "report_weather" {
			t.Errorf("terminal tool %q", res.TerminalTool)
		}
		runs.want(t, "Paris", "Oslo")
		events.check(t)
		events.mu.Lock()
		for _, e := range events.events {
			if s, ok := e.(forge.RunStarted); ok && s.RunID != res.RunID {
				t.Errorf("RunStarted.RunID %q, the result's %q", s.RunID, res.RunID)
			}
		}
		events.mu.Unlock()
		if len(res.RunID) != 32 || strings.Trim(res.RunID, "0123456789abcdef") != "" {
			t.Errorf("run id %q, want the client's 32 hex characters", res.RunID)
		}
		if n := proxy.connections(); n != 2 {
			t.Errorf("%d connections through the proxy, want 2", n)
		}
		if text := transcriptText(res.Transcript); strings.Count(text, "sunny in Paris") != 1 {
			t.Errorf("transcript:\n%s", text)
		}
		if n := strings.Count(srv.log.String(), "run "+res.RunID+" started"); n != 1 {
			t.Errorf("the server logged %d starts of %s, want 1\nserver log:\n%s", n, res.RunID, srv.log.String())
		}
		return srv
	}

	t.Run("the start arrived", func(t *testing.T) {
		srv := run(t, withholdReplies, func(s setup) {
			// The server has the run; the client has heard nothing.
			deadline := time.Now().Add(10 * time.Second)
			for s.activeRuns() != 1 {
				if time.Now().After(deadline) {
					t.Fatalf("the run did not start\nserver log:\n%s", s.srv.log.String())
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
		if !strings.Contains(srv.log.String(), "reattached after seq 0") {
			t.Errorf("the SDK did not reattach by its run id\nserver log:\n%s", srv.log.String())
		}
	})

	t.Run("the start never arrived", func(t *testing.T) {
		run(t, withholdRequests, func(s setup) {
			time.Sleep(500 * time.Millisecond)
			if n := s.activeRuns(); n != 0 {
				t.Fatalf("the server has %d active runs: the start got through", n)
			}
		})
	})
}

func TestSessionCarriesTheConversation(t *testing.T) {
	// The second run's script goes on after the turns the session's
	// conversation already holds.
	srv := ownScriptedServer(t, map[string][]any{
		"go_session": append(weatherTwice(), weatherTwice()...),
	}, journaledArgs(t)...)
	client := dialServer(t, srv)
	wf := weatherWorkflow("go_session", func(_ context.Context, in weatherArgs) (string, error) {
		return "sunny in " + in.City, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	users := func(res *forge.RunResult) []string {
		var out []string
		for _, m := range res.Transcript {
			if m.GetRole() == forge.RoleUser {
				out = append(out, m.GetContent())
			}
		}
		return out
	}
	if _, err := client.Run(ctx, wf, "Weather in Paris and Oslo?", forge.WithSession("go-trip")); err != nil {
		t.Fatalf("first run: %v\nserver log:\n%s", err, srv.log.String())
	}
	second, err := client.Run(ctx, wf, "And again?", forge.WithSession("go-trip"))
	if err != nil {
		t.Fatalf("second run: %v\nserver log:\n%s", err, srv.log.String())
	}
	if got, want := users(second), []string{"Weather in Paris and Oslo?", "And again?"}; !slices.Equal(got, want) {
		t.Errorf("the second run's user messages %q, want %q", got, want)
	}
	alone, err := client.Run(ctx, wf, "Once more?")
	if err != nil {
		t.Fatalf("run without a session: %v\nserver log:\n%s", err, srv.log.String())
	}
	if got, want := users(alone), []string{"Once more?"}; !slices.Equal(got, want) {
		t.Errorf("the user messages of a run without a session %q, want %q", got, want)
	}
}

func TestReattachAfterServerRestart(t *testing.T) {
	root := repoRoot(t)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	args := append([]string{
		"--host", "127.0.0.1", "--port", strconv.Itoa(port),
		"--backend", "scripted", "--script", writeScript(t, map[string][]any{"go_reattach_restart": weatherTwice()}),
		"--replica-id", "go-reattach-test",
	}, journaledArgs(t)...)
	start := func() *serverProcess {
		srv, err := spawnServer(root, addr, args...)
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.waitHealthy(60 * time.Second); err != nil {
			srv.stop()
			t.Fatalf("%v\nserver log:\n%s", err, srv.log.String())
		}
		return srv
	}
	var mu sync.Mutex
	servers := []*serverProcess{start()}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		for _, s := range servers {
			s.stop()
		}
	})
	logs := func() string {
		mu.Lock()
		defer mu.Unlock()
		var b strings.Builder
		for i, s := range servers {
			fmt.Fprintf(&b, "--- server %d:\n%s", i+1, s.log.String())
		}
		return b.String()
	}
	client := dialAddr(t, addr)

	var runs callCounts
	var events eventLog
	wf := weatherWorkflow("go_reattach_restart", func(ctx context.Context, in weatherArgs) (string, error) {
		runs.add(in.City)
		if in.City == "Paris" {
			// The server dies while this call is in flight and comes back
			// on the same port with the same journal and replica id.
			mu.Lock()
			first := servers[0]
			mu.Unlock()
			if err := first.cmd.Process.Kill(); err != nil {
				return "", err
			}
			<-first.exited
			srv := start()
			mu.Lock()
			servers = append(servers, srv)
			mu.Unlock()
		}
		return "sunny in " + in.City, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := client.Run(ctx, wf, "Weather in Paris and Oslo?", fastReattach, forge.WithEvents(events.add))
	if err != nil {
		t.Fatalf("run: %v\n%s", err, logs())
	}
	if res.TerminalTool != "report_weather" {
		t.Errorf("terminal tool %q", res.TerminalTool)
	}
	runs.want(t, "Paris", "Oslo")
	ids := events.check(t)
	if text := transcriptText(res.Transcript); strings.Count(text, "sunny in Paris") != 1 {
		t.Errorf("transcript:\n%s", text)
	}
	if len(ids) > 0 && !strings.Contains(logs(), "resumed from the journal") {
		t.Errorf("the restarted server did not resume the run from the journal\n%s", logs())
	}
}

func TestReattachToAnotherReplicaAfterDrain(t *testing.T) {
	// Two replicas share a journal; the client reaches them through a proxy
	// (standing in for a Service). Replica A drains mid-run: when its drain
	// period ends it hands the run over (the stream ends UNAVAILABLE
	// SHUTTING_DOWN) and the SDK reattaches through the proxy, now pointing
	// at replica B, which resumes the run from the journal.
	script := map[string][]any{"go_reattach_drain": weatherTwice()}
	journal := journaledArgs(t)
	a := ownScriptedServer(t, script, append([]string{"--replica-id", "a", "--shutdown-grace", "0.3"}, journal...)...)
	b := ownScriptedServer(t, script, append([]string{"--replica-id", "b"}, journal...)...)
	proxy := newCutProxy(t, a.addr)
	client := dialAddr(t, proxy.addr())
	var runs callCounts
	var events eventLog
	wf := weatherWorkflow("go_reattach_drain", func(ctx context.Context, in weatherArgs) (string, error) {
		runs.add(in.City)
		if in.City == "Paris" {
			proxy.retarget(b.addr)
			if err := a.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				return "", err
			}
			select {
			case <-a.exited:
			case <-time.After(20 * time.Second):
				return "", errors.New("replica a did not exit")
			}
		}
		return "sunny in " + in.City, nil
	})
	res, err := client.Run(context.Background(), wf, "Weather in Paris and Oslo?", fastReattach, forge.WithEvents(events.add))
	if err != nil {
		t.Fatalf("run: %v\nreplica a:\n%s\nreplica b:\n%s", err, a.log.String(), b.log.String())
	}
	if res.TerminalTool != "report_weather" {
		t.Errorf("terminal tool %q", res.TerminalTool)
	}
	runs.want(t, "Paris", "Oslo")
	events.check(t)
	if !strings.Contains(b.log.String(), res.RunID+" resumed from the journal") {
		t.Errorf("replica b did not resume the run\nreplica a:\n%s\nreplica b:\n%s", a.log.String(), b.log.String())
	}
}

func TestNoReattachWithoutJournal(t *testing.T) {
	srv := ownScriptedServer(t, map[string][]any{"go_reattach_none": weatherTwice()}, "--journal", "none")
	proxy := newCutProxy(t, srv.addr)
	client := dialAddr(t, proxy.addr())
	var runs callCounts
	causes := make(chan error, 1)
	wf := weatherWorkflow("go_reattach_none", func(ctx context.Context, in weatherArgs) (string, error) {
		runs.add(in.City)
		proxy.cut()
		select {
		case <-ctx.Done():
			causes <- context.Cause(ctx)
			return "", ctx.Err()
		case <-time.After(10 * time.Second):
			causes <- nil
			return "too late", nil
		}
	})
	var started forge.RunStarted
	began := time.Now()
	_, err := client.Run(context.Background(), wf, "Weather in Paris?", fastReattach,
		forge.WithEvents(func(e forge.Event) {
			if s, ok := e.(forge.RunStarted); ok {
				started = s
			}
		}))
	var lost *forge.ConnectionLostError
	if !errors.As(err, &lost) {
		t.Fatalf("err = %v (%T), want *ConnectionLostError\nserver log:\n%s", err, err, srv.log.String())
	}
	if started.ReattachGrace != 0 {
		t.Errorf("RunStarted.ReattachGrace = %s without a journal", started.ReattachGrace)
	}
	if elapsed := time.Since(began); elapsed > 5*time.Second {
		t.Errorf("the run took %s to fail", elapsed)
	}
	if cause := <-causes; !errors.Is(cause, forge.ErrRunEnded) {
		t.Errorf("the tool's context ended with %v, want ErrRunEnded", cause)
	}
	runs.want(t, "Paris")
	if n := proxy.connections(); n != 1 {
		t.Errorf("%d connections through the proxy: the SDK tried to reattach", n)
	}
}

func TestReattachGivesUp(t *testing.T) {
	// The server dies mid-run and is not back in time, or comes back
	// without the run: *ConnectionLostError, holding both the break and
	// why reattaching stopped.
	script := map[string][]any{"go_reattach_give_up": weatherTwice()}
	run := func(t *testing.T, srv *serverProcess, then func(), opts ...forge.RunOption) (error, time.Duration) {
		client := dialAddr(t, srv.addr)
		causes := make(chan error, 1)
		wf := weatherWorkflow("go_reattach_give_up", func(ctx context.Context, in weatherArgs) (string, error) {
			if err := srv.cmd.Process.Kill(); err != nil {
				return "", err
			}
			<-srv.exited
			then()
			<-ctx.Done()
			causes <- context.Cause(ctx)
			return "", ctx.Err()
		})
		began := time.Now()
		_, err := client.Run(context.Background(), wf, "Weather in Paris?", append(opts, fastReattach)...)
		elapsed := time.Since(began)
		select {
		case cause := <-causes:
			if !errors.Is(cause, forge.ErrRunEnded) {
				t.Errorf("the tool's context ended with %v, want ErrRunEnded", cause)
			}
		case <-time.After(5 * time.Second):
			t.Error("the tool's context did not end with the run")
		}
		return err, elapsed
	}

	t.Run("deadline", func(t *testing.T) {
		srv := ownScriptedServer(t, script, journaledArgs(t)...)
		err, elapsed := run(t, srv, func() {}, forge.WithReattachDeadline(time.Second))
		var lost *forge.ConnectionLostError
		if !errors.As(err, &lost) || !strings.Contains(err.Error(), "no reattach within") {
			t.Fatalf("err = %v (%T), want *ConnectionLostError after the deadline", err, err)
		}
		if elapsed > 5*time.Second {
			t.Errorf("gave up after %s with a 1s deadline", elapsed)
		}
	})

	t.Run("run not found", func(t *testing.T) {
		// Back on the same port with an empty journal.
		srv := ownScriptedServer(t, script, journaledArgs(t)...)
		port := srv.addr[strings.LastIndex(srv.addr, ":")+1:]
		restart := func() {
			again, err := spawnServer(repoRoot(t), srv.addr, append([]string{
				"--host", "127.0.0.1", "--port", port,
				"--backend", "scripted", "--script", writeScript(t, script),
			}, journaledArgs(t)...)...)
			if err != nil {
				t.Error(err)
				return
			}
			t.Cleanup(again.stop)
			if err := again.waitHealthy(60 * time.Second); err != nil {
				t.Error(err)
			}
		}
		err, _ := run(t, srv, restart)
		var lost *forge.ConnectionLostError
		var rejected *forge.RequestRejectedError
		if !errors.As(err, &lost) || !errors.As(err, &rejected) || rejected.Reason != "RUN_NOT_FOUND" {
			t.Fatalf("err = %v (%T), want *ConnectionLostError wrapping RUN_NOT_FOUND", err, err)
		}
	})
}

// replayingServer is a fake ForgeService whose first Run stream breaks after
// a tool call and a message, and whose reattached stream sends both again
// (under their old seqs) before it waits for the result: the SDK must
// deliver each event once and run the tool once.
type replayingServer struct {
	forgev1.UnimplementedForgeServiceServer
	streams  atomic.Int32
	afterSeq chan uint64
	result   chan *forgev1.ToolResult
}

func (f *replayingServer) GetServerInfo(context.Context, *forgev1.GetServerInfoRequest) (*forgev1.GetServerInfoResponse, error) {
	return &forgev1.GetServerInfoResponse{}, nil
}

func (f *replayingServer) Run(stream grpc.BidiStreamingServer[forgev1.RunRequest, forgev1.RunResponse]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	call := &forgev1.RunResponse{Seq: 2, Kind: &forgev1.RunResponse_ToolCall{ToolCall: &forgev1.ToolCallRequest{
		CallId: "c1", ToolName: "get_weather", ArgumentsJson: `{"city":"Paris"}`,
	}}}
	appended := &forgev1.RunResponse{Seq: 3, Kind: &forgev1.RunResponse_MessageAppended{MessageAppended: &forgev1.MessageAppended{
		Message: &forgev1.Message{Role: forgev1.Role_ROLE_ASSISTANT, Content: "calling"}, Index: 1,
	}}}
	if f.streams.Add(1) == 1 {
		if first.GetStart() == nil {
			return status.Error(codes.InvalidArgument, "start first")
		}
		for _, m := range []*forgev1.RunResponse{
			{Seq: 1, Kind: &forgev1.RunResponse_RunStarted{RunStarted: &forgev1.RunStarted{RunId: "r1", ReattachGraceS: 30}}},
			call, appended,
		} {
			if err := stream.Send(m); err != nil {
				return err
			}
		}
		return status.Error(codes.Unavailable, "connection reset")
	}
	f.afterSeq <- first.GetReattach().GetAfterSeq()
	for _, m := range []*forgev1.RunResponse{
		{Kind: &forgev1.RunResponse_RunStarted{RunStarted: &forgev1.RunStarted{RunId: "r1", ReattachGraceS: 30, Reattached: true}}},
		appended, call, call,
	} {
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	req, err := stream.Recv()
	if err != nil {
		return err
	}
	f.result <- req.GetToolResult()
	return stream.Send(&forgev1.RunResponse{Seq: 4, Kind: &forgev1.RunResponse_RunCompleted{RunCompleted: &forgev1.RunCompleted{
		TerminalTool: "report_weather", Result: "done", Iterations: 2,
	}}})
}

func TestReattachDeliversEachEventOnce(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := &replayingServer{afterSeq: make(chan uint64, 1), result: make(chan *forgev1.ToolResult, 2)}
	gs := grpc.NewServer()
	forgev1.RegisterForgeServiceServer(gs, fake)
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	client := dialAddr(t, ln.Addr().String())
	var runs callCounts
	var events eventLog
	wf := weatherWorkflow("go_replaying", func(_ context.Context, in weatherArgs) (string, error) {
		runs.add(in.City)
		return "sunny in " + in.City, nil
	})
	res, err := client.Run(context.Background(), wf, "Weather in Paris?", fastReattach, forge.WithEvents(events.add))
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "done" {
		t.Errorf("result %+v", res)
	}
	if got := <-fake.afterSeq; got != 3 {
		t.Errorf("reattach after_seq = %d, want 3", got)
	}
	if r := <-fake.result; r.GetCallId() != "c1" || r.GetOutput() != "sunny in Paris" {
		t.Errorf("result on the reattached stream: %v", r)
	}
	runs.want(t, "Paris")
	counts := map[string]int{}
	for _, e := range events.events {
		counts[fmt.Sprintf("%T", e)]++
	}
	want := map[string]int{
		"forge.RunStarted": 1, "forge.ToolCallStarted": 1, "forge.ToolCallFinished": 1, "forge.MessageAppended": 1,
		// The break, once, and the run's end.
		"forge.Reattached": 1, "forge.RunCompleted": 1,
	}
	if !maps.Equal(counts, want) {
		t.Errorf("events %v, want %v", counts, want)
	}
}
