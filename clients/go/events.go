package forge

import (
	"encoding/json"
	"time"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
)

// Event is something that happened during a run, delivered in order to the
// [WithEvents] callback or on [RunStream.Events]: a [RunStarted], [Chunk],
// [ToolCallStarted], [ToolCallFinished], [ToolCallCancelled],
// [ApprovalRequested], [ApprovalDecided], [ToolOutputScreened],
// [MessageAppended], [Compacted], [Queued], [Reattached] or, last of a
// successful run, [RunCompleted] (whose result [RunStream.Wait] and
// [Client.Run] also return; a failed run ends with no event, only its error).
type Event interface {
	isEvent()
}

// RunStarted is the first event of a run. It is delivered once: a stream
// that reattaches to the run (see [WithReattach]) does not repeat it.
type RunStarted struct {
	RunID               string
	Backend             string
	Model               string
	ContextBudgetTokens int
	// ToolCallMode is "native", "constrained" or "prompt".
	ToolCallMode string
	// BackendChain is the server's fallback chain in order (Backend first);
	// nil with a single backend. [IterationUsage].Backend says which one
	// served each model call.
	BackendChain []string
	// ReattachGrace is how long the server keeps the run going after its
	// stream breaks, waiting for the SDK to reattach (see [WithReattach]);
	// 0: the run is not reattachable (a server without a journal).
	ReattachGrace time.Duration
}

// ChunkType says what a [Chunk] holds.
type ChunkType = forgev1.ChunkType

// Chunk types.
const (
	// ChunkTextDelta is partial model text.
	ChunkTextDelta ChunkType = forgev1.ChunkType_CHUNK_TYPE_TEXT_DELTA
	// ChunkToolCallDelta is a partial tool call.
	ChunkToolCallDelta ChunkType = forgev1.ChunkType_CHUNK_TYPE_TOOL_CALL_DELTA
	// ChunkFinal ends one model call; what follows belongs to the next.
	ChunkFinal ChunkType = forgev1.ChunkType_CHUNK_TYPE_FINAL
	// ChunkRetry: the model call is retried; discard the deltas since the
	// last ChunkFinal.
	ChunkRetry ChunkType = forgev1.ChunkType_CHUNK_TYPE_RETRY
)

// Chunk is model output as it is generated (with [WithStreamChunks]).
type Chunk struct {
	Type      ChunkType
	Content   string
	Iteration int
}

// ToolCallStarted: the server asked for a tool call; the tool function now
// runs in this process.
type ToolCallStarted struct {
	CallID   string
	ToolName string
	// Arguments is the arguments object as JSON, already validated against
	// the tool's schema by the server.
	Arguments json.RawMessage
	Iteration int
	// Coercions are near-miss arguments the server fixed before validation.
	Coercions []*Coercion
}

// ToolCallFinished: a tool function returned (or panicked).
type ToolCallFinished struct {
	CallID   string
	ToolName string
	// Output is the result as sent to the server; empty on error.
	Output string
	// Err is the tool's error, if any ([*ArgumentError] for arguments that
	// did not decode, [*PanicError] for a panic, [*ToolResolutionError]
	// for "nothing found"); Err != nil is the other SDKs' "error" flag.
	Err      error
	Duration time.Duration
	// Discarded is true when no result was sent because the server no
	// longer waited for it (the run was cancelled or the tool timed out).
	Discarded bool
}

// ToolCallCancelled: the server stopped waiting for a tool call (its tool
// timeout passed, or the run was cancelled or ended) and recorded an error
// result for it. The tool's context is cancelled with cause [ErrToolTimeout]
// (unless the run was already cancelled); its result, if it still returns,
// is not sent and its [ToolCallFinished] is Discarded.
type ToolCallCancelled struct {
	CallID   string
	ToolName string
	// Reason is the server's, e.g. "no result within 0.2s".
	Reason string
}

// ApprovalRequested: the server asks whether a destructive call may run
// (with [WithApproveDestructiveCalls]); the run's [Approver] now decides in
// this process. An approved call follows as a [ToolCallStarted] with the same
// CallID.
type ApprovalRequested struct {
	ApprovalRequest
}

// ApprovalDecided: the decision on an [ApprovalRequested], as sent to the
// server.
type ApprovalDecided struct {
	CallID   string
	ToolName string
	Approved bool
	// Reason is the denial's reason as sent.
	Reason string
	// Err is the approver's error, if any (a panic is reported as an error
	// too); the call was then denied.
	Err error
	// Discarded is true when no decision was sent because the server no
	// longer waited for it (the run was cancelled or the wait timed out).
	Discarded bool
}

// MessageAppended is a message the run added to the conversation.
type MessageAppended struct {
	Message *Message
	// Index is the message's position in the run's transcript (prior
	// messages included).
	Index int
}

// Compacted: the conversation sent to the model was compacted before this
// iteration. The transcript (as streamed in [MessageAppended]) is never
// compacted.
type Compacted struct {
	Iteration int
	// Phase is 1-3 for the tiered strategy, 0 for the sliding window.
	Phase          int
	TokensBefore   int
	TokensAfter    int
	MessagesBefore int
	MessagesAfter  int
	Strategy       string
}

// ToolOutputScreened: a tool's output held secrets, and the model saw it
// redacted ([SecretsRedact]) or not at all ([SecretsBlock]). The secrets
// themselves are never sent back.
type ToolOutputScreened struct {
	CallID      string
	ToolName    string
	Action      SecretsPolicy
	SecretTypes []string
	Secrets     int
	Iteration   int
}

// Queued: the run waits for a model server slot. It is sent when the run
// starts waiting and when its position changes; position 0 means it got a
// slot.
type Queued struct {
	Position  int
	Iteration int
	// Preempted is true when the run's inference was preempted by
	// higher-priority work and resumes when a slot frees up.
	Preempted bool
}

// Reattached: the run's stream broke and the SDK took the run over on a new
// stream (this server or a replica sharing its journal; see [WithReattach]).
// The events the old stream missed follow; none is delivered twice.
type Reattached struct {
	RunID string
	// AfterSeq is the last event (RunResponse.seq) handled before the break.
	AfterSeq uint64
	// Attempts is how many reattach attempts this break took (1: the first
	// succeeded).
	Attempts int
}

// RunCompleted is the last event of a successful run; [RunStream.Wait]
// returns the same result.
type RunCompleted struct {
	Result *RunResult
}

func (Reattached) isEvent()         {}
func (RunCompleted) isEvent()       {}
func (RunStarted) isEvent()         {}
func (ToolOutputScreened) isEvent() {}
func (Compacted) isEvent()          {}
func (Queued) isEvent()             {}
func (Chunk) isEvent()              {}
func (ToolCallStarted) isEvent()    {}
func (ToolCallFinished) isEvent()   {}
func (ToolCallCancelled) isEvent()  {}
func (ApprovalRequested) isEvent()  {}
func (ApprovalDecided) isEvent()    {}
func (MessageAppended) isEvent()    {}

func compactedFromPb(m *forgev1.Compacted) Compacted {
	return Compacted{
		Iteration:      int(m.GetIteration()),
		Phase:          int(m.GetPhase()),
		TokensBefore:   int(m.GetTokensBefore()),
		TokensAfter:    int(m.GetTokensAfter()),
		MessagesBefore: int(m.GetMessagesBefore()),
		MessagesAfter:  int(m.GetMessagesAfter()),
		Strategy:       m.GetStrategy(),
	}
}

func toolOutputScreenedFromPb(m *forgev1.ToolOutputScreened) ToolOutputScreened {
	action := SecretsRedact
	if m.GetAction() == forgev1.ToolOutputPolicy_TOOL_OUTPUT_POLICY_BLOCK {
		action = SecretsBlock
	}
	return ToolOutputScreened{
		CallID:      m.GetCallId(),
		ToolName:    m.GetToolName(),
		Action:      action,
		SecretTypes: m.GetSecretTypes(),
		Secrets:     int(m.GetSecrets()),
		Iteration:   int(m.GetIteration()),
	}
}
