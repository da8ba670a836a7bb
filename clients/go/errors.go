package forge

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// FailureReason is why a run failed: the contract's FailureReason name
// without the FAILURE_REASON_ prefix.
type FailureReason string

// ForgeError is every error this SDK returns about a run or its server (as
// Python's and TypeScript's ForgeError base class): [*RunFailedError] and
// its reason-specific types, [*RequestRejectedError] and
// [*ConnectionLostError]. Errors raised by tool functions
// ([*ToolResolutionError], [*ToolUnreachableError]) are not. Test with
//
//	var fe forge.ForgeError
//	if errors.As(err, &fe) { ... }
type ForgeError interface {
	error
	forgeError()
}

func (*RunFailedError) forgeError()       {}
func (*RequestRejectedError) forgeError() {}
func (*ConnectionLostError) forgeError()  {}

// The failure reasons of the contract. Each has its own error type.
const (
	ReasonToolCall              FailureReason = "TOOL_CALL"               // *ToolCallError
	ReasonToolExecution         FailureReason = "TOOL_EXECUTION"          // *ToolExecutionError
	ReasonStepEnforcement       FailureReason = "STEP_ENFORCEMENT"        // *StepEnforcementError
	ReasonPrerequisite          FailureReason = "PREREQUISITE"            // *PrerequisiteError
	ReasonMaxIterations         FailureReason = "MAX_ITERATIONS"          // *MaxIterationsError
	ReasonCancelled             FailureReason = "CANCELLED"               // *WorkflowCancelledError
	ReasonBackend               FailureReason = "BACKEND"                 // *BackendError
	ReasonContextBudgetExceeded FailureReason = "CONTEXT_BUDGET_EXCEEDED" // *ContextBudgetExceededError
	ReasonInternal              FailureReason = "INTERNAL"                // *InternalServerError
	ReasonShuttingDown          FailureReason = "SHUTTING_DOWN"           // *ShuttingDownError
)

// RunFailedError is a run the server accepted and then ended unsuccessfully.
// Every reason-specific error type (e.g. [*StepEnforcementError]) unwraps to
// it, so errors.As(err, &runErr) matches any failed run. The name matches the
// Python and TypeScript SDKs' RunFailedError.
type RunFailedError struct {
	Reason FailureReason
	// Message is the server's explanation.
	Message string
	// Details are reason-specific facts, e.g. "pending_steps", "tool_name".
	Details    map[string]string
	Iterations int
	Usage      *Usage
	// Transcript is the conversation up to the failure, prior messages
	// included. When the server omitted it for size (the contract's
	// RunFailed.transcript_omitted), it is rebuilt as for
	// [RunResult.Transcript].
	Transcript []*Message
	RunID      string

	cause error
}

// RunError is the former name of [RunFailedError].
//
// Deprecated: use [RunFailedError]; this alias goes in the next release.
type RunError = RunFailedError

func (e *RunFailedError) Error() string {
	return fmt.Sprintf("forge: run failed: %s: %s", e.Reason, e.Message)
}

// Unwrap returns what caused a client-side cancellation (the context's
// error when a run was cancelled through its context), or nil.
func (e *RunFailedError) Unwrap() error { return e.cause }

// ToolCallError: the model kept answering without a valid tool call.
type ToolCallError struct{ *RunFailedError }

// ToolExecutionError: tools kept failing and the model did not recover.
type ToolExecutionError struct{ *RunFailedError }

// StepEnforcementError: the model kept calling a terminal tool before the
// required steps.
type StepEnforcementError struct{ *RunFailedError }

// PrerequisiteError: the model kept calling tools whose prerequisites were
// not met.
type PrerequisiteError struct{ *RunFailedError }

// MaxIterationsError: no terminal tool within the run's iteration limit.
type MaxIterationsError struct{ *RunFailedError }

// WorkflowCancelledError: the run was cancelled, by [RunStream.Cancel] or its
// context (then errors.Is(err, context.Canceled) or
// context.DeadlineExceeded holds).
type WorkflowCancelledError struct{ *RunFailedError }

// BackendError: the model server failed or could not be reached.
type BackendError struct{ *RunFailedError }

// ContextBudgetExceededError: the conversation no longer fits the model's
// context.
type ContextBudgetExceededError struct{ *RunFailedError }

// InternalServerError: a bug in the server.
type InternalServerError struct{ *RunFailedError }

// ShuttingDownError: the server shut down before the run ended; retrying on
// another server is safe.
type ShuttingDownError struct{ *RunFailedError }

// Unwrap returns the [*RunFailedError].
func (e *ToolCallError) Unwrap() error { return e.RunFailedError }

// Unwrap returns the [*RunFailedError].
func (e *ToolExecutionError) Unwrap() error { return e.RunFailedError }

// Unwrap returns the [*RunFailedError].
func (e *StepEnforcementError) Unwrap() error { return e.RunFailedError }

// Unwrap returns the [*RunFailedError].
func (e *PrerequisiteError) Unwrap() error { return e.RunFailedError }

// Unwrap returns the [*RunFailedError].
func (e *MaxIterationsError) Unwrap() error { return e.RunFailedError }

// Unwrap returns the [*RunFailedError].
func (e *WorkflowCancelledError) Unwrap() error { return e.RunFailedError }

// Unwrap returns the [*RunFailedError].
func (e *BackendError) Unwrap() error { return e.RunFailedError }

// Unwrap returns the [*RunFailedError].
func (e *ContextBudgetExceededError) Unwrap() error { return e.RunFailedError }

// Unwrap returns the [*RunFailedError].
func (e *InternalServerError) Unwrap() error { return e.RunFailedError }

// Unwrap returns the [*RunFailedError].
func (e *ShuttingDownError) Unwrap() error { return e.RunFailedError }

// runFailed is the typed error of a run_failed message; streamed (the
// messages received as message_appended) stands in for a transcript the
// server omitted.
func runFailed(msg *forgev1.RunFailed, runID string, streamed []*forgev1.Message, cause error) error {
	reason := FailureReason(strings.TrimPrefix(msg.GetReason().String(), "FAILURE_REASON_"))
	transcript := msg.GetTranscript()
	if msg.GetTranscriptOmitted() {
		transcript = streamed
	}
	base := &RunFailedError{
		Reason:     reason,
		Message:    msg.GetMessage(),
		Details:    msg.GetDetails(),
		Iterations: int(msg.GetIterations()),
		Usage:      usageFromPb(msg.GetUsage()),
		Transcript: convertAll(transcript, messageFromPb),
		RunID:      runID,
	}
	if reason == ReasonCancelled {
		base.cause = cause
	}
	if base.Details == nil {
		base.Details = map[string]string{}
	}
	switch reason {
	case ReasonToolCall:
		return &ToolCallError{base}
	case ReasonToolExecution:
		return &ToolExecutionError{base}
	case ReasonStepEnforcement:
		return &StepEnforcementError{base}
	case ReasonPrerequisite:
		return &PrerequisiteError{base}
	case ReasonMaxIterations:
		return &MaxIterationsError{base}
	case ReasonCancelled:
		return &WorkflowCancelledError{base}
	case ReasonBackend:
		return &BackendError{base}
	case ReasonContextBudgetExceeded:
		return &ContextBudgetExceededError{base}
	case ReasonInternal:
		return &InternalServerError{base}
	case ReasonShuttingDown:
		return &ShuttingDownError{base}
	}
	return base
}

// RequestRejectedError is a request the server refused: a bad workflow or
// options (Reason "INVALID_WORKFLOW"), protocol misuse ("INVALID_REQUEST",
// "UNKNOWN_CALL_ID"), a busy server ("SERVER_BUSY", code
// ResourceExhausted), a missing or unknown token ("UNAUTHENTICATED"), a
// token holding its max_runs open runs ("TOKEN_RUN_LIMIT", code
// ResourceExhausted) or an unreachable token verifier ("AUTH_UNAVAILABLE",
// code Unavailable: retry later). It implements GRPCStatus, so
// status.FromError works.
type RequestRejectedError struct {
	Code codes.Code
	// Reason is the stable ErrorInfo reason, e.g. "INVALID_WORKFLOW"; empty
	// when the status carried none (e.g. from a proxy).
	Reason string
	// Field names the offending field, e.g. "workflow.terminal_tools[0]".
	Field   string
	Message string

	status *status.Status
}

func (e *RequestRejectedError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "forge: request rejected: %s", e.Code)
	// UNAUTHENTICATED's reason is its code's name: say it once.
	if e.Reason != "" && !strings.EqualFold(strings.ReplaceAll(e.Reason, "_", ""), e.Code.String()) {
		fmt.Fprintf(&b, " %s", e.Reason)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, " (%s)", e.Field)
	}
	fmt.Fprintf(&b, ": %s", e.Message)
	return b.String()
}

// GRPCStatus returns the status the server sent.
func (e *RequestRejectedError) GRPCStatus() *status.Status { return e.status }

// ConnectionLostError is a stream or connection that broke before the run
// ended, and was not reattached (see [WithReattach]). Err is the underlying
// gRPC error, if any; when reattaching was tried and gave up, Err holds both
// the break and the last attempt's error or the cancellation that stopped it
// (errors.As finds e.g. a [*RequestRejectedError] with Reason
// "RUN_NOT_FOUND"; errors.Is finds context.Canceled or [ErrRunCancelled]).
type ConnectionLostError struct {
	Err error
}

func (e *ConnectionLostError) Error() string {
	if e.Err == nil {
		return "forge: connection lost: the server closed the stream before the run ended"
	}
	return "forge: connection lost: " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *ConnectionLostError) Unwrap() error { return e.Err }

// rpcError turns a gRPC error into a [*RequestRejectedError] or a
// [*ConnectionLostError]. An Unavailable, Canceled or Internal status is a
// refusal when it carries an ErrorInfo reason (e.g. "SHUTTING_DOWN",
// "AUTH_UNAVAILABLE"), and a broken transport when it carries none.
func rpcError(err error) error {
	st, ok := status.FromError(err)
	if !ok {
		return &ConnectionLostError{Err: err}
	}
	rej := &RequestRejectedError{Code: st.Code(), Message: st.Message(), status: st}
	for _, d := range st.Details() {
		switch info := d.(type) {
		case *errdetails.ErrorInfo:
			rej.Reason = info.GetReason()
			if f := info.GetMetadata()["field"]; f != "" {
				rej.Field = f
			}
		case *errdetails.BadRequest:
			if v := info.GetFieldViolations(); rej.Field == "" && len(v) > 0 {
				rej.Field = v[0].GetField()
			}
		}
	}
	switch st.Code() {
	case codes.Unavailable, codes.Canceled, codes.Internal:
		if rej.Reason == "" {
			return &ConnectionLostError{Err: err}
		}
	}
	return rej
}

// Sentinel causes of a tool function's context (see context.Cause).
var (
	// ErrToolTimeout: the server stopped waiting for this call (the run's
	// tool timeout passed); its result would be discarded.
	ErrToolTimeout = errors.New("forge: the server stopped waiting for this tool call")
	// ErrRunCancelled: the run was cancelled.
	ErrRunCancelled = errors.New("forge: the run was cancelled")
	// ErrRunEnded: the run ended (completed, failed or lost its stream)
	// before the tool returned.
	ErrRunEnded = errors.New("forge: the run ended")
)

// ToolResolutionError is what a tool returns when the arguments were valid
// but did not resolve to data ("no such city"). The model sees the message; it
// neither counts toward the run's tool-error limit nor completes a step. The
// name matches the Python and TypeScript SDKs' ToolResolutionError.
type ToolResolutionError struct {
	Msg string
}

func (e *ToolResolutionError) Error() string { return e.Msg }

// ResolutionError is the former name of [ToolResolutionError].
//
// Deprecated: use [ToolResolutionError]; this alias goes in the next release.
type ResolutionError = ToolResolutionError

// Resolutionf returns a [*ToolResolutionError] with a formatted message.
func Resolutionf(format string, args ...any) error {
	return &ToolResolutionError{Msg: fmt.Sprintf(format, args...)}
}

// ToolUnreachableError is what a tool returns when what it calls could not
// be reached or its answer never came back (a lost connection, a timeout in
// transit): whether it took effect is unknown. The server makes the call once
// more (call id "<id>.retry") when the tool is read-only or idempotent
// ([AsReadOnly], [AsIdempotent]); otherwise, and when that fails too, the
// model sees the message, told that the effect is unknown. It counts toward
// the run's tool-error limit. The name matches the Python and TypeScript
// SDKs' ToolUnreachableError.
type ToolUnreachableError struct {
	Msg string
	// Err is the cause, if any (e.g. context.DeadlineExceeded).
	Err error
}

func (e *ToolUnreachableError) Error() string { return e.Msg }

// Unwrap returns the cause.
func (e *ToolUnreachableError) Unwrap() error { return e.Err }

// Unreachablef returns a [*ToolUnreachableError] with a formatted message;
// like fmt.Errorf, a %w verb makes its operand the cause.
func Unreachablef(format string, args ...any) error {
	wrapped := fmt.Errorf(format, args...)
	return &ToolUnreachableError{Msg: wrapped.Error(), Err: errors.Unwrap(wrapped)}
}

// ArgumentError is a tool call whose arguments could not be decoded into the
// tool's argument type; it is reported to the model as a tool error.
type ArgumentError struct {
	Tool string
	Err  error
}

func (e *ArgumentError) Error() string {
	return fmt.Sprintf("invalid arguments for %s: %v", e.Tool, e.Err)
}

// Unwrap returns the decoding error.
func (e *ArgumentError) Unwrap() error { return e.Err }

// PanicError is a tool function that panicked. The panic is recovered and
// reported to the model as a tool error.
type PanicError struct {
	Tool  string
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("tool %s panicked: %v", e.Tool, e.Value) }

// toolError is the wire form of a tool function's error.
func toolError(err error) *forgev1.ToolError {
	out := &forgev1.ToolError{Message: err.Error(), Kind: forgev1.ToolErrorKind_TOOL_ERROR_KIND_HARD}
	var (
		res *ToolResolutionError
		unr *ToolUnreachableError
		arg *ArgumentError
		pan *PanicError
	)
	switch {
	case errors.As(err, &res):
		out.Kind = forgev1.ToolErrorKind_TOOL_ERROR_KIND_RESOLUTION
		out.Type = "ToolResolutionError"
	case errors.As(err, &unr):
		out.Kind = forgev1.ToolErrorKind_TOOL_ERROR_KIND_UNREACHABLE
		out.Type = "ToolUnreachableError"
	case errors.As(err, &arg):
		out.Type = "ArgumentError"
	case errors.As(err, &pan):
		out.Type = "panic"
	default:
		out.Type = errorTypeName(err)
	}
	if out.Message == "" {
		out.Message = "error"
	}
	return out
}

// errorTypeName names an error's type for the server's logs and the model
// ("fs.PathError"); the anonymous types of errors.New and fmt.Errorf get none.
func errorTypeName(err error) string {
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	r, _ := utf8.DecodeRuneInString(t.Name())
	if !unicode.IsUpper(r) {
		return ""
	}
	return t.String()
}
