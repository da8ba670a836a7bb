package forge_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The language-neutral conformance suite (tests/conformance/README.md): every
// case file runs against the real server with the scripted backend and is
// checked exactly as the Python runner (tests/conformance/test_conformance.py)
// checks it.

type conformanceCase struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Workflow    struct {
		Name         string `json:"name"`
		Description  string `json:"description"`
		SystemPrompt string `json:"system_prompt"`
		Tools        []struct {
			Name          string          `json:"name"`
			Description   string          `json:"description"`
			Parameters    json.RawMessage `json:"parameters"`
			Prerequisites []struct {
				Tool     string `json:"tool"`
				MatchArg string `json:"match_arg"`
			} `json:"prerequisites"`
			Destructive bool `json:"destructive"`
			ReadOnly    bool `json:"read_only"`
			Idempotent  bool `json:"idempotent"`
		} `json:"tools"`
		RequiredSteps []string `json:"required_steps"`
		TerminalTools []string `json:"terminal_tools"`
		RespondTool   bool     `json:"respond_tool"`
	} `json:"workflow"`
	UserMessage   string `json:"user_message"`
	PriorMessages []struct {
		Role      string `json:"role"`
		Type      string `json:"type"`
		Content   string `json:"content"`
		ToolCalls []struct {
			ID        string          `json:"id"`
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"tool_calls"`
		ToolCallID string `json:"tool_call_id"`
		ToolName   string `json:"tool_name"`
	} `json:"prior_messages"`
	Options json.RawMessage `json:"options"`
	Client  struct {
		Tools                map[string][]behaviour `json:"tools"`
		CancelAfterToolCalls *int                   `json:"cancel_after_tool_calls"`
		// Approvals is nil when the case has none: then no approver is set.
		Approvals map[string][]approvalStep `json:"approvals"`
	} `json:"client"`
	Expect map[string]json.RawMessage `json:"expect"`
	// MCP, when present, is the case's MCP server (README, "Tools from an
	// MCP server"); see caseMCP.
	MCP json.RawMessage `json:"mcp"`
}

// caseMCP is a case's `mcp` key as the runner uses it: the tools themselves
// are the case server's business (tests/conformance/mcp_case_server.py).
// Unknown keys fail the case.
type caseMCP struct {
	Tools       json.RawMessage `json:"tools"`
	PageSize    *int            `json:"page_size"`
	Include     []string        `json:"include"` // nil when absent: every tool
	Exclude     []string        `json:"exclude"`
	Prefix      string          `json:"prefix"`
	Destructive map[string]bool `json:"destructive"`
	ReadOnly    map[string]bool `json:"read_only"`
	Idempotent  map[string]bool `json:"idempotent"`
	TimeoutMS   *int            `json:"timeout_ms"`
}

type behaviour struct {
	Returns          *string `json:"returns"`
	Raises           *string `json:"raises"`
	RaisesResolution *string `json:"raises_resolution"`
	// RaisesUnreachable: the SDK's *ToolUnreachableError.
	RaisesUnreachable *string `json:"raises_unreachable"`
	SleepMS           int     `json:"sleep_ms"`
	// ReturnsContext: return "<call id>|<tool name>|same_run" from the
	// call's ToolCallFromContext (the run id compared with the stream's).
	ReturnsContext bool `json:"returns_context"`
}

type approvalStep struct {
	Approve bool   `json:"approve"`
	Reason  string `json:"reason"`
}

// caseOptions are the case's RunOptions. Unknown keys fail the case, so an
// option added to the suite cannot be silently ignored here.
type caseOptions struct {
	MaxIterations           *int     `json:"max_iterations"`
	MaxRetries              *int     `json:"max_retries"`
	MaxToolErrors           *int     `json:"max_tool_errors"`
	Temperature             *float32 `json:"temperature"`
	MaxTokens               *int     `json:"max_tokens"`
	ToolTimeoutMS           *int     `json:"tool_timeout_ms"`
	StreamChunks            bool     `json:"stream_chunks"`
	ParallelToolCalls       bool     `json:"parallel_tool_calls"`
	ReasoningReplay         string   `json:"reasoning_replay"`
	Compaction              string   `json:"compaction"`
	ContextBudget           *int     `json:"context_budget_tokens"`
	Priority                int32    `json:"priority"`
	CancelOnPreempt         bool     `json:"cancel_on_preempt"`
	ApproveDestructiveCalls bool     `json:"approve_destructive_calls"`
	Guardrails              struct {
		DisableRescue              bool   `json:"disable_rescue"`
		DisableRetryNudges         bool   `json:"disable_retry_nudges"`
		DisableStepEnforcement     bool   `json:"disable_step_enforcement"`
		DisableErrorRecovery       bool   `json:"disable_error_recovery"`
		DisableCompaction          bool   `json:"disable_compaction"`
		DisableConstrainedDecoding bool   `json:"disable_constrained_decoding"`
		DisableCoercion            bool   `json:"disable_coercion"`
		DisableRepeatGuard         bool   `json:"disable_repeat_guard"`
		DisableLoopBreaking        bool   `json:"disable_loop_breaking"`
		DisableParameterDocs       bool   `json:"disable_parameter_docs"`
		DisableGrounding           bool   `json:"disable_grounding"`
		DisableToolRelevance       bool   `json:"disable_tool_relevance"`
		DisableDestructivePolicy   bool   `json:"disable_destructive_policy"`
		DisableResultBinding       bool   `json:"disable_result_binding"`
		DisableNumberBounds        bool   `json:"disable_number_bounds"`
		Enforcement                string `json:"enforcement"`
	} `json:"guardrails"`
}

func casesDir(t testing.TB) string {
	return filepath.Join(repoRoot(t), "tests", "conformance", "cases")
}

func TestConformance(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(casesDir(t), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no conformance cases in %s", casesDir(t))
	}
	sort.Strings(files)
	addr := scriptedServer(t)
	ctx := context.Background()
	client, err := forge.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })

	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var c conformanceCase
			if err := json.Unmarshal(raw, &c); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if c.Name != name {
				t.Fatalf("case name %q does not match its file name %q", c.Name, name)
			}
			runCase(t, client, file, &c)
		})
	}
}

// scriptedTools are client-side handlers that follow a case's behaviour lists:
// each call takes the next entry, the last one repeats.
type scriptedTools struct {
	behaviours map[string][]behaviour
	mu         sync.Mutex
	calls      map[string]int
	// stream is the run's stream, set once Start returned (ready closed).
	stream *forge.RunStream
	ready  chan struct{}
}

// contextReply is what a returns_context behaviour returns: what the
// tool's ctx says about its call.
func (s *scriptedTools) contextReply(ctx context.Context) (string, error) {
	info, ok := forge.ToolCallFromContext(ctx)
	if !ok {
		return "", errors.New("a tool function runs without its call in its context")
	}
	select {
	case <-s.ready:
	case <-ctx.Done():
		return "", context.Cause(ctx)
	}
	run := "same_run"
	if info.RunID != s.stream.RunID() {
		run = fmt.Sprintf("run %q", info.RunID)
	}
	return fmt.Sprintf("%s|%s|%s", info.CallID, info.ToolName, run), nil
}

func (s *scriptedTools) handler(name string) func(context.Context, json.RawMessage) (string, error) {
	return func(ctx context.Context, _ json.RawMessage) (string, error) {
		steps := s.behaviours[name]
		if len(steps) == 0 {
			return "", fmt.Errorf("the case has no behaviour for tool %q", name)
		}
		s.mu.Lock()
		index := s.calls[name]
		s.calls[name] = index + 1
		s.mu.Unlock()
		step := steps[min(index, len(steps)-1)]
		if step.SleepMS > 0 {
			select {
			case <-time.After(time.Duration(step.SleepMS) * time.Millisecond):
			case <-ctx.Done():
				return "", context.Cause(ctx)
			}
		}
		switch {
		case step.Raises != nil:
			return "", errors.New(*step.Raises)
		case step.RaisesResolution != nil:
			return "", forge.Resolutionf("%s", *step.RaisesResolution)
		case step.RaisesUnreachable != nil:
			return "", forge.Unreachablef("%s", *step.RaisesUnreachable)
		case step.ReturnsContext:
			return s.contextReply(ctx)
		case step.Returns != nil:
			return *step.Returns, nil
		}
		return "", nil
	}
}

// scriptedApprovals is an approver that follows a case's approval lists per
// tool: each request takes the next entry, the last one repeats.
type scriptedApprovals struct {
	steps map[string][]approvalStep
	mu    sync.Mutex
	seen  map[string]int
}

func (s *scriptedApprovals) approve(_ context.Context, req forge.ApprovalRequest) (forge.Approval, error) {
	steps := s.steps[req.ToolName]
	if len(steps) == 0 {
		return forge.Approval{Reason: "no approval scripted"}, nil
	}
	s.mu.Lock()
	index := s.seen[req.ToolName]
	s.seen[req.ToolName] = index + 1
	s.mu.Unlock()
	step := steps[min(index, len(steps)-1)]
	return forge.Approval{Approved: step.Approve, Reason: step.Reason}, nil
}

// buildWorkflow registers the case's own tools; the required steps and
// terminal tools come later (applySteps), after any MCP tools they may name.
func buildWorkflow(c *conformanceCase, tools *scriptedTools) *forge.Workflow {
	spec := c.Workflow
	wf := forge.NewWorkflow(spec.Name, spec.Description)
	wf.SystemPrompt = spec.SystemPrompt
	wf.RespondTool = spec.RespondTool
	for _, tool := range spec.Tools {
		var opts []forge.ToolOption
		for _, p := range tool.Prerequisites {
			opts = append(opts, forge.AfterSame(p.Tool, p.MatchArg))
		}
		if tool.Destructive {
			opts = append(opts, forge.AsDestructive())
		}
		if tool.ReadOnly {
			opts = append(opts, forge.AsReadOnly())
		}
		if tool.Idempotent {
			opts = append(opts, forge.AsIdempotent())
		}
		forge.AddSchemaTool(wf, tool.Name, tool.Description, tool.Parameters, tools.handler(tool.Name), opts...)
	}
	return wf
}

func applySteps(wf *forge.Workflow, c *conformanceCase) {
	wf.Require(c.Workflow.RequiredSteps...).Terminal(c.Workflow.TerminalTools...)
}

// addCaseMCPTools starts the case's MCP server (mcp_case_server.py, with
// $FORGE_PYTHON) over stdio, connects to it and registers its tools on wf
// with AddMCPTools, as the case's `mcp` key says. The session (and so the
// server process) is closed when the test ends.
func addCaseMCPTools(t *testing.T, wf *forge.Workflow, caseFile string, raw json.RawMessage) {
	t.Helper()
	var spec caseMCP
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&spec); err != nil {
		t.Fatalf("mcp: %v", err)
	}
	root := repoRoot(t)
	cmd := exec.Command(python(root), filepath.Join(root, "tests", "conformance", "mcp_case_server.py"), caseFile)
	stderr, err := os.Create(filepath.Join(t.TempDir(), "mcp_case_server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = stderr
	t.Cleanup(func() {
		stderr.Close()
		if t.Failed() {
			if log, err := os.ReadFile(stderr.Name()); err == nil && len(log) > 0 {
				t.Logf("mcp_case_server.py stderr:\n%s", log)
			}
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "forge-go-conformance", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("mcp: cannot start %s: %v", cmd, err)
	}
	t.Cleanup(func() { session.Close() })
	var opts []forge.MCPOption
	if spec.Include != nil {
		opts = append(opts, forge.MCPInclude(spec.Include...))
	}
	if len(spec.Exclude) > 0 {
		opts = append(opts, forge.MCPExclude(spec.Exclude...))
	}
	if spec.Prefix != "" {
		opts = append(opts, forge.MCPPrefix(spec.Prefix))
	}
	for name, v := range spec.Destructive {
		opts = append(opts, forge.MCPDestructive(name, v))
	}
	for name, v := range spec.ReadOnly {
		opts = append(opts, forge.MCPReadOnly(name, v))
	}
	for name, v := range spec.Idempotent {
		opts = append(opts, forge.MCPIdempotent(name, v))
	}
	if spec.TimeoutMS != nil {
		opts = append(opts, forge.MCPTimeout(time.Duration(*spec.TimeoutMS)*time.Millisecond))
	}
	if _, err := forge.AddMCPTools(ctx, wf, session, opts...); err != nil {
		t.Fatalf("mcp: %v", err)
	}
}

func buildOptions(t *testing.T, raw json.RawMessage) []forge.RunOption {
	t.Helper()
	var o caseOptions
	if len(raw) > 0 {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&o); err != nil {
			t.Fatalf("options: %v", err)
		}
	}
	var opts []forge.RunOption
	if o.MaxIterations != nil {
		opts = append(opts, forge.WithMaxIterations(*o.MaxIterations))
	}
	if o.MaxRetries != nil {
		opts = append(opts, forge.WithMaxRetries(*o.MaxRetries))
	}
	if o.MaxToolErrors != nil {
		opts = append(opts, forge.WithMaxToolErrors(*o.MaxToolErrors))
	}
	if o.Temperature != nil {
		opts = append(opts, forge.WithTemperature(*o.Temperature))
	}
	if o.MaxTokens != nil {
		opts = append(opts, forge.WithMaxTokens(*o.MaxTokens))
	}
	if o.ToolTimeoutMS != nil {
		opts = append(opts, forge.WithToolTimeout(time.Duration(*o.ToolTimeoutMS)*time.Millisecond))
	}
	if o.StreamChunks {
		opts = append(opts, forge.WithStreamChunks())
	}
	if o.ParallelToolCalls {
		opts = append(opts, forge.WithParallelToolCalls())
	}
	if o.ReasoningReplay != "" {
		opts = append(opts, forge.WithReasoningReplay(forge.ReasoningReplay(
			enumValue(t, forgev1.ReasoningReplay_value, "REASONING_REPLAY_", o.ReasoningReplay))))
	}
	if o.Compaction != "" {
		opts = append(opts, forge.WithCompaction(forge.CompactionStrategy(
			enumValue(t, forgev1.CompactionStrategy_value, "COMPACTION_STRATEGY_", o.Compaction))))
	}
	if o.ContextBudget != nil {
		opts = append(opts, forge.WithContextBudget(*o.ContextBudget))
	}
	if o.Priority != 0 {
		opts = append(opts, forge.WithPriority(o.Priority))
	}
	if o.CancelOnPreempt {
		opts = append(opts, forge.WithCancelOnPreempt())
	}
	if o.ApproveDestructiveCalls {
		opts = append(opts, forge.WithApproveDestructiveCalls())
	}
	g := o.Guardrails
	guards := forge.Guardrails{
		DisableRescue:              g.DisableRescue,
		DisableRetryNudges:         g.DisableRetryNudges,
		DisableStepEnforcement:     g.DisableStepEnforcement,
		DisableErrorRecovery:       g.DisableErrorRecovery,
		DisableCompaction:          g.DisableCompaction,
		DisableConstrainedDecoding: g.DisableConstrainedDecoding,
		DisableCoercion:            g.DisableCoercion,
		DisableRepeatGuard:         g.DisableRepeatGuard,
		DisableLoopBreaking:        g.DisableLoopBreaking,
		DisableParameterDocs:       g.DisableParameterDocs,
		DisableGrounding:           g.DisableGrounding,
		DisableToolRelevance:       g.DisableToolRelevance,
		DisableDestructivePolicy:   g.DisableDestructivePolicy,
		DisableResultBinding:       g.DisableResultBinding,
		DisableNumberBounds:        g.DisableNumberBounds,
	}
	if g.Enforcement != "" {
		guards.Enforcement = forge.EnforcementMode(
			enumValue(t, forgev1.EnforcementMode_value, "ENFORCEMENT_MODE_", g.Enforcement))
	}
	return append(opts, forge.WithGuardrails(guards))
}

func enumValue(t *testing.T, values map[string]int32, prefix, name string) int32 {
	t.Helper()
	v, ok := values[prefix+strings.ToUpper(name)]
	if !ok {
		t.Fatalf("unknown enum value %q (%s*)", name, prefix)
	}
	return v
}

func priorMessages(t *testing.T, c *conformanceCase) []*forge.Message {
	var out []*forge.Message
	for _, raw := range c.PriorMessages {
		m := &forge.Message{
			Role:       forge.Role(enumValue(t, forgev1.Role_value, "ROLE_", raw.Role)),
			Type:       forge.MessageType(enumValue(t, forgev1.MessageType_value, "MESSAGE_TYPE_", raw.Type)),
			Content:    raw.Content,
			ToolCallId: raw.ToolCallID,
			ToolName:   raw.ToolName,
		}
		for _, call := range raw.ToolCalls {
			m.ToolCalls = append(m.ToolCalls, &forge.ToolCall{
				Id: call.ID, Name: call.Name, ArgumentsJson: string(call.Arguments),
			})
		}
		out = append(out, m)
	}
	return out
}

type recordedCall struct {
	Name string `json:"name"`
	Args any    `json:"args"`
}

type outcome struct {
	Outcome       string
	TerminalTool  string
	Result        string
	FailureReason string
	Details       map[string]string
	Iterations    int
	Transcript    []*forge.Message
}

func runCase(t *testing.T, client *forge.Client, file string, c *conformanceCase) {
	tools := &scriptedTools{behaviours: c.Client.Tools, calls: map[string]int{}, ready: make(chan struct{})}
	wf := buildWorkflow(c, tools)
	if c.MCP != nil {
		addCaseMCPTools(t, wf, file, c.MCP)
	}
	// After the MCP tools: steps and terminal tools may name them.
	applySteps(wf, c)
	opts := append(buildOptions(t, c.Options), forge.WithPriorMessages(priorMessages(t, c)...))
	if c.Client.Approvals != nil {
		approvals := &scriptedApprovals{steps: c.Client.Approvals, seen: map[string]int{}}
		opts = append(opts, forge.WithApprover(approvals.approve))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	stream, err := client.Start(ctx, wf, c.UserMessage, opts...)
	if err != nil {
		t.Fatal(err)
	}
	tools.stream = stream
	close(tools.ready)
	toolCalls := []recordedCall{}
	approvalRequests := []recordedCall{}
	messageTypes := []string{}
	surfaced := []canonicalEvent{}
	for event := range stream.Events() {
		if ce, ok := canonical(t, event); ok {
			surfaced = append(surfaced, ce)
		}
		switch e := event.(type) {
		case forge.ToolCallStarted:
			var args any
			if err := json.Unmarshal(e.Arguments, &args); err != nil {
				t.Errorf("tool call %s: arguments are not JSON: %v", e.ToolName, err)
			}
			toolCalls = append(toolCalls, recordedCall{Name: e.ToolName, Args: args})
			if n := c.Client.CancelAfterToolCalls; n != nil && len(toolCalls) == *n {
				stream.Cancel("conformance case asked to cancel")
			}
		case forge.ApprovalRequested:
			approvalRequests = append(approvalRequests, recordedCall{Name: e.ToolName, Args: map[string]any(e.Arguments)})
		case forge.MessageAppended:
			messageTypes = append(messageTypes, typeName(e.Message.GetType()))
		}
	}
	res, err := stream.Wait()
	var got outcome
	var runErr *forge.RunFailedError
	switch {
	case err == nil:
		got = outcome{
			Outcome:      "completed",
			TerminalTool: res.TerminalTool,
			Result:       res.Output,
			Iterations:   res.Iterations,
			Transcript:   res.Transcript,
		}
		if n := len(surfaced); n == 0 || surfaced[n-1].Kind != "run_completed" {
			t.Errorf("the run's last event is not run_completed: %v", surfaced)
		}
	case errors.As(err, &runErr):
		got = outcome{
			Outcome:       "failed",
			FailureReason: string(runErr.Reason),
			Details:       runErr.Details,
			Iterations:    runErr.Iterations,
			Transcript:    runErr.Transcript,
		}
		checkTypedError(t, err, runErr.Reason)
		var forgeErr forge.ForgeError
		if !errors.As(err, &forgeErr) {
			t.Errorf("a run's error is no forge.ForgeError: %T", err)
		}
	default:
		t.Fatalf("the run ended with an error that is no RunFailedError: %v", err)
	}

	expect := func(key string, into any) bool {
		raw, ok := c.Expect[key]
		if !ok {
			return false
		}
		if err := json.Unmarshal(raw, into); err != nil {
			t.Fatalf("expect.%s: %v", key, err)
		}
		return true
	}
	var wantOutcome string
	if !expect("outcome", &wantOutcome) {
		t.Fatal("the case has no expect.outcome")
	}
	if got.Outcome != wantOutcome {
		t.Fatalf("outcome = %s (err %v), want %s", got.Outcome, err, wantOutcome)
	}
	var s string
	var n int
	if expect("terminal_tool", &s) && got.TerminalTool != s {
		t.Errorf("terminal_tool = %q, want %q", got.TerminalTool, s)
	}
	if expect("result", &s) && got.Result != s {
		t.Errorf("result = %q, want %q", got.Result, s)
	}
	if expect("failure_reason", &s) && got.FailureReason != s {
		t.Errorf("failure_reason = %q, want %q", got.FailureReason, s)
	}
	if expect("iterations", &n) && got.Iterations != n {
		t.Errorf("iterations = %d, want %d", got.Iterations, n)
	}
	var details map[string]string
	if expect("details", &details) {
		for k, v := range details {
			if got.Details[k] != v {
				t.Errorf("details[%q] = %q, want %q (details %v)", k, got.Details[k], v, got.Details)
			}
		}
	}
	var wantCalls []recordedCall
	if expect("tool_calls", &wantCalls) {
		if wantCalls == nil {
			wantCalls = []recordedCall{}
		}
		if !reflect.DeepEqual(toolCalls, wantCalls) {
			t.Errorf("tool_calls = %s, want %s", mustJSON(toolCalls), mustJSON(wantCalls))
		}
	}
	var wantApprovals []recordedCall
	if expect("approval_requests", &wantApprovals) {
		if wantApprovals == nil {
			wantApprovals = []recordedCall{}
		}
		if !reflect.DeepEqual(approvalRequests, wantApprovals) {
			t.Errorf("approval_requests = %s, want %s", mustJSON(approvalRequests), mustJSON(wantApprovals))
		}
	}
	var wantTypes []string
	if expect("message_types", &wantTypes) {
		if wantTypes == nil {
			wantTypes = []string{}
		}
		if !reflect.DeepEqual(messageTypes, wantTypes) {
			t.Errorf("message_types = %v, want %v", messageTypes, wantTypes)
		}
	}
	var wantEvents []canonicalEvent
	if expect("events", &wantEvents) {
		if msg := matchEvents(wantEvents, surfaced); msg != "" {
			t.Errorf("expect.events: %s\nsurfaced events:\n%s", msg, eventLines(surfaced))
		}
	}
	var contents []string
	for _, m := range got.Transcript {
		contents = append(contents, m.GetContent())
	}
	joined := strings.Join(contents, "\n")
	var needles []string
	if expect("transcript_contains", &needles) {
		for _, needle := range needles {
			if !strings.Contains(joined, needle) {
				t.Errorf("no transcript message contains %q", needle)
			}
		}
	}
}

// canonicalEvent is an event under the conformance suite's SDK-neutral names
// (tests/conformance/README.md, "Events").
type canonicalEvent struct {
	Kind   string         `json:"kind"`
	Fields map[string]any `json:"fields"`
}

// canonicalFields are the kinds the Go SDK surfaces and the fields of each
// (kinds without canonical fields can be expected by kind only);
// an expected kind or field outside them fails the case rather than never
// matching silently.
var canonicalFields = map[string][]string{
	"run_started":          {"run_id"},
	"chunk":                {},
	"tool_call_started":    {"call_id", "tool_name", "arguments"},
	"tool_call_finished":   {"call_id", "tool_name", "error"},
	"tool_call_cancelled":  {"call_id", "reason"},
	"approval_requested":   {"call_id", "tool_name", "arguments"},
	"approval_decided":     {"call_id", "tool_name", "approved"},
	"tool_output_screened": {},
	"message_appended":     {"index", "type"},
	"compacted":            {"messages_before", "messages_after"},
	"queued":               {},
	"run_completed":        {"terminal_tool"},
}

// canonical turns a Go event into its canonical kind and fields. Field values
// go through JSON so that they compare with the case file's (numbers as
// float64, arguments as decoded JSON).
func canonical(t *testing.T, event forge.Event) (canonicalEvent, bool) {
	t.Helper()
	var kind string
	var fields map[string]any
	switch e := event.(type) {
	case forge.RunStarted:
		kind, fields = "run_started", map[string]any{"run_id": e.RunID}
	case forge.Chunk:
		kind, fields = "chunk", map[string]any{}
	case forge.ToolCallStarted:
		kind, fields = "tool_call_started", map[string]any{
			"call_id": e.CallID, "tool_name": e.ToolName, "arguments": e.Arguments,
		}
	case forge.ToolCallFinished:
		kind, fields = "tool_call_finished", map[string]any{
			"call_id": e.CallID, "tool_name": e.ToolName, "error": e.Err != nil,
		}
	case forge.ToolCallCancelled:
		kind, fields = "tool_call_cancelled", map[string]any{"call_id": e.CallID, "reason": e.Reason}
	case forge.ApprovalRequested:
		kind, fields = "approval_requested", map[string]any{
			"call_id": e.CallID, "tool_name": e.ToolName, "arguments": e.Arguments,
		}
	case forge.ApprovalDecided:
		kind, fields = "approval_decided", map[string]any{
			"call_id": e.CallID, "tool_name": e.ToolName, "approved": e.Approved,
		}
	case forge.ToolOutputScreened:
		kind, fields = "tool_output_screened", map[string]any{}
	case forge.MessageAppended:
		kind, fields = "message_appended", map[string]any{
			"index": e.Index, "type": typeName(e.Message.GetType()),
		}
	case forge.Compacted:
		kind, fields = "compacted", map[string]any{
			"messages_before": e.MessagesBefore, "messages_after": e.MessagesAfter,
		}
	case forge.Queued:
		kind, fields = "queued", map[string]any{}
	case forge.RunCompleted:
		kind, fields = "run_completed", map[string]any{"terminal_tool": e.Result.TerminalTool}
	default:
		t.Errorf("event %T has no canonical kind", event)
		return canonicalEvent{}, false
	}
	raw, err := json.Marshal(fields)
	if err != nil {
		t.Fatalf("%s fields: %v", kind, err)
	}
	var normalised map[string]any
	if err := json.Unmarshal(raw, &normalised); err != nil {
		t.Fatalf("%s fields: %v", kind, err)
	}
	return canonicalEvent{Kind: kind, Fields: normalised}, true
}

// matchEvents checks that want is an ordered subsequence of got: an entry
// matches when the kind is equal and every expected field is present and
// deep-equal. It returns "" on success, else what did not match.
func matchEvents(want, got []canonicalEvent) string {
	next := 0
	for i, w := range want {
		known, ok := canonicalFields[w.Kind]
		if !ok {
			return fmt.Sprintf("entry %d: the Go SDK surfaces no %q events", i, w.Kind)
		}
		for field := range w.Fields {
			if !slices.Contains(known, field) {
				return fmt.Sprintf("entry %d: the Go SDK's %s events have no field %q", i, w.Kind, field)
			}
		}
		found := false
		for next < len(got) {
			g := got[next]
			next++
			if g.Kind == w.Kind && fieldsMatch(w.Fields, g.Fields) {
				found = true
				break
			}
		}
		if !found {
			return fmt.Sprintf("entry %d %s not found in order", i, mustJSON(w))
		}
	}
	return ""
}

func fieldsMatch(want, got map[string]any) bool {
	for k, v := range want {
		g, ok := got[k]
		if !ok || !reflect.DeepEqual(g, v) {
			return false
		}
	}
	return true
}

func eventLines(events []canonicalEvent) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("  " + mustJSON(e) + "\n")
	}
	return b.String()
}

// checkTypedError: each failure reason has its own error type.
func checkTypedError(t *testing.T, err error, reason forge.FailureReason) {
	t.Helper()
	var ok bool
	switch reason {
	case forge.ReasonToolCall:
		ok = errors.As(err, new(*forge.ToolCallError))
	case forge.ReasonToolExecution:
		ok = errors.As(err, new(*forge.ToolExecutionError))
	case forge.ReasonStepEnforcement:
		ok = errors.As(err, new(*forge.StepEnforcementError))
	case forge.ReasonPrerequisite:
		ok = errors.As(err, new(*forge.PrerequisiteError))
	case forge.ReasonMaxIterations:
		ok = errors.As(err, new(*forge.MaxIterationsError))
	case forge.ReasonCancelled:
		ok = errors.As(err, new(*forge.WorkflowCancelledError))
	case forge.ReasonBackend:
		ok = errors.As(err, new(*forge.BackendError))
	case forge.ReasonContextBudgetExceeded:
		ok = errors.As(err, new(*forge.ContextBudgetExceededError))
	case forge.ReasonInternal:
		ok = errors.As(err, new(*forge.InternalServerError))
	case forge.ReasonShuttingDown:
		ok = errors.As(err, new(*forge.ShuttingDownError))
	}
	if !ok {
		t.Errorf("a %s failure is a %T, not its typed error", reason, err)
	}
}

func typeName(t forge.MessageType) string {
	return strings.ToLower(strings.TrimPrefix(t.String(), "MESSAGE_TYPE_"))
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestConformanceEventMatcher(t *testing.T) {
	call := func(extra string, v any) map[string]any {
		return map[string]any{"call_id": "c1", "tool_name": "t", extra: v}
	}
	got := []canonicalEvent{
		{Kind: "run_started", Fields: map[string]any{"run_id": "r"}},
		{Kind: "tool_call_started", Fields: call("arguments", map[string]any{"a": []any{1.0}})},
		{Kind: "tool_call_finished", Fields: call("error", false)},
	}
	started := canonicalEvent{Kind: "tool_call_started", Fields: map[string]any{"arguments": map[string]any{"a": []any{1.0}}}}
	finished := canonicalEvent{Kind: "tool_call_finished", Fields: map[string]any{"error": false}}
	for _, tc := range []struct {
		want    []canonicalEvent
		failure string
	}{
		{nil, ""},
		{[]canonicalEvent{started, finished}, ""},
		{[]canonicalEvent{finished, started}, "entry 1"},
		{[]canonicalEvent{{Kind: "run_started", Fields: map[string]any{"run_id": "x"}}}, "entry 0"},
		{[]canonicalEvent{{Kind: "tool_call"}}, `no "tool_call" events`},
		{[]canonicalEvent{{Kind: "tool_call_finished", Fields: map[string]any{"output": ""}}}, `no field "output"`},
	} {
		msg := matchEvents(tc.want, got)
		if (tc.failure == "") != (msg == "") || !strings.Contains(msg, tc.failure) {
			t.Errorf("matchEvents(%s) = %q, want a message with %q", mustJSON(tc.want), msg, tc.failure)
		}
	}
}
