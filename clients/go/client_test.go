package forge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// SDK behaviour beyond the conformance suite, against the same scripted
// server (scripts in testdata/scripts, keyed by workflow name).

type weatherArgs struct {
	City string `json:"city" jsonschema:"description=City name"`
}

type reportArgs struct {
	City    string `json:"city" jsonschema:"description=The city the weather is for"`
	Weather string `json:"weather" jsonschema:"description=The weather as get_weather returned it"`
}

type report struct {
	City    string `json:"city"`
	Weather string `json:"weather"`
}

// weatherWorkflow is the two-step weather workflow; getWeather is the
// test's get_weather.
func weatherWorkflow(name string, getWeather func(context.Context, weatherArgs) (string, error)) *forge.Workflow {
	wf := forge.NewWorkflow(name, "Look up the weather, then report it.")
	forge.AddTool(wf, "get_weather", "Get current weather for a city", getWeather, forge.AsRequired())
	forge.AddTool(wf, "report_weather", "Report the weather to the user. Ends the task.",
		func(_ context.Context, in reportArgs) (report, error) {
			return report{City: in.City, Weather: in.Weather}, nil
		}, forge.AsTerminal())
	return wf
}

func dial(t *testing.T) *forge.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := forge.Dial(ctx, scriptedServer(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

func transcriptText(msgs []*forge.Message) string {
	var parts []string
	for _, m := range msgs {
		parts = append(parts, m.GetContent())
	}
	return strings.Join(parts, "\n")
}

func compactJSON(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// recorder collects events from a WithEvents callback.
type recorder struct {
	mu     sync.Mutex
	events []forge.Event
}

func (r *recorder) add(e forge.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) finished() []forge.ToolCallFinished {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []forge.ToolCallFinished
	for _, e := range r.events {
		if f, ok := e.(forge.ToolCallFinished); ok {
			out = append(out, f)
		}
	}
	return out
}

func TestTypedToolsEventsAndMultiTurn(t *testing.T) {
	client := dial(t)
	var mu sync.Mutex
	var ran []string
	wf := weatherWorkflow("go_typed_weather", func(_ context.Context, in weatherArgs) (string, error) {
		mu.Lock()
		ran = append(ran, "get_weather:"+in.City)
		mu.Unlock()
		return "72F and sunny in " + in.City, nil
	})

	var schema struct {
		Type       string `json:"type"`
		Properties map[string]struct {
			Type        string `json:"type"`
			Description string `json:"description"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(wf.Tool("get_weather").Schema, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || schema.Properties["city"].Type != "string" ||
		schema.Properties["city"].Description != "City name" || !slices.Equal(schema.Required, []string{"city"}) {
		t.Fatalf("schema from the struct: %s", wf.Tool("get_weather").Schema)
	}

	rec := &recorder{}
	ctx := context.Background()
	res, err := client.Run(ctx, wf, "What's the weather in Paris?",
		forge.WithEvents(rec.add), forge.WithStreamChunks(), forge.WithLabels(map[string]string{"test": t.Name()}))
	if err != nil {
		t.Fatal(err)
	}
	want := report{City: "Paris", Weather: "72F and sunny in Paris"}
	if res.TerminalTool != "report_weather" || res.Value != want {
		t.Fatalf("result = %s %#v, want report_weather %#v", res.TerminalTool, res.Value, want)
	}
	if res.Output != `{"city":"Paris","weather":"72F and sunny in Paris"}` {
		t.Errorf("output = %s", res.Output)
	}
	if !slices.Equal(ran, []string{"get_weather:Paris"}) {
		t.Errorf("tools ran: %v", ran)
	}
	if res.Iterations != 2 || res.Usage.GetModelCalls() != 2 {
		t.Errorf("iterations %d, model calls %d", res.Iterations, res.Usage.GetModelCalls())
	}

	started, ok := rec.events[0].(forge.RunStarted)
	if !ok || started.RunID == "" || started.RunID != res.RunID || started.Backend != "scripted" ||
		started.BackendChain != nil {
		t.Errorf("first event %#v, run id %q", rec.events[0], res.RunID)
	}
	var kinds []string
	var chunks, appended int
	for _, e := range rec.events {
		switch e := e.(type) {
		case forge.ToolCallStarted:
			kinds = append(kinds, "start:"+e.ToolName+compactJSON(t, e.Arguments))
		case forge.ToolCallFinished:
			if e.Err != nil || e.Discarded {
				t.Errorf("%s: %v (discarded %v)", e.ToolName, e.Err, e.Discarded)
			}
			kinds = append(kinds, "done:"+e.ToolName+":"+e.Output)
		case forge.Chunk:
			chunks++
		case forge.MessageAppended:
			if e.Index != appended {
				t.Errorf("message index %d, want %d", e.Index, appended)
			}
			appended++
		}
	}
	wantKinds := []string{
		`start:get_weather{"city":"Paris"}`,
		"done:get_weather:72F and sunny in Paris",
		`start:report_weather{"city":"Paris","weather":"72F and sunny in Paris"}`,
		`done:report_weather:{"city":"Paris","weather":"72F and sunny in Paris"}`,
	}
	if !slices.Equal(kinds, wantKinds) {
		t.Errorf("tool events:\n%s\nwant\n%s", strings.Join(kinds, "\n"), strings.Join(wantKinds, "\n"))
	}
	if chunks == 0 {
		t.Error("no chunk events with WithStreamChunks")
	}
	if appended != len(res.Transcript) {
		t.Errorf("%d message_appended events for a transcript of %d", appended, len(res.Transcript))
	}

	// Multi-turn: the next run continues from the conversation so far.
	prior := res.Conversation()
	var firstIndex = -1
	res2, err := client.Run(ctx, wf, "And in Paris again?", forge.WithPriorMessages(prior...),
		forge.WithEvents(func(e forge.Event) {
			if m, ok := e.(forge.MessageAppended); ok && firstIndex < 0 {
				firstIndex = m.Index
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res2.Transcript) <= len(prior) || firstIndex != len(prior) {
		t.Fatalf("second transcript has %d messages after %d prior ones; first new index %d",
			len(res2.Transcript), len(prior), firstIndex)
	}
	for i, m := range prior {
		if res2.Transcript[i].GetContent() != m.GetContent() || res2.Transcript[i].GetType() != m.GetType() {
			t.Errorf("transcript[%d] = %v, want the prior %v", i, res2.Transcript[i], m)
		}
	}
	if !strings.Contains(transcriptText(res2.Transcript), "And in Paris again?") {
		t.Error("the new user message is missing from the transcript")
	}
}

// blockingWeather blocks until its context ends and reports the cause.
func blockingWeather(causes chan<- error) func(context.Context, weatherArgs) (string, error) {
	return func(ctx context.Context, _ weatherArgs) (string, error) {
		<-ctx.Done()
		causes <- context.Cause(ctx)
		return "", ctx.Err()
	}
}

func TestCancelThroughContext(t *testing.T) {
	client := dial(t)
	causes := make(chan error, 1)
	wf := weatherWorkflow("go_cancel", blockingWeather(causes))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	began := time.Now()
	_, err := client.Run(ctx, wf, "What's the weather in Paris?", forge.WithEvents(func(e forge.Event) {
		if _, ok := e.(forge.ToolCallStarted); ok {
			cancel()
		}
	}))
	var cancelled *forge.WorkflowCancelledError
	if !errors.As(err, &cancelled) {
		t.Fatalf("err = %v (%T), want *WorkflowCancelledError", err, err)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("errors.Is(err, context.Canceled) is false for %v", err)
	}
	var runErr *forge.RunFailedError
	if !errors.As(err, &runErr) || runErr.Reason != forge.ReasonCancelled || runErr.RunID == "" {
		t.Errorf("run error %+v", runErr)
	}
	var deprecated *forge.RunError // the former name still matches
	if !errors.As(err, &deprecated) || deprecated != runErr {
		t.Errorf("errors.As with *forge.RunError: %+v", deprecated)
	}
	if !strings.Contains(transcriptText(cancelled.Transcript), "[Cancelled]") {
		t.Errorf("the server's transcript does not show the cancelled call:\n%s", transcriptText(cancelled.Transcript))
	}
	if elapsed := time.Since(began); elapsed > time.Second {
		t.Errorf("the cancellation took %s", elapsed)
	}
	select {
	case cause := <-causes:
		if !errors.Is(cause, context.Canceled) {
			t.Errorf("tool context cause = %v", cause)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the tool's context was not cancelled")
	}
}

func TestCancelThroughRunStream(t *testing.T) {
	client := dial(t)
	causes := make(chan error, 1)
	wf := weatherWorkflow("go_cancel", blockingWeather(causes))
	stream, err := client.Start(context.Background(), wf, "What's the weather in Paris?")
	if err != nil {
		t.Fatal(err)
	}
	for e := range stream.Events() {
		if _, ok := e.(forge.ToolCallStarted); ok {
			stream.Cancel("the user changed their mind")
			stream.Cancel("twice is fine")
		}
	}
	_, err = stream.Wait()
	if !errors.As(err, new(*forge.WorkflowCancelledError)) || errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v (%T), want a *WorkflowCancelledError without a context cause", err, err)
	}
	if cause := <-causes; !errors.Is(cause, forge.ErrRunCancelled) {
		t.Errorf("tool context cause = %v, want ErrRunCancelled", cause)
	}
}

func TestToolPanicIsReportedAsToolError(t *testing.T) {
	client := dial(t)
	calls := 0
	wf := weatherWorkflow("go_tool_panic", func(_ context.Context, in weatherArgs) (string, error) {
		calls++
		if calls == 1 {
			panic("weather backend exploded")
		}
		return "sunny in " + in.City, nil
	})
	rec := &recorder{}
	res, err := client.Run(context.Background(), wf, "What's the weather in Paris?", forge.WithEvents(rec.add))
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminalTool != "report_weather" || res.Iterations != 3 {
		t.Errorf("result %s after %d iterations", res.TerminalTool, res.Iterations)
	}
	finished := rec.finished()
	var panicErr *forge.PanicError
	if len(finished) != 3 || !errors.As(finished[0].Err, &panicErr) || panicErr.Value != "weather backend exploded" {
		t.Fatalf("first tool result: %+v", finished)
	}
	if len(panicErr.Stack) == 0 {
		t.Error("the panic carries no stack")
	}
	text := transcriptText(res.Transcript)
	if !strings.Contains(text, "[ToolError]") || !strings.Contains(text, "weather backend exploded") {
		t.Errorf("the model was not told about the panic:\n%s", text)
	}
}

func TestArgumentDecodeFailureIsAToolError(t *testing.T) {
	client := dial(t)
	wf := forge.NewWorkflow("go_argument_decode", "Set the volume, then finish.")
	var levels []uint8
	forge.AddTool(wf, "set_volume", "Set the volume",
		func(_ context.Context, in struct {
			Level uint8 `json:"level"`
		}) (string, error) {
			levels = append(levels, in.Level)
			return fmt.Sprintf("volume %d", in.Level), nil
		}, forge.AsRequired())
	forge.AddTool(wf, "finish", "Finish", func(context.Context, struct{}) (string, error) {
		return "done", nil
	}, forge.AsTerminal())
	rec := &recorder{}
	res, err := client.Run(context.Background(), wf, "Set the volume to 30.", forge.WithEvents(rec.add))
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "done" || !slices.Equal(levels, []uint8{30}) {
		t.Errorf("result %q, levels %v", res.Output, levels)
	}
	var argErr *forge.ArgumentError
	if f := rec.finished(); len(f) == 0 || !errors.As(f[0].Err, &argErr) || argErr.Tool != "set_volume" {
		t.Fatalf("first tool result: %+v", f)
	}
	if text := transcriptText(res.Transcript); !strings.Contains(text, "invalid arguments for set_volume") {
		t.Errorf("the model was not told about the bad arguments:\n%s", text)
	}
}

func TestServerToolTimeoutCancelsTheToolContext(t *testing.T) {
	client := dial(t)
	causes := make(chan error, 1)
	calls := 0
	wf := weatherWorkflow("go_tool_timeout", func(ctx context.Context, in weatherArgs) (string, error) {
		calls++
		if calls == 1 {
			return blockingWeather(causes)(ctx, in)
		}
		return "sunny", nil
	})
	rec := &recorder{}
	res, err := client.Run(context.Background(), wf, "What's the weather in Paris?",
		forge.WithToolTimeout(300*time.Millisecond), forge.WithEvents(rec.add))
	if err != nil {
		t.Fatal(err)
	}
	if cause := <-causes; !errors.Is(cause, forge.ErrToolTimeout) {
		t.Errorf("tool context cause = %v, want ErrToolTimeout", cause)
	}
	if f := rec.finished(); len(f) != 3 || !f[0].Discarded || f[1].Discarded {
		t.Errorf("tool results: %+v", f)
	}
	// The server says it stopped waiting (the SDK's own timer may have
	// cancelled the tool a moment earlier, so the order against the
	// discarded ToolCallFinished is not fixed).
	var cancelled []forge.ToolCallCancelled
	for _, e := range rec.events {
		if c, ok := e.(forge.ToolCallCancelled); ok {
			cancelled = append(cancelled, c)
		}
	}
	if len(cancelled) != 1 || cancelled[0].ToolName != "get_weather" ||
		!strings.Contains(cancelled[0].Reason, "no result within") {
		t.Errorf("tool call cancellations: %+v", cancelled)
	}
	if res.TerminalTool != "report_weather" {
		t.Errorf("terminal tool %s", res.TerminalTool)
	}
	if text := transcriptText(res.Transcript); !strings.Contains(text, "sent no result") {
		t.Errorf("no timeout in the transcript:\n%s", text)
	}
}

func TestParallelToolCallsRunConcurrently(t *testing.T) {
	client := dial(t)
	var both sync.WaitGroup
	both.Add(2)
	wf := weatherWorkflow("go_parallel", func(ctx context.Context, in weatherArgs) (string, error) {
		both.Done()
		waited := make(chan struct{})
		go func() { both.Wait(); close(waited) }()
		select {
		case <-waited:
			return "sunny in " + in.City, nil
		case <-time.After(5 * time.Second):
			return "", errors.New("the other call of the turn never started")
		}
	})
	res, err := client.Run(context.Background(), wf, "Weather in Paris and Oslo?", forge.WithParallelToolCalls())
	if err != nil {
		t.Fatal(err)
	}
	text := transcriptText(res.Transcript)
	if !strings.Contains(text, "sunny in Paris") || !strings.Contains(text, "sunny in Oslo") {
		t.Errorf("transcript:\n%s", text)
	}
}

func TestRejectedRequestIsTyped(t *testing.T) {
	client := dial(t)
	wf := weatherWorkflow("go_rejected", func(context.Context, weatherArgs) (string, error) { return "", nil })
	wf.Terminal("no_such_tool")
	_, err := client.Run(context.Background(), wf, "Hello")
	var rejected *forge.RequestRejectedError
	if !errors.As(err, &rejected) {
		t.Fatalf("err = %v (%T), want *RequestRejectedError", err, err)
	}
	if rejected.Code != codes.InvalidArgument || rejected.Reason != "INVALID_WORKFLOW" ||
		rejected.Field != "workflow.terminal_tools[1]" {
		t.Errorf("rejected: %+v", rejected)
	}
	if st, ok := status.FromError(err); !ok || st.Code() != codes.InvalidArgument {
		t.Errorf("status.FromError: %v %v", st, ok)
	}
}

func TestServerInfoAndDialFailure(t *testing.T) {
	client := dial(t)
	info, err := client.ServerInfo(context.Background())
	if err != nil || info.GetBackend() != "scripted" || info.GetVersion() == "" {
		t.Fatalf("server info %v, %v", info, err)
	}
	// No chain: the one backend, always available.
	if b := info.GetBackends(); len(b) != 1 || b[0].GetName() != "scripted" || !b[0].GetAvailable() {
		t.Errorf("backends %v", b)
	}
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = forge.Dial(ctx, fmt.Sprintf("127.0.0.1:%d", port))
	if !errors.As(err, new(*forge.ConnectionLostError)) || ctx.Err() != nil {
		t.Errorf("dialing a closed port: %v", err)
	}
}
