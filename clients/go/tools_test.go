package forge_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	forge "github.com/forge-sidecar/forge/clients/go"
)

// Tool registration without a server.

func TestSchemaFromStructTags(t *testing.T) {
	type args struct {
		Path   string   `json:"path" jsonschema:"description=File to read"`
		Lines  int      `json:"lines,omitempty" jsonschema:"minimum=1"`
		Format string   `json:"format,omitempty" jsonschema:"enum=text,enum=hex"`
		Tags   []string `json:"tags,omitempty"`
	}
	wf := forge.NewWorkflow("files", "")
	tool := forge.AddTool(wf, "read_file", "Read a file", func(context.Context, args) (string, error) {
		return "", nil
	}, forge.AfterSame("open_dir", "path"))
	var got map[string]any
	if err := json.Unmarshal(tool.Schema, &got); err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{"format":{"enum":["text","hex"],"type":"string"},` +
		`"lines":{"minimum":1,"type":"integer"},"path":{"description":"File to read","type":"string"},` +
		`"tags":{"items":{"type":"string"},"type":"array"}},"required":["path"],"type":"object"}`
	if b, _ := json.Marshal(got); string(b) != want {
		t.Errorf("schema\n%s\nwant\n%s", b, want)
	}
	if p := tool.Prerequisites; len(p) != 1 || p[0] != (forge.Prerequisite{Tool: "open_dir", MatchArg: "path"}) {
		t.Errorf("prerequisites %v", p)
	}
}

func TestToolCallDecodesArgumentsAndRecoversPanics(t *testing.T) {
	wf := forge.NewWorkflow("w", "")
	tool := forge.AddTool(wf, "greet", "", func(_ context.Context, in *struct {
		Name string `json:"name"`
	}) (string, error) {
		if in.Name == "" {
			panic("no name")
		}
		return "hello " + in.Name, nil
	})
	ctx := context.Background()
	if v, err := tool.Call(ctx, json.RawMessage(`{"name":"Ada"}`)); err != nil || v != "hello Ada" {
		t.Errorf("call = %v, %v", v, err)
	}
	var argErr *forge.ArgumentError
	if _, err := tool.Call(ctx, json.RawMessage(`{"name":42}`)); !errors.As(err, &argErr) {
		t.Errorf("bad arguments: %v", err)
	}
	var panicErr *forge.PanicError
	if _, err := tool.Call(ctx, nil); !errors.As(err, &panicErr) || panicErr.Value != "no name" {
		t.Errorf("panic: %v", err)
	}
}

func TestRegistrationMistakesPanic(t *testing.T) {
	mustPanic := func(what, contains string, f func()) {
		t.Helper()
		defer func() {
			r := recover()
			if msg, _ := r.(string); !strings.Contains(msg, contains) {
				t.Errorf("%s: recovered %v, want a panic mentioning %q", what, r, contains)
			}
		}()
		f()
	}
	wf := forge.NewWorkflow("w", "")
	noop := func(context.Context, struct{}) (string, error) { return "", nil }
	forge.AddTool(wf, "a", "", noop)
	mustPanic("duplicate", "already has a tool", func() { forge.AddTool(wf, "a", "", noop) })
	mustPanic("non-struct", "must be a struct", func() {
		forge.AddTool(wf, "b", "", func(context.Context, string) (string, error) { return "", nil })
	})
	mustPanic("bad schema", "not a JSON object", func() {
		forge.AddSchemaTool(wf, "c", "", json.RawMessage(`[1]`),
			func(context.Context, json.RawMessage) (string, error) { return "", nil })
	})
}

func TestWorkflowRules(t *testing.T) {
	wf := forge.NewWorkflow("w", "")
	noop := func(context.Context, struct{}) (string, error) { return "", nil }
	forge.AddTool(wf, "step", "", noop, forge.AsRequired())
	forge.AddTool(wf, "done", "", noop, forge.AsTerminal())
	wf.Require("step", "other").Terminal("done")
	if got := wf.RequiredSteps(); strings.Join(got, ",") != "step,other" {
		t.Errorf("required %v", got)
	}
	if got := wf.TerminalTools(); strings.Join(got, ",") != "done" {
		t.Errorf("terminal %v", got)
	}
	if len(wf.Tools()) != 2 || wf.Tool("done") == nil || wf.Tool("nope") != nil {
		t.Errorf("tools %v", wf.Tools())
	}
}
