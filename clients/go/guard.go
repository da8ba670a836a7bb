package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
	"google.golang.org/protobuf/proto"
)

// ToolErrorPrefix starts the content of a tool result that records a failed
// call (see [GuardedCall.ResultMessage]): the server counts such a result as
// an error, not an output.
const ToolErrorPrefix = "[ToolError] "

// ModelReply is the model's reply to a conversation, as a caller with its own
// model calls got it: its raw Text (read the way Run reads a model's text,
// rescue included), or the ToolCalls a native tool-calling API returned. The
// zero value asks [Client.Guard] only whether the run is done (the terminal
// tool's result last in the conversation).
type ModelReply struct {
	Text      string
	ToolCalls []*ToolCall
}

// GuardVerdict is what [Client.Guard] decided: [GuardCalls], [GuardRetry] or
// [GuardDone]. A run the guard gives up on is an error instead, as from
// [Client.Run].
type GuardVerdict interface {
	isGuardVerdict()
}

// GuardedCall is one validated, coerced tool call for the caller to run.
type GuardedCall struct {
	// CallID is the id the conversation records (the model's own id where
	// it gave one).
	CallID   string
	ToolName string
	// Arguments is the arguments object as JSON, validated against the
	// tool's schema.
	Arguments json.RawMessage
	// Coercions are near-miss arguments the server fixed before validation.
	Coercions []*Coercion
}

// ResultMessage is the tool message recording this call's result for the
// next [Client.Guard] request: output, or when err is not nil a failed call
// (ToolErrorPrefix + err's message).
func (c GuardedCall) ResultMessage(output string, err error) *Message {
	if err != nil {
		output = ToolErrorPrefix + err.Error()
	}
	return &Message{
		Role:       RoleTool,
		Type:       MessageToolResult,
		Content:    output,
		ToolCallId: c.CallID,
		ToolName:   c.ToolName,
	}
}

// GuardCalls: run Calls, then append Message and each call's
// [GuardedCall.ResultMessage] to the conversation.
type GuardCalls struct {
	Calls []GuardedCall
	// Message is the assistant message recording the calls, with their ids.
	Message *Message
}

// GuardRetry: run nothing; append Messages (the rejected attempt and its
// correction, all transient) and ask the model again.
type GuardRetry struct {
	Messages []*Message
	// Reason says why the reply was rejected, in words.
	Reason string
	// Attempt counts the consecutive rejected attempts so far; past the retry
	// budget the next rejection is a [*RunFailedError] instead.
	Attempt int
}

// GuardDone: the terminal tool returned; the run is complete.
type GuardDone struct {
	TerminalTool   string
	Result         string
	TerminalCallID string
}

func (GuardCalls) isGuardVerdict() {}
func (GuardRetry) isGuardVerdict() {}
func (GuardDone) isGuardVerdict()  {}

// Guard asks for one guard decision for a loop that makes its own model
// calls: messages is the conversation so far (the user's request, each model
// turn's assistant message and its tool results, corrections from earlier
// retries) and reply the model's answer to it. The workflow's tools are not
// called; the caller runs the calls of a [GuardCalls] itself.
//
// Run options (e.g. [WithMaxRetries], [WithGuardrails]) apply as for a run;
// [WithEvents], [WithPriorMessages], [WithLabels], [WithApprover],
// [WithSession], [WithoutEvents] and the reattach options ([WithReattach]...)
// configure a run's stream and are refused here. When the guard gives up
// (retry budget spent, steps skipped too often...) Guard returns the same
// typed error as [Client.Run] (e.g. [*ToolCallError]), its Transcript being
// messages; input the server cannot read is a [*RequestRejectedError] naming
// the field.
func (c *Client) Guard(ctx context.Context, wf *Workflow, messages []*Message, reply ModelReply, opts ...RunOption) (GuardVerdict, error) {
	cfg := newRunConfig(opts)
	if cfg.err != nil {
		return nil, cfg.err
	}
	if cfg.onEvent != nil || cfg.approver != nil || cfg.prior != nil || cfg.labels != nil || cfg.session != "" || cfg.reattachSet || cfg.omit != nil {
		return nil, errors.New("forge: Guard takes run options only (not WithEvents, WithPriorMessages, WithLabels, WithApprover, WithSession, WithReattach... or WithoutEvents)")
	}
	sent := convertAll(messages, messageToPb)
	res, err := c.rpc.Guard(ctx, &forgev1.GuardRequest{
		Workflow:       wf.proto(),
		Options:        cfg.options,
		Messages:       sent,
		ReplyText:      reply.Text,
		ReplyToolCalls: convertAll(reply.ToolCalls, toolCallToPb),
	})
	if err != nil {
		return nil, rpcError(err)
	}
	switch v := res.GetVerdict().(type) {
	case *forgev1.GuardResponse_Calls:
		out := GuardCalls{Message: &Message{Role: RoleAssistant, Type: MessageToolCall}}
		for _, call := range v.Calls.GetCalls() {
			args := call.GetArgumentsJson()
			if args == "" {
				args = "{}"
			}
			out.Calls = append(out.Calls, GuardedCall{
				CallID:    call.GetCallId(),
				ToolName:  call.GetToolName(),
				Arguments: json.RawMessage(args),
				Coercions: call.GetCoercions(),
			})
			out.Message.ToolCalls = append(out.Message.ToolCalls, &ToolCall{
				Id: call.GetCallId(), Name: call.GetToolName(), ArgumentsJson: args,
			})
		}
		return out, nil
	case *forgev1.GuardResponse_Retry:
		return GuardRetry{
			Messages: convertAll(v.Retry.GetMessages(), messageFromPb),
			Reason:   v.Retry.GetReason(),
			Attempt:  int(v.Retry.GetAttempt()),
		}, nil
	case *forgev1.GuardResponse_Done:
		return GuardDone{
			TerminalTool:   v.Done.GetTerminalTool(),
			Result:         v.Done.GetResult(),
			TerminalCallID: v.Done.GetTerminalCallId(),
		}, nil
	case *forgev1.GuardResponse_Failed:
		failed := v.Failed
		if len(failed.GetTranscript()) == 0 {
			// The conversation the guard was given stands in for a transcript.
			failed = proto.Clone(failed).(*forgev1.RunFailed)
			failed.TranscriptOmitted = true
		}
		return nil, runFailed(failed, "", sent, nil)
	}
	return nil, fmt.Errorf("forge: the server's Guard answer holds no verdict")
}
