package forge_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
	"google.golang.org/grpc/codes"
)

// Client.Guard against the scripted server (which Guard never asks for a
// model reply): a caller's own loop gets Run's decisions as typed verdicts.

func guardCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

var guardUser = &forge.Message{Role: forge.RoleUser, Content: "Weather in Paris?"}

func TestGuardCorrectsRunsCallsAndIsDone(t *testing.T) {
	client := dial(t)
	ctx := guardCtx(t)
	ran := 0
	wf := weatherWorkflow("go_guard_weather", func(_ context.Context, in weatherArgs) (string, error) {
		ran++
		return "72F in " + in.City, nil
	})
	history := []*forge.Message{guardUser}

	// The terminal tool before the required step: a step correction.
	v, err := client.Guard(ctx, wf, history, forge.ModelReply{
		Text: `{"tool": "report_weather", "args": {"city": "Paris", "weather": "?"}}`,
	})
	if err != nil {
		t.Fatal(err)
	}
	retry, ok := v.(forge.GuardRetry)
	if !ok {
		t.Fatalf("verdict %#v, want GuardRetry", v)
	}
	if retry.Attempt != 1 || !strings.Contains(retry.Reason, "get_weather") {
		t.Errorf("retry = attempt %d, reason %q", retry.Attempt, retry.Reason)
	}
	if last := retry.Messages[len(retry.Messages)-1]; last.GetType() != forge.MessageStepNudge || !last.GetTransient() {
		t.Errorf("last retry message = %v", last)
	}
	history = append(history, retry.Messages...)

	// A native-API reply keeps its id; 7 is coerced to "7".
	v, err = client.Guard(ctx, wf, history, forge.ModelReply{
		ToolCalls: []*forge.ToolCall{{Id: "x1", Name: "get_weather", ArgumentsJson: `{"city": 7}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	calls, ok := v.(forge.GuardCalls)
	if !ok || len(calls.Calls) != 1 {
		t.Fatalf("verdict %#v, want GuardCalls with one call", v)
	}
	call := calls.Calls[0]
	if call.CallID != "x1" || call.ToolName != "get_weather" || compactJSON(t, call.Arguments) != `{"city":"7"}` {
		t.Errorf("call = %+v", call)
	}
	if len(call.Coercions) != 1 || call.Coercions[0].GetPath() != "/city" {
		t.Errorf("coercions = %v", call.Coercions)
	}
	if m := calls.Message; m.GetRole() != forge.RoleAssistant || len(m.GetToolCalls()) != 1 || m.GetToolCalls()[0].GetId() != "x1" {
		t.Errorf("calls message = %v", m)
	}
	history = append(history, calls.Message, call.ResultMessage("72F in 7", nil))

	v, err = client.Guard(ctx, wf, history, forge.ModelReply{
		ToolCalls: []*forge.ToolCall{{Id: "x2", Name: "report_weather", ArgumentsJson: `{"city": "7", "weather": "72F in 7"}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	final, ok := v.(forge.GuardCalls)
	if !ok {
		t.Fatalf("verdict %#v, want GuardCalls", v)
	}
	history = append(history, final.Message, final.Calls[0].ResultMessage("sent", nil))

	v, err = client.Guard(ctx, wf, history, forge.ModelReply{})
	if err != nil {
		t.Fatal(err)
	}
	want := forge.GuardDone{TerminalTool: "report_weather", Result: "sent", TerminalCallID: "x2"}
	if v != want {
		t.Errorf("verdict %#v, want %#v", v, want)
	}
	if ran != 0 {
		t.Errorf("Guard ran the workflow's tool %d times", ran)
	}
}

func TestGuardFailedCallIsAToolError(t *testing.T) {
	client := dial(t)
	ctx := guardCtx(t)
	wf := weatherWorkflow("go_guard_weather", nil)
	v, err := client.Guard(ctx, wf, []*forge.Message{guardUser}, forge.ModelReply{
		ToolCalls: []*forge.ToolCall{{Id: "a", Name: "get_weather", ArgumentsJson: `{"city": "Paris"}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	calls := v.(forge.GuardCalls)
	failed := calls.Calls[0].ResultMessage("", errors.New("weather service down"))
	if failed.GetContent() != "[ToolError] weather service down" {
		t.Errorf("failed result = %q", failed.GetContent())
	}
	// The failed lookup did not complete the step.
	v, err = client.Guard(ctx, wf, []*forge.Message{guardUser, calls.Message, failed}, forge.ModelReply{
		ToolCalls: []*forge.ToolCall{{Id: "b", Name: "report_weather", ArgumentsJson: `{"city": "Paris", "weather": "x"}`}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if retry, ok := v.(forge.GuardRetry); !ok || retry.Messages[len(retry.Messages)-1].GetType() != forge.MessageStepNudge {
		t.Errorf("verdict %#v, want a step correction", v)
	}
}

func TestGuardRetryBudgetEndsInRunFailedError(t *testing.T) {
	client := dial(t)
	ctx := guardCtx(t)
	wf := weatherWorkflow("go_guard_weather", nil)
	history := []*forge.Message{guardUser}
	v, err := client.Guard(ctx, wf, history, forge.ModelReply{Text: "It is probably sunny."}, forge.WithMaxRetries(1))
	if err != nil {
		t.Fatal(err)
	}
	history = append(history, v.(forge.GuardRetry).Messages...)
	_, err = client.Guard(ctx, wf, history, forge.ModelReply{Text: "Still sunny."}, forge.WithMaxRetries(1))
	var toolCallErr *forge.ToolCallError
	if !errors.As(err, &toolCallErr) {
		t.Fatalf("err = %v, want *ToolCallError", err)
	}
	if toolCallErr.Reason != forge.ReasonToolCall || len(toolCallErr.Transcript) != len(history) {
		t.Errorf("reason %s, transcript of %d messages (sent %d)", toolCallErr.Reason, len(toolCallErr.Transcript), len(history))
	}
}

func TestGuardRejectionNamesTheField(t *testing.T) {
	client := dial(t)
	ctx := guardCtx(t)
	wf := weatherWorkflow("go_guard_weather", nil)
	for _, tc := range []struct {
		messages []*forge.Message
		reply    forge.ModelReply
		field    string
	}{
		{[]*forge.Message{guardUser, {Role: forge.RoleTool, Content: "out", ToolCallId: "nope"}}, forge.ModelReply{}, "messages[1].tool_call_id"},
		{[]*forge.Message{guardUser}, forge.ModelReply{}, "reply_text"},
		{[]*forge.Message{guardUser}, forge.ModelReply{Text: "x", ToolCalls: []*forge.ToolCall{{Id: "a", Name: "get_weather"}}}, "reply_tool_calls"},
		{[]*forge.Message{guardUser}, forge.ModelReply{ToolCalls: []*forge.ToolCall{{Id: "a"}}}, "reply_tool_calls[0].name"},
	} {
		_, err := client.Guard(ctx, wf, tc.messages, tc.reply)
		var rejected *forge.RequestRejectedError
		if !errors.As(err, &rejected) {
			t.Errorf("%s: err = %v, want *RequestRejectedError", tc.field, err)
			continue
		}
		if rejected.Code != codes.InvalidArgument || rejected.Field != tc.field {
			t.Errorf("rejected %s (%s), want InvalidArgument (%s)", rejected.Code, rejected.Field, tc.field)
		}
	}
	// Options that configure a run's stream are refused before any request.
	if _, err := client.Guard(ctx, wf, []*forge.Message{guardUser}, forge.ModelReply{Text: "x"}, forge.WithLabels(map[string]string{"a": "b"})); err == nil {
		t.Error("Guard accepted WithLabels")
	}
}

func TestGuardResultMessage(t *testing.T) {
	call := forge.GuardedCall{CallID: "c1", ToolName: "t", Arguments: json.RawMessage(`{}`)}
	ok := call.ResultMessage("out", nil)
	if ok.GetRole() != forge.RoleTool || ok.GetToolCallId() != "c1" || ok.GetContent() != "out" || ok.GetToolName() != "t" {
		t.Errorf("result message = %v", ok)
	}
	if got := call.ResultMessage("ignored", errors.New("boom")).GetContent(); got != forge.ToolErrorPrefix+"boom" {
		t.Errorf("error result = %q", got)
	}
}
