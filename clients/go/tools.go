package forge

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"

	"github.com/invopop/jsonschema"
)

// Tool is a function the model may call: its name, description and JSON
// Schema as the server sees them, plus the Go function that runs it.
type Tool struct {
	// Name matches ^[A-Za-z_][A-Za-z0-9_.-]{0,63}$ and is unique within the
	// workflow.
	Name string
	// Description tells the model what the tool does.
	Description string
	// Schema is the JSON Schema (draft 2020-12) of the arguments object.
	Schema json.RawMessage
	// Prerequisites are tools the model must have called before this one.
	Prerequisites []Prerequisite
	// Destructive marks a tool that deletes, overwrites or otherwise changes
	// something that cannot be undone (MCP's destructiveHint); see
	// [AsDestructive].
	Destructive bool
	// ReadOnly marks a tool that only reads (MCP's readOnlyHint); see
	// [AsReadOnly].
	ReadOnly bool
	// Idempotent marks a tool that, called twice with the same arguments,
	// does what calling it once does (MCP's idempotentHint); see
	// [AsIdempotent].
	Idempotent bool

	required bool
	terminal bool
	call     func(ctx context.Context, args json.RawMessage) (any, error)
}

// Prerequisite says "before calling this tool, the model must have called
// Tool"; with MatchArg set, that earlier call must also have had the same
// value for the argument MatchArg.
type Prerequisite struct {
	Tool     string
	MatchArg string
}

// ToolOption configures a tool at registration.
type ToolOption func(*Tool)

// AsRequired marks the tool as a required step (see [Workflow.Require]).
func AsRequired() ToolOption { return func(t *Tool) { t.required = true } }

// AsTerminal marks the tool as terminal (see [Workflow.Terminal]).
func AsTerminal() ToolOption { return func(t *Tool) { t.terminal = true } }

// AsDestructive marks the tool as destructive: it deletes, overwrites or
// otherwise changes something that cannot be undone (MCP's destructiveHint).
// Unless [Guardrails.DisableDestructivePolicy] is set, the server offers such
// a tool only when the user's own words ask for it and runs its calls alone,
// never batched with other calls; with [WithApproveDestructiveCalls] it also
// asks the run's [Approver] before each call.
func AsDestructive() ToolOption { return func(t *Tool) { t.Destructive = true } }

// AsReadOnly marks the tool as read-only: it only reads, so calling it again
// changes nothing (MCP's readOnlyHint). When a call returns a
// [*ToolUnreachableError] (its answer never came back: a lost connection, a
// timeout in transit), the server makes the call once more, with call id
// "<id>.retry", before the model sees the error. A tool that is neither
// read-only nor idempotent is never called twice by the server: the model is
// told that the call's effect is unknown.
func AsReadOnly() ToolOption { return func(t *Tool) { t.ReadOnly = true } }

// AsIdempotent marks the tool as idempotent: calling it twice with the same
// arguments does what calling it once does (MCP's idempotentHint). Like a
// read-only tool ([AsReadOnly]), its call is made once more by the server
// when it returns a [*ToolUnreachableError].
func AsIdempotent() ToolOption { return func(t *Tool) { t.Idempotent = true } }

// After makes the tool callable only once each of tools has been called.
func After(tools ...string) ToolOption {
	return func(t *Tool) {
		for _, name := range tools {
			t.Prerequisites = append(t.Prerequisites, Prerequisite{Tool: name})
		}
	}
}

// AfterSame makes the tool callable only after tool was called with the same
// value for the argument arg, e.g. AfterSame("read_file", "path") on
// edit_file.
func AfterSame(tool, arg string) ToolOption {
	return func(t *Tool) {
		t.Prerequisites = append(t.Prerequisites, Prerequisite{Tool: tool, MatchArg: arg})
	}
}

// AddTool registers fn as a tool of w and returns it.
//
// In must be a struct (or a pointer to one): its JSON Schema is derived with
// github.com/invopop/jsonschema, so field names follow `json` tags, fields
// without omitempty are required and `jsonschema:"description=..."` tags
// describe them (`jsonschema_description:"..."` for text with commas; other
// keywords such as enum=, minimum= work too). The arguments of each call are decoded into a fresh In before
// fn runs; a decoding failure is reported to the model as a tool error
// ([*ArgumentError]). fn's ctx is cancelled when the run ends or is cancelled,
// the stream breaks (unless the run is reattached, see [WithReattach]: then
// fn goes on and runs once per call id), or the server stops waiting for the
// call.
//
// A string result is sent as is; other values are JSON-encoded, a nil result
// is sent as "". Returning an error reports a tool error to the model (use
// [Resolutionf] for "valid arguments, nothing found", [Unreachablef] for
// "what the tool calls could not be reached"); a panic is recovered and
// reported as a tool error too.
//
// AddTool panics if In is not a struct or the name is already taken, like
// other registration functions of the standard library.
func AddTool[In, Out any](w *Workflow, name, description string, fn func(context.Context, In) (Out, error), opts ...ToolOption) *Tool {
	schema, err := schemaOf(reflect.TypeFor[In]())
	if err != nil {
		panic(fmt.Sprintf("forge: tool %q: %v", name, err))
	}
	t := &Tool{Name: name, Description: description, Schema: schema}
	t.call = func(ctx context.Context, args json.RawMessage) (any, error) {
		var in In
		if err := decodeArgs(args, &in); err != nil {
			return nil, &ArgumentError{Tool: name, Err: err}
		}
		return fn(ctx, in)
	}
	return w.add(t, opts)
}

// AddSchemaTool registers a tool declared by a raw JSON Schema (an object
// schema; empty means "no arguments"). fn receives the arguments object as
// JSON text, already validated against the schema by the server. Results and
// errors are handled as for [AddTool]. It panics if schema is not a JSON
// object or the name is already taken.
func AddSchemaTool[Out any](w *Workflow, name, description string, schema json.RawMessage, fn func(context.Context, json.RawMessage) (Out, error), opts ...ToolOption) *Tool {
	if len(bytes.TrimSpace(schema)) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var probe map[string]any
	if err := json.Unmarshal(schema, &probe); err != nil {
		panic(fmt.Sprintf("forge: tool %q: the schema is not a JSON object: %v", name, err))
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, schema); err != nil {
		panic(fmt.Sprintf("forge: tool %q: %v", name, err))
	}
	t := &Tool{Name: name, Description: description, Schema: compact.Bytes()}
	t.call = func(ctx context.Context, args json.RawMessage) (any, error) {
		if len(bytes.TrimSpace(args)) == 0 {
			args = json.RawMessage("{}")
		}
		return fn(ctx, args)
	}
	return w.add(t, opts)
}

// Call runs the tool's function with the given JSON arguments the way a run
// does: arguments decoded first, panics recovered as [*PanicError]. It is
// useful to test tools without a server.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, &PanicError{Tool: t.Name, Value: r, Stack: debug.Stack()}
		}
	}()
	return t.call(ctx, args)
}

func schemaOf(t reflect.Type) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("the argument type must be a struct, not %s", t)
	}
	r := &jsonschema.Reflector{ExpandedStruct: true, DoNotReference: true, Anonymous: true}
	s := r.ReflectFromType(t)
	s.Version, s.ID = "", ""
	return json.Marshal(s)
}

func decodeArgs(args json.RawMessage, into any) error {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	return json.Unmarshal(args, into)
}

// encodeOutput is what goes over the wire for a tool's return value.
func encodeOutput(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case json.RawMessage:
		return string(x), nil
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice:
		if rv.IsNil() {
			return "", nil
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return "", fmt.Errorf("cannot encode the result as JSON: %w", err)
	}
	return string(bytes.TrimRight(buf.Bytes(), "\n")), nil
}

// ToolCallInfo is the call a tool function is running for, read from its
// context with [ToolCallFromContext].
type ToolCallInfo struct {
	CallID   string
	ToolName string
	RunID    string
	// Iteration is the loop iteration that produced the call.
	Iteration int
}

type toolCallKey struct{}

// ToolCallFromContext returns the call a tool function's ctx belongs to (its
// call id, tool name, run id); ok is false outside a run's tool call (e.g. a
// direct [Tool.Call]). Tool signatures stay as they are.
func ToolCallFromContext(ctx context.Context) (info ToolCallInfo, ok bool) {
	info, ok = ctx.Value(toolCallKey{}).(ToolCallInfo)
	return info, ok
}

func withToolCall(ctx context.Context, info ToolCallInfo) context.Context {
	return context.WithValue(ctx, toolCallKey{}, info)
}
