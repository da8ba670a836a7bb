package forge

import (
	"fmt"
	"slices"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
)

// Workflow is a set of tools plus the rules the server enforces while the
// model uses them: required steps, terminal tools, prerequisites and
// destructive tools. Build it
// with [NewWorkflow], [AddTool] and [AddSchemaTool]; it is safe to run one
// workflow in many concurrent runs once it is built.
type Workflow struct {
	// Name identifies the workflow in the server's logs (and, for the
	// scripted backend, selects the script).
	Name string
	// Description of the task; the server's default system prompt is built
	// from Name and Description.
	Description string
	// SystemPrompt replaces the server's default prompt when set. It is
	// ignored when the prior messages start with a system message.
	SystemPrompt string
	// RespondTool adds the server's built-in terminal tool
	// respond(message: string), executed by the server itself.
	RespondTool bool
	// ToolOutputSecrets says what happens to a tool output (or error) that
	// holds credentials before the model sees it: [SecretsAllow],
	// [SecretsRedact] or [SecretsBlock]; empty leaves it to the server's
	// --tool-output-secrets. Each screened output is a [ToolOutputScreened]
	// event.
	ToolOutputSecrets SecretsPolicy

	tools    []*Tool
	byName   map[string]*Tool
	required []string
	terminal []string
}

// NewWorkflow returns an empty workflow.
func NewWorkflow(name, description string) *Workflow {
	return &Workflow{Name: name, Description: description, byName: map[string]*Tool{}}
}

// Require marks tools that must each have succeeded once before a terminal
// tool may run. It returns the workflow for chaining.
func (w *Workflow) Require(names ...string) *Workflow {
	w.required = appendNew(w.required, names)
	return w
}

// Terminal marks tools whose successful call ends the run with its result.
// It returns the workflow for chaining.
func (w *Workflow) Terminal(names ...string) *Workflow {
	w.terminal = appendNew(w.terminal, names)
	return w
}

// Tools returns the registered tools in registration order.
func (w *Workflow) Tools() []*Tool { return slices.Clone(w.tools) }

// Tool returns the registered tool with that name, or nil.
func (w *Workflow) Tool(name string) *Tool { return w.byName[name] }

// RequiredSteps returns the tools marked with [Workflow.Require].
func (w *Workflow) RequiredSteps() []string { return slices.Clone(w.required) }

// TerminalTools returns the tools marked with [Workflow.Terminal].
func (w *Workflow) TerminalTools() []string { return slices.Clone(w.terminal) }

func (w *Workflow) add(t *Tool, opts []ToolOption) *Tool {
	if w.byName == nil {
		w.byName = map[string]*Tool{}
	}
	if _, dup := w.byName[t.Name]; dup {
		panic(fmt.Sprintf("forge: workflow %q already has a tool named %q", w.Name, t.Name))
	}
	for _, opt := range opts {
		opt(t)
	}
	if t.required {
		w.Require(t.Name)
	}
	if t.terminal {
		w.Terminal(t.Name)
	}
	w.tools = append(w.tools, t)
	w.byName[t.Name] = t
	return t
}

func (w *Workflow) isTerminal(name string) bool { return slices.Contains(w.terminal, name) }

func (w *Workflow) proto() *forgev1.Workflow {
	specs := make([]*forgev1.ToolSpec, 0, len(w.tools))
	for _, t := range w.tools {
		prereqs := make([]*forgev1.Prerequisite, 0, len(t.Prerequisites))
		for _, p := range t.Prerequisites {
			prereqs = append(prereqs, &forgev1.Prerequisite{Tool: p.Tool, MatchArg: p.MatchArg})
		}
		specs = append(specs, &forgev1.ToolSpec{
			Name:                 t.Name,
			Description:          t.Description,
			ParametersJsonSchema: string(t.Schema),
			Prerequisites:        prereqs,
			Destructive:          t.Destructive,
			ReadOnly:             t.ReadOnly,
			Idempotent:           t.Idempotent,
		})
	}
	return &forgev1.Workflow{
		Name:              w.Name,
		Description:       w.Description,
		Tools:             specs,
		RequiredSteps:     slices.Clone(w.required),
		TerminalTools:     slices.Clone(w.terminal),
		SystemPrompt:      w.SystemPrompt,
		RespondTool:       w.RespondTool,
		ToolOutputSecrets: secretsPolicies[w.ToolOutputSecrets],
	}
}

// SecretsPolicy is a workflow's rule for tool outputs holding secrets.
type SecretsPolicy string

const (
	// SecretsAllow: nothing is scanned.
	SecretsAllow SecretsPolicy = "allow"
	// SecretsRedact: each secret becomes "[REDACTED: <type>]".
	SecretsRedact SecretsPolicy = "redact"
	// SecretsBlock: the model sees only that the output was withheld.
	SecretsBlock SecretsPolicy = "block"
)

var secretsPolicies = map[SecretsPolicy]forgev1.ToolOutputPolicy{
	"":            forgev1.ToolOutputPolicy_TOOL_OUTPUT_POLICY_UNSPECIFIED,
	SecretsAllow:  forgev1.ToolOutputPolicy_TOOL_OUTPUT_POLICY_ALLOW,
	SecretsRedact: forgev1.ToolOutputPolicy_TOOL_OUTPUT_POLICY_REDACT,
	SecretsBlock:  forgev1.ToolOutputPolicy_TOOL_OUTPUT_POLICY_BLOCK,
}

func appendNew(list, names []string) []string {
	for _, n := range names {
		if !slices.Contains(list, n) {
			list = append(list, n)
		}
	}
	return list
}
