package forge

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Tools from an MCP server: the tools of a connected *mcp.ClientSession
// (github.com/modelcontextprotocol/go-sdk) registered on a Workflow, their
// annotations honoured. The caller owns the session (starts the server,
// connects, closes it); Forge never connects to an MCP server itself: the
// tools run here, in the SDK, like any other tool.
//
// The tool list is read when AddMCPTools is called: build the workflow (and
// call it) for each run, so that a run started after the server's
// notifications/tools/list_changed sees the new list.

// toolName is what the server accepts as a tool name
// (proto/forge/v1/workflow.proto).
var toolName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]{0,63}$`)

// mcpMaxPages is how many pages of tools/list are followed at most; a server
// whose cursors never end is an error.
const mcpMaxPages = 1000

// MCPTool is one MCP tool as [AddMCPTools] registered it: its Forge name,
// the MCP name it calls and its annotations (after MCP's defaults and the
// caller's overrides).
type MCPTool struct {
	Name        string
	MCPName     string
	Destructive bool
	ReadOnly    bool
	Idempotent  bool
}

// MCPServerError is an MCP server whose tools could not be listed by
// [AddMCPTools]: it is gone, not initialized or did not answer in time.
type MCPServerError struct {
	Msg string
	Err error
}

func (e *MCPServerError) Error() string { return e.Msg }
func (e *MCPServerError) Unwrap() error { return e.Err }

// MCPToolError is the tool error an MCP tool's call reports to the model: an
// isError result (Msg is its content) or a call the MCP session refused (Err
// is the cause). A call that times out or loses its connection is a
// [*ToolUnreachableError] instead.
type MCPToolError struct {
	Tool string // the MCP tool's name
	Msg  string
	Err  error
}

func (e *MCPToolError) Error() string { return e.Msg }
func (e *MCPToolError) Unwrap() error { return e.Err }

// MCPOption configures [AddMCPTools].
type MCPOption func(*mcpOptions)

type mcpOptions struct {
	include     []string
	exclude     []string
	prefix      string
	destructive map[string]bool
	readOnly    map[string]bool
	idempotent  map[string]bool
	timeout     time.Duration
}

// MCPInclude registers only the MCP tools with these names; naming a tool the
// server does not have is an error.
func MCPInclude(names ...string) MCPOption {
	return func(o *mcpOptions) {
		if o.include == nil {
			o.include = []string{}
		}
		o.include = append(o.include, names...)
	}
}

// MCPExclude leaves out the MCP tools with these names.
func MCPExclude(names ...string) MCPOption {
	return func(o *mcpOptions) { o.exclude = append(o.exclude, names...) }
}

// MCPPrefix puts prefix before each Forge tool name (two servers, one
// workflow). The MCP name is still what is called.
func MCPPrefix(prefix string) MCPOption { return func(o *mcpOptions) { o.prefix = prefix } }

// MCPDestructive overrides the annotations of the MCP tool named name:
// destructive or not (see [AsDestructive]), whatever the server says.
func MCPDestructive(name string, destructive bool) MCPOption {
	return func(o *mcpOptions) { o.destructive[name] = destructive }
}

// MCPReadOnly overrides the annotations of the MCP tool named name: read-only
// or not (see [AsReadOnly]), whatever its readOnlyHint says. Unless
// overridden too, a read-only tool is idempotent and not destructive.
func MCPReadOnly(name string, readOnly bool) MCPOption {
	return func(o *mcpOptions) { o.readOnly[name] = readOnly }
}

// MCPIdempotent overrides the annotations of the MCP tool named name:
// idempotent or not (see [AsIdempotent]), whatever its idempotentHint (or
// readOnlyHint) says.
func MCPIdempotent(name string, idempotent bool) MCPOption {
	return func(o *mcpOptions) { o.idempotent[name] = idempotent }
}

// MCPTimeout bounds the listing and each call (default 60 s); a call that
// takes longer is a [*ToolUnreachableError] (see [AddMCPTools]).
func MCPTimeout(d time.Duration) MCPOption { return func(o *mcpOptions) { o.timeout = d } }

// AddMCPTools registers the tools of a connected MCP session on w.
//
// It lists the tools (tools/list, every page) and registers each as a schema
// tool (see [AddSchemaTool]): its inputSchema is the schema, its description
// the description. Calling it does tools/call on session: structured content
// becomes the result as JSON, otherwise the text blocks joined by newlines;
// image, audio and resource content is named in the result (see
// [MCPToolResult]); an isError result is an [*MCPToolError] the model sees.
//
// MCP's defaults apply to the annotations: a tool is destructive (see
// [AsDestructive]) unless its readOnlyHint is true or its destructiveHint is
// false; it is read-only ([AsReadOnly]) when its readOnlyHint is true, and
// idempotent ([AsIdempotent]) when it is read-only or its idempotentHint is
// true. [MCPDestructive], [MCPReadOnly] and [MCPIdempotent] override them per
// tool.
//
// A call that times out ([MCPTimeout]) or loses its connection returns a
// [*ToolUnreachableError] naming the cause (`MCP tool "x" timed out after
// 1s`, `MCP tool "x" lost its connection: ...`): the SDK never calls twice;
// the Forge server makes the call once more (call id "<id>.retry") when the
// tool is read-only or idempotent, and otherwise tells the model that its
// effect is unknown. Either way the run goes on.
//
// It returns an [*MCPServerError] when the tools cannot be listed (the
// session is closed, the server is gone or does not answer in time), and an
// error for a name Forge cannot use, a name in [MCPInclude],
// [MCPDestructive], [MCPReadOnly] or [MCPIdempotent] the server does not
// have, or a clash with a tool already registered; then nothing is
// registered. It returns the registered tools.
func AddMCPTools(ctx context.Context, w *Workflow, session *mcp.ClientSession, opts ...MCPOption) ([]MCPTool, error) {
	o := mcpOptions{
		destructive: map[string]bool{}, readOnly: map[string]bool{}, idempotent: map[string]bool{},
		timeout: 60 * time.Second,
	}
	for _, opt := range opts {
		opt(&o)
	}
	if session == nil {
		return nil, &MCPServerError{Msg: "the MCP session is nil"}
	}
	listed, err := listMCPTools(ctx, session, o.timeout)
	if err != nil {
		return nil, err
	}
	if err := checkMCPNames(listed, &o); err != nil {
		return nil, err
	}
	type pending struct {
		tool *mcp.Tool
		spec MCPTool
	}
	var todo []pending
	for _, t := range listed {
		if o.include != nil && !slices.Contains(o.include, t.Name) {
			continue
		}
		if slices.Contains(o.exclude, t.Name) {
			continue
		}
		name := o.prefix + t.Name
		if !toolName.MatchString(name) {
			return nil, fmt.Errorf("forge: MCP tool %q cannot be a Forge tool named %q (names match %s); leave it out with MCPExclude",
				t.Name, name, toolName)
		}
		if w.Tool(name) != nil || slices.ContainsFunc(todo, func(p pending) bool { return p.spec.Name == name }) {
			return nil, fmt.Errorf("forge: workflow %q already has a tool named %q", w.Name, name)
		}
		todo = append(todo, pending{t, mcpAnnotations(t, name, &o)})
	}
	registered := make([]MCPTool, 0, len(todo))
	for _, p := range todo {
		schema := mcpSchema(p.tool.InputSchema, p.spec.Destructive)
		var toolOpts []ToolOption
		if p.spec.Destructive {
			toolOpts = append(toolOpts, AsDestructive())
		}
		if p.spec.ReadOnly {
			toolOpts = append(toolOpts, AsReadOnly())
		}
		if p.spec.Idempotent {
			toolOpts = append(toolOpts, AsIdempotent())
		}
		AddSchemaTool(w, p.spec.Name, mcpDescription(p.tool), schema, mcpCaller(session, p.spec, o.timeout), toolOpts...)
		registered = append(registered, p.spec)
	}
	return registered, nil
}

// checkMCPNames returns an error naming the tools in MCPInclude and the
// annotation overrides that the MCP server did not list.
func checkMCPNames(listed []*mcp.Tool, o *mcpOptions) error {
	var have []string
	for _, t := range listed {
		have = append(have, t.Name)
	}
	var missing []string
	for _, n := range o.include {
		if !slices.Contains(have, n) && !slices.Contains(missing, n) {
			missing = append(missing, n)
		}
	}
	for _, overrides := range []map[string]bool{o.destructive, o.readOnly, o.idempotent} {
		for n := range overrides {
			if !slices.Contains(have, n) && !slices.Contains(missing, n) {
				missing = append(missing, n)
			}
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		slices.Sort(have)
		list := strings.Join(have, ", ")
		if list == "" {
			list = "none"
		}
		return fmt.Errorf("forge: the MCP server has no tool named %s (it has: %s)", strings.Join(missing, ", "), list)
	}
	return nil
}

func mcpDescription(t *mcp.Tool) string {
	switch {
	case t.Description != "":
		return t.Description
	case t.Title != "":
		return t.Title
	case t.Annotations != nil && t.Annotations.Title != "":
		return t.Annotations.Title
	}
	return t.Name
}

func mcpAnnotations(t *mcp.Tool, name string, o *mcpOptions) MCPTool {
	// MCP's defaults: readOnlyHint false, destructiveHint true, idempotentHint
	// false; destructive and idempotent mean something only when not read-only.
	// An override replaces a hint, and so the defaults that follow from it.
	h := t.Annotations
	readOnly, ok := o.readOnly[t.Name]
	if !ok {
		readOnly = h != nil && h.ReadOnlyHint
	}
	idempotent, ok := o.idempotent[t.Name]
	if !ok {
		idempotent = readOnly || (h != nil && h.IdempotentHint)
	}
	destructive, ok := o.destructive[t.Name]
	if !ok {
		destructive = !readOnly && (h == nil || h.DestructiveHint == nil || *h.DestructiveHint)
	}
	return MCPTool{Name: name, MCPName: t.Name, Destructive: destructive, ReadOnly: readOnly, Idempotent: idempotent}
}

func listMCPTools(ctx context.Context, session *mcp.ClientSession, timeout time.Duration) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var tools []*mcp.Tool
	cursor := ""
	for range mcpMaxPages {
		page, err := session.ListTools(ctx, &mcp.ListToolsParams{Cursor: cursor})
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) {
				return nil, &MCPServerError{Msg: fmt.Sprintf("the MCP server did not list its tools within %s", timeout), Err: err}
			}
			return nil, &MCPServerError{Msg: fmt.Sprintf("the MCP server's tools could not be listed: %v", err), Err: err}
		}
		tools = append(tools, page.Tools...)
		if page.NextCursor == "" {
			return tools, nil
		}
		cursor = page.NextCursor
	}
	return nil, &MCPServerError{Msg: fmt.Sprintf("the MCP server's tool list did not end after %d pages", mcpMaxPages)}
}

func mcpCaller(session *mcp.ClientSession, spec MCPTool, timeout time.Duration) func(context.Context, json.RawMessage) (string, error) {
	return func(ctx context.Context, args json.RawMessage) (string, error) {
		var arguments map[string]any
		if err := json.Unmarshal(args, &arguments); err != nil {
			return "", &ArgumentError{Tool: spec.Name, Err: err}
		}
		callCtx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		result, err := session.CallTool(callCtx, &mcp.CallToolParams{Name: spec.MCPName, Arguments: arguments})
		if err != nil {
			if ctx.Err() != nil {
				return "", err // the run is over or the call abandoned
			}
			// Its effect unknown: the server decides whether to call again.
			if errors.Is(callCtx.Err(), context.DeadlineExceeded) {
				return "", &ToolUnreachableError{Err: err,
					Msg: fmt.Sprintf("MCP tool %q timed out after %s", spec.MCPName, timeout)}
			}
			if errors.Is(err, mcp.ErrConnectionClosed) {
				return "", &ToolUnreachableError{Err: err,
					Msg: fmt.Sprintf("MCP tool %q lost its connection: %v", spec.MCPName, err)}
			}
			return "", &MCPToolError{Tool: spec.MCPName, Err: err,
				Msg: fmt.Sprintf("MCP tool %q failed: %v", spec.MCPName, err)}
		}
		output := MCPToolResult(result)
		if result.IsError {
			if output == "" {
				output = fmt.Sprintf("MCP tool %q reported an error", spec.MCPName)
			}
			return "", &MCPToolError{Tool: spec.MCPName, Msg: output}
		}
		return output, nil
	}
}

// MCPToolResult is the text the model sees for a tools/call result.
// Structured content, when present, as JSON (its text blocks are the same
// value serialized, per MCP); else the text blocks, joined by newlines.
// Content the model cannot read (images, audio, binary resources, resource
// links) is named, never dropped.
func MCPToolResult(result *mcp.CallToolResult) string {
	var parts []string
	structured := result.StructuredContent != nil
	if structured {
		raw, err := encodeOutput(result.StructuredContent)
		if err != nil {
			raw = fmt.Sprintf("[structured content: %v]", err)
		}
		parts = append(parts, raw)
	}
	for _, block := range result.Content {
		switch c := block.(type) {
		case *mcp.TextContent:
			if !structured {
				parts = append(parts, c.Text)
			}
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image content: %s, %d bytes base64]", c.MIMEType, base64.StdEncoding.EncodedLen(len(c.Data))))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio content: %s, %d bytes base64]", c.MIMEType, base64.StdEncoding.EncodedLen(len(c.Data))))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s%s]", c.URI, about(c.Name, c.MIMEType)))
		case *mcp.EmbeddedResource:
			r := c.Resource
			switch {
			case r == nil:
				parts = append(parts, "[resource content]")
			case r.Blob == nil:
				parts = append(parts, fmt.Sprintf("[resource %s%s]\n%s", r.URI, about("", r.MIMEType), r.Text))
			default:
				parts = append(parts, fmt.Sprintf("[resource content: %s%s, %d bytes base64]", r.URI, about("", r.MIMEType), base64.StdEncoding.EncodedLen(len(r.Blob))))
			}
		default: // a content type newer than this SDK
			parts = append(parts, fmt.Sprintf("[%T content]", block))
		}
	}
	return strings.Join(parts, "\n")
}

func about(name, mimeType string) string {
	var details []string
	for _, d := range []string{name, mimeType} {
		if d != "" {
			details = append(details, d)
		}
	}
	if len(details) == 0 {
		return ""
	}
	return " (" + strings.Join(details, ", ") + ")"
}

// mcpSchema is an MCP tool's input schema as JSON, marked with the
// destructive decision its annotations (or the caller's override) made:
// "x-forge-destructive" tells the server the decision is explicit, so it
// does not infer one from the tool's name (forge_core/guardrails/destructive.py).
// nil when the server gave no schema or it does not encode as an object.
func mcpSchema(input any, destructive bool) []byte {
	if input == nil {
		return nil
	}
	raw, err := json.Marshal(input)
	if err != nil {
		return nil
	}
	var fields map[string]any
	if json.Unmarshal(raw, &fields) != nil || fields == nil {
		return raw
	}
	fields["x-forge-destructive"] = destructive
	marked, err := json.Marshal(fields)
	if err != nil {
		return raw
	}
	return marked
}
