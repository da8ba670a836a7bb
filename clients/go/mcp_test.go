package forge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP servers as tool sources (issue 21): AddMCPTools against a real MCP
// server written with github.com/modelcontextprotocol/go-sdk, connected in
// process (mcp.NewInMemoryTransports), and the real Forge server with a
// scripted model. The MCP server mirrors tests/mcp_server.py.

var orderSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"order_id": map[string]any{"type": "string"}},
	"required":   []any{"order_id"},
}

func hint(b bool) *bool { return &b }

var readOnly = &mcp.ToolAnnotations{ReadOnlyHint: true}

// mcpTools are the MCP server's tools (the go-sdk lists them sorted by name).
var mcpTools = []*mcp.Tool{
	{Name: "lookup_order", Description: "Look up an order by its id.", InputSchema: orderSchema, Annotations: readOnly},
	{Name: "order_status", Description: "The status of an order, as structured data.", InputSchema: orderSchema,
		OutputSchema: map[string]any{"type": "object"}, Annotations: readOnly},
	{Name: "cancel_order", Description: "Cancel an order for good.", InputSchema: orderSchema,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: hint(true)}},
	{Name: "add_note", Description: "Add a note to an order.", InputSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"order_id": map[string]any{"type": "string"}, "note": map[string]any{"type": "string"},
		},
		"required": []any{"order_id", "note"},
	}, Annotations: &mcp.ToolAnnotations{DestructiveHint: hint(false)}},
	{Name: "set_priority", Description: "Set an order's priority.", InputSchema: map[string]any{
		"type": "object",
		"properties": map[string]any{
			"order_id": map[string]any{"type": "string"}, "level": map[string]any{"type": "integer"},
		},
		"required": []any{"order_id", "level"},
	}, Annotations: &mcp.ToolAnnotations{DestructiveHint: hint(false), IdempotentHint: true}},
	{Name: "purge_cache", Description: "Purge the order cache (no annotations: MCP's defaults apply).",
		InputSchema: map[string]any{"type": "object", "properties": map[string]any{}}},
	{Name: "refund", Description: "Refund an order (always fails: the payment system is down).", InputSchema: orderSchema,
		Annotations: &mcp.ToolAnnotations{DestructiveHint: hint(false)}},
	{Name: "slow_report", Description: "A report that takes `seconds` to build.", InputSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"seconds": map[string]any{"type": "number"}},
		"required":   []any{"seconds"},
	}, Annotations: readOnly},
	{Name: "snapshot", Description: "A snapshot of the order page: text, an image, audio and resources.",
		InputSchema: orderSchema, Annotations: readOnly},
}

func allMCPToolNames() []string {
	var names []string
	for _, t := range mcpTools {
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names
}

// allBut is every MCP tool name except name.
func allBut(name string) []string {
	return slices.DeleteFunc(allMCPToolNames(), func(n string) bool { return n == name })
}

func textResult(text string, isError bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
}

func callOrderTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		OrderID string  `json:"order_id"`
		Level   int     `json:"level"`
		Seconds float64 `json:"seconds"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
		return nil, err
	}
	order := args.OrderID
	switch req.Params.Name {
	case "lookup_order":
		return textResult(fmt.Sprintf("order %s: 2 items, shipped", order), false), nil
	case "order_status":
		status := map[string]any{"order_id": order, "status": "shipped", "items": 2}
		raw, _ := json.Marshal(status)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(raw)}}, StructuredContent: status}, nil
	case "cancel_order":
		return textResult(fmt.Sprintf("order %s cancelled", order), false), nil
	case "add_note":
		return textResult("note added to "+order, false), nil
	case "set_priority":
		return textResult(fmt.Sprintf("%s priority %d", order, args.Level), false), nil
	case "purge_cache":
		return textResult("cache purged", false), nil
	case "refund":
		return textResult("payment system unavailable", true), nil
	case "slow_report":
		select {
		case <-time.After(time.Duration(args.Seconds * float64(time.Second))):
			return textResult("report ready", false), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	case "snapshot":
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "order " + order + " page"},
			&mcp.ImageContent{MIMEType: "image/png", Data: append([]byte("\x89PNG\r\n\x1a\n"), make([]byte, 92)...)},
			&mcp.AudioContent{MIMEType: "audio/wav", Data: []byte("RIFF")},
			&mcp.ResourceLink{URI: "file:///orders/receipt.pdf", Name: "receipt", MIMEType: "application/pdf"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "file:///orders/notes.txt", MIMEType: "text/plain", Text: "customer asked for gift wrap"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{
				URI: "file:///orders/label.bin", MIMEType: "application/octet-stream", Blob: []byte("\x00\x01\x02")}},
		}}, nil
	}
	return nil, fmt.Errorf("no tool %s", req.Params.Name)
}

// mcpSession starts the MCP server in process (pageSize tools per page of
// tools/list; 0 is the go-sdk's default) and returns a connected client
// session, closed when the test ends. middleware, if any, wraps the
// client's outgoing requests.
func mcpSession(t *testing.T, pageSize int, middleware ...mcp.Middleware) *mcp.ClientSession {
	t.Helper()
	server := mcp.NewServer(&mcp.Implementation{Name: "orders", Version: "1.0.0"}, &mcp.ServerOptions{PageSize: pageSize})
	for _, tool := range mcpTools {
		server.AddTool(tool, callOrderTool)
	}
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	ctx := context.Background()
	serverSession, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "forge-test", Version: "1.0.0"}, nil)
	client.AddSendingMiddleware(middleware...)
	session, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		session.Close()
		serverSession.Wait()
	})
	return session
}

func ordersWorkflow(name string) *forge.Workflow {
	wf := forge.NewWorkflow(name, "Answer questions about orders.")
	wf.RespondTool = true
	return wf
}

func mustAddMCPTools(t *testing.T, wf *forge.Workflow, session *mcp.ClientSession, opts ...forge.MCPOption) []forge.MCPTool {
	t.Helper()
	tools, err := forge.AddMCPTools(context.Background(), wf, session, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return tools
}

// runMCPScript runs wf once on its own scripted Forge server: the turns of
// script, then respond. It returns the result, the last ToolCallFinished
// per tool and all events.
func runMCPScript(t *testing.T, wf *forge.Workflow, script []any, userMessage string, opts ...forge.RunOption) (*forge.RunResult, map[string]forge.ToolCallFinished, []forge.Event) {
	t.Helper()
	script = append(script, toolCall("respond", map[string]any{"message": "done"}))
	client := dialServer(t, ownScriptedServer(t, map[string][]any{wf.Name: script}))
	rec := &recorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := client.Run(ctx, wf, userMessage, append(opts, forge.WithEvents(rec.add))...)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	finished := map[string]forge.ToolCallFinished{}
	for _, f := range rec.finished() {
		finished[f.ToolName] = f
	}
	return res, finished, rec.events
}

// finishedCalls is the call ids of the ToolCallFinished events per tool, in
// order: a call the server made once more has "<id>" then "<id>.retry".
func finishedCalls(events []forge.Event) map[string][]string {
	calls := map[string][]string{}
	for _, e := range events {
		if f, ok := e.(forge.ToolCallFinished); ok {
			calls[f.ToolName] = append(calls[f.ToolName], f.CallID)
		}
	}
	return calls
}

// retried reports whether ids is one call the server made once more.
func retried(ids []string) bool {
	return len(ids) == 2 && ids[1] == ids[0]+".retry"
}

// toolResults is the content of the last tool message per tool name.
func toolResults(transcript []*forge.Message) map[string]string {
	out := map[string]string{}
	for _, m := range transcript {
		if m.GetRole() == forge.RoleTool {
			out[m.GetToolName()] = m.GetContent()
		}
	}
	return out
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestMCPEveryPageOfToolsBecomesASchemaToolWithItsAnnotations(t *testing.T) {
	session := mcpSession(t, 3)
	first, err := session.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Tools) != 3 || first.NextCursor == "" {
		t.Fatalf("the server did not paginate: %d tools, cursor %q", len(first.Tools), first.NextCursor)
	}
	wf := ordersWorkflow("go_mcp_schema")
	registered := mustAddMCPTools(t, wf, session)
	var names, wfNames, destructive []string
	hints := map[string][2]bool{}
	for _, r := range registered {
		names = append(names, r.Name)
		hints[r.Name] = [2]bool{r.ReadOnly, r.Idempotent}
	}
	for _, tool := range wf.Tools() {
		wfNames = append(wfNames, tool.Name)
		if tool.Destructive {
			destructive = append(destructive, tool.Name)
		}
	}
	if want := allMCPToolNames(); !reflect.DeepEqual(names, want) || !reflect.DeepEqual(wfNames, want) {
		t.Fatalf("registered %v, workflow %v, want %v", names, wfNames, want)
	}
	addNote := wf.Tool("add_note")
	var got, want any
	_ = json.Unmarshal(addNote.Schema, &got)
	raw, _ := json.Marshal(mcpTools[3].InputSchema)
	_ = json.Unmarshal(raw, &want)
	// The MCP schema as written, marked with its explicit destructive decision.
	want.(map[string]any)["x-forge-destructive"] = false
	if !reflect.DeepEqual(got, want) {
		t.Errorf("add_note schema %s, want %s", addNote.Schema, raw)
	}
	if addNote.Description != "Add a note to an order." {
		t.Errorf("add_note description %q", addNote.Description)
	}
	// destructiveHint true, and no annotations at all (MCP's defaults), are
	// destructive; read-only and destructiveHint false are not.
	slices.Sort(destructive)
	if !reflect.DeepEqual(destructive, []string{"cancel_order", "purge_cache"}) {
		t.Errorf("destructive tools %v", destructive)
	}
	for name, want := range map[string][2]bool{
		"lookup_order": {true, true}, "set_priority": {false, true}, "add_note": {false, false},
	} {
		if hints[name] != want {
			t.Errorf("%s (read-only, idempotent) = %v, want %v", name, hints[name], want)
		}
	}
	// ...and reach the workflow's tools (so the server, which retries only
	// these after a lost answer).
	for _, tool := range wf.Tools() {
		if got := [2]bool{tool.ReadOnly, tool.Idempotent}; got != hints[tool.Name] {
			t.Errorf("tool %s (read-only, idempotent) = %v, want %v", tool.Name, got, hints[tool.Name])
		}
	}
}

func TestMCPReadOnlyAndIdempotentHintsAreOverriddenPerTool(t *testing.T) {
	session := mcpSession(t, 0)
	wf := ordersWorkflow("go_mcp_hint_overrides")
	registered := mustAddMCPTools(t, wf, session,
		forge.MCPInclude("lookup_order", "add_note", "set_priority", "purge_cache"),
		forge.MCPReadOnly("add_note", true),
		forge.MCPIdempotent("lookup_order", false), forge.MCPIdempotent("set_priority", false),
		forge.MCPReadOnly("purge_cache", true), forge.MCPDestructive("purge_cache", true))
	hints := map[string][3]bool{}
	for _, r := range registered {
		hints[r.Name] = [3]bool{r.ReadOnly, r.Idempotent, r.Destructive}
	}
	want := map[string][3]bool{
		"lookup_order": {true, false, false},
		"add_note":     {true, true, false}, // read-only, so idempotent too
		"set_priority": {false, false, false},
		"purge_cache":  {true, true, true}, // each override wins
	}
	if !reflect.DeepEqual(hints, want) {
		t.Errorf("(read-only, idempotent, destructive) = %v, want %v", hints, want)
	}
	for _, tool := range wf.Tools() {
		if got := [3]bool{tool.ReadOnly, tool.Idempotent, tool.Destructive}; got != want[tool.Name] {
			t.Errorf("tool %s = %v, want %v", tool.Name, got, want[tool.Name])
		}
	}
	for _, opt := range []forge.MCPOption{forge.MCPReadOnly("nope", true), forge.MCPIdempotent("nope", true)} {
		if _, err := forge.AddMCPTools(context.Background(), ordersWorkflow("x"), session, opt); err == nil ||
			!strings.Contains(err.Error(), "no tool named nope") {
			t.Errorf("err = %v, want one naming nope", err)
		}
	}
}

func TestMCPTextStructuredOtherContentAndIsErrorReachTheModel(t *testing.T) {
	session := mcpSession(t, 0)
	wf := ordersWorkflow("go_mcp_results")
	mustAddMCPTools(t, wf, session)
	res, finished, _ := runMCPScript(t, wf, []any{
		toolCall("lookup_order", map[string]any{"order_id": "A1"}),
		toolCall("order_status", map[string]any{"order_id": "A1"}),
		toolCall("snapshot", map[string]any{"order_id": "A1"}),
		toolCall("refund", map[string]any{"order_id": "A1"}),
	}, "Look into order A1.")
	if res.TerminalTool != "respond" {
		t.Errorf("terminal tool %q", res.TerminalTool)
	}
	if f := finished["lookup_order"]; f.Output != "order A1: 2 items, shipped" || f.Err != nil {
		t.Errorf("lookup_order: %q, %v", f.Output, f.Err)
	}
	var status map[string]any
	if err := json.Unmarshal([]byte(finished["order_status"].Output), &status); err != nil ||
		!reflect.DeepEqual(status, map[string]any{"order_id": "A1", "status": "shipped", "items": float64(2)}) {
		t.Errorf("order_status: %q (%v)", finished["order_status"].Output, err)
	}
	wantSnapshot := []string{
		"order A1 page",
		"[image content: image/png, 136 bytes base64]",
		"[audio content: audio/wav, 8 bytes base64]",
		"[resource link: file:///orders/receipt.pdf (receipt, application/pdf)]",
		"[resource file:///orders/notes.txt (text/plain)]",
		"customer asked for gift wrap",
		"[resource content: file:///orders/label.bin (application/octet-stream), 4 bytes base64]",
	}
	if got := strings.Split(finished["snapshot"].Output, "\n"); !reflect.DeepEqual(got, wantSnapshot) {
		t.Errorf("snapshot:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(wantSnapshot, "\n"))
	}
	refund := finished["refund"]
	var toolErr *forge.MCPToolError
	if refund.Output != "" || !errors.As(refund.Err, &toolErr) || toolErr.Error() != "payment system unavailable" {
		t.Errorf("refund: %q, %v", refund.Output, refund.Err)
	}
	if !strings.Contains(transcriptText(res.Transcript), "payment system unavailable") {
		t.Error("the model never saw the isError result")
	}
}

func TestMCPIncludeExcludeAndPrefixRegisterTwoServersSideBySide(t *testing.T) {
	shop, crm := mcpSession(t, 0), mcpSession(t, 0)
	wf := ordersWorkflow("go_mcp_two_servers")
	a := mustAddMCPTools(t, wf, shop, forge.MCPInclude("lookup_order", "refund"), forge.MCPPrefix("shop_"))
	b := mustAddMCPTools(t, wf, crm, forge.MCPExclude(allBut("lookup_order")...), forge.MCPPrefix("crm."))
	ctx := context.Background()
	for _, bad := range []struct {
		wf   *forge.Workflow
		opts []forge.MCPOption
		want string
	}{
		{wf, []forge.MCPOption{forge.MCPInclude("lookup_order"), forge.MCPPrefix("crm.")}, `already has a tool named "crm.lookup_order"`},
		{ordersWorkflow("x"), []forge.MCPOption{forge.MCPInclude("nope")}, "no tool named nope"},
		{ordersWorkflow("x"), []forge.MCPOption{forge.MCPDestructive("nope", false)}, "no tool named nope"},
		{ordersWorkflow("x"), []forge.MCPOption{forge.MCPPrefix("9/")}, "cannot be a Forge tool named"},
	} {
		before := len(bad.wf.Tools())
		if _, err := forge.AddMCPTools(ctx, bad.wf, crm, bad.opts...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("err = %v, want one containing %q", err, bad.want)
		}
		if len(bad.wf.Tools()) != before {
			t.Errorf("a failed AddMCPTools registered tools: %d, was %d", len(bad.wf.Tools()), before)
		}
	}
	res, finished, _ := runMCPScript(t, wf, []any{
		toolCall("shop_lookup_order", map[string]any{"order_id": "B2"}),
		toolCall("crm.lookup_order", map[string]any{"order_id": "C3"}),
	}, "Look into orders B2 and C3.")
	if got := fmt.Sprint(a); got != "[{shop_lookup_order lookup_order false true true} {shop_refund refund false false false}]" {
		t.Errorf("shop tools %s", got)
	}
	if len(b) != 1 || b[0].Name != "crm.lookup_order" || b[0].MCPName != "lookup_order" {
		t.Errorf("crm tools %+v", b)
	}
	var names []string
	for _, tool := range wf.Tools() {
		names = append(names, tool.Name)
	}
	if !reflect.DeepEqual(names, []string{"shop_lookup_order", "shop_refund", "crm.lookup_order"}) {
		t.Errorf("workflow tools %v", names)
	}
	if res.TerminalTool != "respond" {
		t.Errorf("terminal tool %q", res.TerminalTool)
	}
	if got := finished["shop_lookup_order"].Output; got != "order B2: 2 items, shipped" {
		t.Errorf("shop_lookup_order: %q", got)
	}
	if got := finished["crm.lookup_order"].Output; got != "order C3: 2 items, shipped" {
		t.Errorf("crm.lookup_order: %q", got)
	}
}

func TestMCPDestructiveToolsAskForApprovalUnlessOverridden(t *testing.T) {
	session := mcpSession(t, 0)
	var mu sync.Mutex
	var asked []string
	approve := forge.WithApprover(func(_ context.Context, req forge.ApprovalRequest) (forge.Approval, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.ToolName)
		return forge.Approval{Approved: true}, nil
	})
	script := []any{toolCall("cancel_order", map[string]any{"order_id": "A1"})}

	wf := ordersWorkflow("go_mcp_destructive")
	mustAddMCPTools(t, wf, session)
	_, finished, _ := runMCPScript(t, wf, script, "Cancel order A1.", forge.WithApproveDestructiveCalls(), approve)
	if !reflect.DeepEqual(asked, []string{"cancel_order"}) {
		t.Errorf("approvals asked for %v, want [cancel_order]", asked)
	}
	if got := finished["cancel_order"].Output; got != "order A1 cancelled" {
		t.Errorf("cancel_order: %q", got)
	}

	relaxed := ordersWorkflow("go_mcp_destructive_relaxed")
	mustAddMCPTools(t, relaxed, session, forge.MCPDestructive("cancel_order", false))
	_, finished, events := runMCPScript(t, relaxed, script, "Cancel order A1.", forge.WithApproveDestructiveCalls(), approve)
	if len(asked) != 1 {
		t.Errorf("the override did not reach the workflow: approvals asked for %v", asked)
	}
	for _, e := range events {
		if _, ok := e.(forge.ApprovalRequested); ok {
			t.Errorf("approval requested for a tool overridden as not destructive: %+v", e)
		}
	}
	if got := finished["cancel_order"].Output; got != "order A1 cancelled" {
		t.Errorf("cancel_order: %q", got)
	}
}

func TestMCPTimedOutCallIsAToolErrorAndTheRunGoesOn(t *testing.T) {
	session := mcpSession(t, 0)
	wf := ordersWorkflow("go_mcp_timeout")
	mustAddMCPTools(t, wf, session, forge.MCPTimeout(500*time.Millisecond))
	res, finished, events := runMCPScript(t, wf, []any{
		toolCall("slow_report", map[string]any{"seconds": 5}),
		toolCall("lookup_order", map[string]any{"order_id": "A1"}),
	}, "Build the report and look into order A1.")
	if got := errText(finished["slow_report"].Err); got != `MCP tool "slow_report" timed out after 500ms` {
		t.Errorf("slow_report error %q", got)
	}
	var unreachable *forge.ToolUnreachableError
	if !errors.As(finished["slow_report"].Err, &unreachable) {
		t.Errorf("slow_report error is a %T, not a *ToolUnreachableError", finished["slow_report"].Err)
	}
	if !errors.Is(finished["slow_report"].Err, context.DeadlineExceeded) {
		t.Errorf("slow_report error does not wrap the deadline: %v", finished["slow_report"].Err)
	}
	// Read-only: the server made the call once more before the model saw it.
	if calls := finishedCalls(events)["slow_report"]; !retried(calls) {
		t.Errorf("slow_report calls %v, want one and its retry", calls)
	}
	if got := toolResults(res.Transcript)["slow_report"]; !strings.Contains(got, "'slow_report' was tried twice") {
		t.Errorf("the model read %q", got)
	}
	if got := finished["lookup_order"].Output; got != "order A1: 2 items, shipped" {
		t.Errorf("lookup_order: %q", got)
	}
	if res.TerminalTool != "respond" {
		t.Errorf("terminal tool %q", res.TerminalTool)
	}
}

func TestMCPClosedSessionIsAnErrorBeforeTheRunAndAToolErrorInIt(t *testing.T) {
	session := mcpSession(t, 0)
	wf := ordersWorkflow("go_mcp_closed")
	mustAddMCPTools(t, wf, session)
	if err := session.Close(); err != nil {
		t.Fatal(err)
	}
	_, err := forge.AddMCPTools(context.Background(), ordersWorkflow("x"), session)
	var serverErr *forge.MCPServerError
	if !errors.As(err, &serverErr) || !errors.Is(err, mcp.ErrConnectionClosed) ||
		!strings.HasPrefix(err.Error(), "the MCP server's tools could not be listed: connection closed") {
		t.Fatalf("AddMCPTools on a closed session: %v (%T)", err, err)
	}
	// Tools registered before the session closed fail for the model; the run
	// itself goes on.
	res, finished, events := runMCPScript(t, wf, []any{
		toolCall("lookup_order", map[string]any{"order_id": "A1"}),
		toolCall("add_note", map[string]any{"order_id": "A1", "note": "x"}),
	}, "Look into order A1 and add a note.")
	if res.TerminalTool != "respond" {
		t.Errorf("terminal tool %q", res.TerminalTool)
	}
	lookup, note := errText(finished["lookup_order"].Err), errText(finished["add_note"].Err)
	if !strings.HasPrefix(lookup, `MCP tool "lookup_order" lost its connection: connection closed`) ||
		strings.Contains(lookup, "tried") {
		t.Errorf("lookup_order error %q", lookup)
	}
	if !strings.HasPrefix(note, `MCP tool "add_note" lost its connection: connection closed`) ||
		strings.Contains(note, "tried") {
		t.Errorf("add_note error %q", note)
	}
	for name, err := range map[string]error{"lookup_order": finished["lookup_order"].Err, "add_note": finished["add_note"].Err} {
		var unreachable *forge.ToolUnreachableError
		if !errors.As(err, &unreachable) || !errors.Is(err, mcp.ErrConnectionClosed) {
			t.Errorf("%s error %v (%T): not a *ToolUnreachableError wrapping the closed connection", name, err, err)
		}
	}
	// The read-only lookup was made twice, by the server (a call of its
	// own, "<id>.retry"); the note (neither read-only nor idempotent) once,
	// and the model was told its effect is unknown.
	calls := finishedCalls(events)
	if !retried(calls["lookup_order"]) || len(calls["add_note"]) != 1 {
		t.Errorf("calls %v", calls)
	}
	read := toolResults(res.Transcript)
	if !strings.Contains(read["lookup_order"], "'lookup_order' was tried twice") {
		t.Errorf("the model read for lookup_order %q", read["lookup_order"])
	}
	if !strings.Contains(read["add_note"], "'add_note' was tried once") ||
		!strings.Contains(read["add_note"], "whether it took effect is unknown") {
		t.Errorf("the model read for add_note %q", read["add_note"])
	}
}

func TestMCPOnlyReadOnlyAndIdempotentToolsAreRetriedAfterALostConnection(t *testing.T) {
	// The SDK calls once; the server makes the call once more, under a call
	// id of its own, for the read-only and idempotent tools only.
	// A real session whose first tools/call per tool fails as a lost
	// connection would, before anything is sent.
	var mu sync.Mutex
	attempts := map[string]int{}
	flaky := func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if params, ok := req.GetParams().(*mcp.CallToolParams); ok && method == "tools/call" {
				mu.Lock()
				attempts[params.Name]++
				first := attempts[params.Name] == 1
				mu.Unlock()
				if first {
					return nil, fmt.Errorf("%w: calling %q: the pipe broke", mcp.ErrConnectionClosed, method)
				}
			}
			return next(ctx, method, req)
		}
	}
	session := mcpSession(t, 0, flaky)
	wf := ordersWorkflow("go_mcp_retry")
	mustAddMCPTools(t, wf, session)
	_, finished, events := runMCPScript(t, wf, []any{
		toolCall("lookup_order", map[string]any{"order_id": "A1"}),
		toolCall("set_priority", map[string]any{"order_id": "A1", "level": 2}),
		toolCall("add_note", map[string]any{"order_id": "A1", "note": "fragile"}),
	}, "Look into order A1, raise its priority and note that it is fragile.")
	mu.Lock()
	defer mu.Unlock()
	if want := map[string]int{"lookup_order": 2, "set_priority": 2, "add_note": 1}; !reflect.DeepEqual(attempts, want) {
		t.Errorf("attempts %v, want %v", attempts, want)
	}
	calls := finishedCalls(events)
	if !retried(calls["lookup_order"]) || !retried(calls["set_priority"]) || len(calls["add_note"]) != 1 {
		t.Errorf("calls %v: want lookup_order and set_priority made again as \"<id>.retry\", add_note once", calls)
	}
	if got := finished["lookup_order"].Output; got != "order A1: 2 items, shipped" {
		t.Errorf("lookup_order: %q (%v)", got, finished["lookup_order"].Err)
	}
	if got := finished["set_priority"].Output; got != "A1 priority 2" {
		t.Errorf("set_priority: %q (%v)", got, finished["set_priority"].Err)
	}
	if got := errText(finished["add_note"].Err); got != `MCP tool "add_note" lost its connection: connection closed: calling "tools/call": the pipe broke` {
		t.Errorf("add_note error %q", got)
	}
}

func TestMCPRunAfterToolsListChangedSeesTheNewList(t *testing.T) {
	server := mcp.NewServer(&mcp.Implementation{Name: "orders", Version: "1.0.0"}, nil)
	server.AddTool(mcpTools[0], callOrderTool)
	serverTransport, clientTransport := mcp.NewInMemoryTransports()
	ctx := context.Background()
	serverSession, err := server.Connect(ctx, serverTransport, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan struct{}, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "forge-test", Version: "1.0.0"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} },
	})
	session, err := client.Connect(ctx, clientTransport, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		session.Close()
		serverSession.Wait()
	})
	before := ordersWorkflow("go_mcp_before")
	mustAddMCPTools(t, before, session)
	server.AddTool(mcpTools[1], callOrderTool)
	select {
	case <-changed:
	case <-time.After(5 * time.Second):
		t.Fatal("no notifications/tools/list_changed")
	}
	after := ordersWorkflow("go_mcp_after")
	mustAddMCPTools(t, after, session)
	if before.Tool("order_status") != nil || after.Tool("order_status") == nil {
		t.Fatalf("tools before %d, after %d", len(before.Tools()), len(after.Tools()))
	}
	_, finished, _ := runMCPScript(t, after, []any{toolCall("order_status", map[string]any{"order_id": "A1"})}, "Status of order A1?")
	if got := finished["order_status"].Output; got != `{"items":2,"order_id":"A1","status":"shipped"}` {
		t.Errorf("order_status: %q", got)
	}
}
