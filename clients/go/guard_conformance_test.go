package forge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
)

// The Guard conformance cases (tests/conformance/README.md, "Guard cases"):
// every file runs against the real server through Client.Guard and is checked
// exactly as the Python runner (tests/conformance/test_guard_conformance.py)
// checks it.

type guardCase struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Workflow    json.RawMessage `json:"workflow"`
	Options     json.RawMessage `json:"options"`
	Messages    []guardMessage  `json:"messages"`
	Steps       []guardStep     `json:"steps"`
}

type guardMessage struct {
	Role       string          `json:"role"`
	Type       string          `json:"type"`
	Content    string          `json:"content"`
	ToolCalls  []guardToolCall `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
	ToolName   string          `json:"tool_name"`
}

type guardToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

type guardStep struct {
	ReplyText      string          `json:"reply_text"`
	ReplyToolCalls []guardToolCall `json:"reply_tool_calls"`
	Expect         guardExpect     `json:"expect"`
	Results        []struct {
		Output string  `json:"output"`
		Error  *string `json:"error"`
	} `json:"results"`
}

type guardExpect struct {
	Verdict string `json:"verdict"`
	Calls   []struct {
		ID        *string   `json:"id"`
		Name      *string   `json:"name"`
		Args      any       `json:"args"`
		Coercions *[]string `json:"coercions"`
	} `json:"calls"`
	Attempt        *int              `json:"attempt"`
	MessageTypes   []string          `json:"message_types"`
	ReasonContains string            `json:"reason_contains"`
	TerminalTool   *string           `json:"terminal_tool"`
	Result         *string           `json:"result"`
	TerminalCallID *string           `json:"terminal_call_id"`
	FailureReason  *string           `json:"failure_reason"`
	Details        map[string]string `json:"details"`
	Code           *string           `json:"code"`
	Reason         *string           `json:"reason"`
	Field          *string           `json:"field"`
}

func guardCasesDir(t testing.TB) string {
	return filepath.Join(repoRoot(t), "tests", "conformance", "guard_cases")
}

func decodeStrict(t *testing.T, raw []byte, into any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatal(err)
	}
}

func TestGuardConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(guardCasesDir(t), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no Guard conformance cases in %s", guardCasesDir(t))
	}
	sort.Strings(files)
	client := dial(t)
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var c guardCase
			decodeStrict(t, raw, &c)
			if c.Name != name {
				t.Fatalf("case name %q does not match its file name %q", c.Name, name)
			}
			// The workflow and options read as the run cases' do.
			var base conformanceCase
			if err := json.Unmarshal(raw, &base); err != nil {
				t.Fatal(err)
			}
			runGuardCase(t, client, &c, &base)
		})
	}
}

func guardToolCalls(calls []guardToolCall) []*forge.ToolCall {
	var out []*forge.ToolCall
	for _, c := range calls {
		out = append(out, &forge.ToolCall{Id: c.ID, Name: c.Name, ArgumentsJson: string(c.Arguments)})
	}
	return out
}

func runGuardCase(t *testing.T, client *forge.Client, c *guardCase, base *conformanceCase) {
	wf := buildWorkflow(base, &scriptedTools{calls: map[string]int{}})
	applySteps(wf, base)
	opts := buildOptions(t, base.Options)
	var history []*forge.Message
	for _, m := range c.Messages {
		typ := m.Type
		if typ == "" {
			typ = "unspecified"
		}
		history = append(history, &forge.Message{
			Role:       forge.Role(enumValue(t, forgev1.Role_value, "ROLE_", m.Role)),
			Type:       forge.MessageType(enumValue(t, forgev1.MessageType_value, "MESSAGE_TYPE_", typ)),
			Content:    m.Content,
			ToolCalls:  guardToolCalls(m.ToolCalls),
			ToolCallId: m.ToolCallID,
			ToolName:   m.ToolName,
		})
	}
	for i, step := range c.Steps {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		verdict, err := client.Guard(ctx, wf, history, forge.ModelReply{
			Text: step.ReplyText, ToolCalls: guardToolCalls(step.ReplyToolCalls),
		}, opts...)
		cancel()
		want := step.Expect
		got := "?"
		var runErr *forge.RunFailedError
		var rejected *forge.RequestRejectedError
		switch v := verdict.(type) {
		case forge.GuardCalls:
			got = "calls"
			if len(v.Calls) != len(want.Calls) && want.Calls != nil {
				t.Errorf("step %d: %d calls, want %d", i, len(v.Calls), len(want.Calls))
				break
			}
			for j, w := range want.Calls {
				call := v.Calls[j]
				var args any
				if err := json.Unmarshal(call.Arguments, &args); err != nil {
					t.Fatal(err)
				}
				paths := []string{}
				for _, co := range call.Coercions {
					paths = append(paths, co.GetPath())
				}
				if (w.ID != nil && *w.ID != call.CallID) || (w.Name != nil && *w.Name != call.ToolName) ||
					(w.Args != nil && !reflect.DeepEqual(w.Args, args)) ||
					(w.Coercions != nil && !reflect.DeepEqual(*w.Coercions, paths)) {
					t.Errorf("step %d: call %d = %s %s %s coercions %v, want %s", i, j, call.CallID, call.ToolName, call.Arguments, paths, mustJSON(w))
				}
			}
		case forge.GuardRetry:
			got = "retry"
			types := []string{}
			for _, m := range v.Messages {
				types = append(types, typeName(m.GetType()))
			}
			if want.Attempt != nil && *want.Attempt != v.Attempt {
				t.Errorf("step %d: attempt %d, want %d", i, v.Attempt, *want.Attempt)
			}
			if want.MessageTypes != nil && !reflect.DeepEqual(want.MessageTypes, types) {
				t.Errorf("step %d: message_types %v, want %v", i, types, want.MessageTypes)
			}
			if !strings.Contains(v.Reason, want.ReasonContains) {
				t.Errorf("step %d: reason %q lacks %q", i, v.Reason, want.ReasonContains)
			}
		case forge.GuardDone:
			got = "done"
			if (want.TerminalTool != nil && *want.TerminalTool != v.TerminalTool) ||
				(want.Result != nil && *want.Result != v.Result) ||
				(want.TerminalCallID != nil && *want.TerminalCallID != v.TerminalCallID) {
				t.Errorf("step %d: done %+v, want %s", i, v, mustJSON(want))
			}
		case nil:
			switch {
			case errors.As(err, &runErr):
				got = "failed"
				checkTypedError(t, err, runErr.Reason)
				if want.FailureReason != nil && *want.FailureReason != string(runErr.Reason) {
					t.Errorf("step %d: failure_reason %s, want %s", i, runErr.Reason, *want.FailureReason)
				}
				for k, val := range want.Details {
					if runErr.Details[k] != val {
						t.Errorf("step %d: details[%q] = %q, want %q", i, k, runErr.Details[k], val)
					}
				}
			case errors.As(err, &rejected):
				got = "rejected"
				code := strings.ToUpper(strings.ReplaceAll(codeSnake(rejected.Code.String()), "CANCELED", "CANCELLED"))
				if (want.Code != nil && *want.Code != code) || (want.Reason != nil && *want.Reason != rejected.Reason) ||
					(want.Field != nil && *want.Field != rejected.Field) {
					t.Errorf("step %d: rejected %s %s (%s), want %s", i, code, rejected.Reason, rejected.Field, mustJSON(want))
				}
			default:
				t.Fatalf("step %d: %v", i, err)
			}
		}
		if got != want.Verdict {
			t.Fatalf("step %d: verdict %s (err %v), want %s", i, got, err, want.Verdict)
		}
		// Carry the conversation on as a caller's loop would.
		switch v := verdict.(type) {
		case forge.GuardRetry:
			history = append(history, v.Messages...)
		case forge.GuardCalls:
			if step.Results == nil {
				if i != len(c.Steps)-1 {
					t.Fatalf("step %d: a calls verdict needs results", i)
				}
				continue
			}
			if len(step.Results) != len(v.Calls) {
				t.Fatalf("step %d: %d results for %d calls", i, len(step.Results), len(v.Calls))
			}
			history = append(history, v.Message)
			for j, call := range v.Calls {
				var callErr error
				if r := step.Results[j]; r.Error != nil {
					callErr = errors.New(*r.Error)
				}
				history = append(history, call.ResultMessage(step.Results[j].Output, callErr))
			}
		}
	}
}

// codeSnake turns a gRPC code name ("InvalidArgument") into the suite's
// spelling ("INVALID_ARGUMENT").
func codeSnake(name string) string {
	var b strings.Builder
	for i, r := range name {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	return b.String()
}
