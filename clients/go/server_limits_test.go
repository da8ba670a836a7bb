package forge_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
)

// Server limits, each against its own scripted server started with the flag
// under test: the message size limit (--max-message-bytes) and the drain
// period of a shutdown (--shutdown-grace).

// ownScriptedServer starts a server with the scripted backend replaying
// scripts (turns keyed by workflow name) plus args, stopped when the test
// ends.
func ownScriptedServer(t *testing.T, scripts map[string][]any, args ...string) *serverProcess {
	t.Helper()
	args = append([]string{"--backend", "scripted", "--script", writeScript(t, scripts)}, args...)
	srv, err := startServer(repoRoot(t), 60*time.Second, args...)
	if err != nil {
		t.Fatalf("scripted Forge server: %v", err)
	}
	t.Cleanup(srv.stop)
	return srv
}

// writeScript writes scripts (turns keyed by workflow name) to a file for
// --script and returns its path.
func writeScript(t *testing.T, scripts map[string][]any) string {
	t.Helper()
	raw, err := json.Marshal(scripts)
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "script.json")
	if err := os.WriteFile(script, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return script
}

func dialServer(t *testing.T, srv *serverProcess) *forge.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := forge.Dial(ctx, srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// toolCall is one scripted model turn calling one tool.
func toolCall(name string, args map[string]any) map[string]any {
	return map[string]any{"tool_calls": []map[string]any{{"name": name, "args": args}}}
}

func TestOmittedTranscriptIsRebuiltFromEvents(t *testing.T) {
	// Two 160,000-character tool results: each message fits the 300,000-byte
	// limit, the final run_completed with the whole transcript does not, so
	// the server sends it without the transcript (transcript_omitted).
	srv := ownScriptedServer(t, map[string][]any{
		"go_big_transcript": {
			toolCall("get_weather", map[string]any{"city": "Paris"}),
			toolCall("get_weather", map[string]any{"city": "Oslo"}),
			toolCall("report_weather", map[string]any{"city": "Paris", "weather": "sunny"}),
		},
	}, "--max-message-bytes", "300000")
	client := dialServer(t, srv)
	big := strings.Repeat("sunny and mild, ", 10_000)
	wf := weatherWorkflow("go_big_transcript", func(_ context.Context, in weatherArgs) (string, error) {
		return in.City + ": " + big, nil
	})
	var appended []*forge.Message
	prior := &forge.Message{Role: forge.RoleUser, Content: "Earlier: hello"}
	res, err := client.Run(context.Background(), wf, "What's the weather in Paris and Oslo?",
		forge.WithPriorMessages(prior),
		forge.WithEvents(func(e forge.Event) {
			if m, ok := e.(forge.MessageAppended); ok {
				appended = append(appended, m.Message)
			}
		}))
	if err != nil {
		t.Fatalf("run: %v\nserver log:\n%s", err, srv.log.String())
	}
	if res.TerminalTool != "report_weather" {
		t.Errorf("terminal tool %q", res.TerminalTool)
	}
	size := 0
	for _, m := range appended {
		size += len(m.Content)
		for _, call := range m.ToolCalls {
			size += len(call.ArgumentsJson)
		}
	}
	if size <= 300_000 {
		t.Fatalf("the messages hold %d bytes: the transcript would fit the limit", size)
	}
	// Rebuilt from the prior message the client sent and the events.
	if len(res.Transcript) != 1+len(appended) {
		t.Fatalf("transcript of %d messages after 1 prior and %d message_appended events", len(res.Transcript), len(appended))
	}
	if res.Transcript[0].GetContent() != prior.GetContent() {
		t.Errorf("transcript[0] = %q, want the prior message", res.Transcript[0].GetContent())
	}
	for i, m := range res.Transcript[1:] {
		if m.GetType() != appended[i].GetType() || m.GetContent() != appended[i].GetContent() {
			t.Errorf("transcript[%d] = %v, want the message_appended %v", i, m.GetType(), appended[i].GetType())
		}
	}
	if text := transcriptText(res.Transcript); !strings.Contains(text, "Oslo: "+big) {
		t.Error("the transcript lacks the large tool result")
	}
}

func TestServerShutdownFailsTheRunWithShuttingDownError(t *testing.T) {
	srv := ownScriptedServer(t, map[string][]any{
		"go_shutdown": {
			toolCall("get_weather", map[string]any{"city": "Paris"}),
			toolCall("report_weather", map[string]any{"city": "Paris", "weather": "sunny"}),
		},
	}, "--shutdown-grace", "0.5", "--journal", "none")
	client := dialServer(t, srv)
	causes := make(chan error, 1)
	wf := weatherWorkflow("go_shutdown", func(ctx context.Context, _ weatherArgs) (string, error) {
		// The server shuts down while this call runs; its drain period ends
		// before the call does.
		if err := srv.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			return "", err
		}
		select {
		case <-ctx.Done():
			causes <- context.Cause(ctx)
			return "", ctx.Err()
		case <-time.After(20 * time.Second):
			causes <- nil
			return "too late", nil
		}
	})
	_, err := client.Run(context.Background(), wf, "What's the weather in Paris?")
	var shutdown *forge.ShuttingDownError
	if !errors.As(err, &shutdown) {
		t.Fatalf("err = %v (%T), want *ShuttingDownError\nserver log:\n%s", err, err, srv.log.String())
	}
	var runErr *forge.RunFailedError
	if !errors.As(err, &runErr) || runErr.Reason != forge.ReasonShuttingDown || runErr.RunID == "" {
		t.Errorf("run error %+v", runErr)
	}
	if len(shutdown.Transcript) == 0 {
		t.Error("the error carries no transcript")
	}
	select {
	case cause := <-causes:
		if cause == nil {
			t.Error("the tool's context did not end with the run")
		}
	case <-time.After(5 * time.Second):
		t.Error("the tool did not return")
	}
	select {
	case <-srv.exited:
	case <-time.After(30 * time.Second):
		t.Error("the server did not exit after its drain period")
	}
}
