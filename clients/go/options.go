package forge

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"time"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/protobuf/proto"
)

// DialOption configures [Dial].
type DialOption func(*dialConfig)

type dialConfig struct {
	creds         credentials.TransportCredentials
	token         string
	tokenSet      bool
	keepalive     time.Duration
	maxMessage    int
	waitForServer bool
	extra         []grpc.DialOption
}

// WithTLS connects over TLS with cfg (nil: the system's roots).
func WithTLS(cfg *tls.Config) DialOption {
	return func(c *dialConfig) { c.creds = credentials.NewTLS(cfg) }
}

// WithTransportCredentials connects with the given gRPC transport
// credentials (e.g. mTLS from credentials.NewTLS).
func WithTransportCredentials(creds credentials.TransportCredentials) DialOption {
	return func(c *dialConfig) { c.creds = creds }
}

// WithToken sends "authorization: Bearer <token>" with every call. It is sent
// without TLS too, since a sidecar is usually reached over loopback. Without
// WithToken, [Dial] sends $FORGE_TOKEN when it is set; WithToken("") sends
// none.
func WithToken(token string) DialOption {
	return func(c *dialConfig) { c.token, c.tokenSet = token, true }
}

// TokenEnv is the environment variable [Dial] reads a token from when no
// [WithToken] was given (as the Python and TypeScript SDKs do).
const TokenEnv = "FORGE_TOKEN"

// WithKeepalive pings the server after interval without activity while a run
// is open, to notice dead connections. Off by default: gRPC servers refuse
// pings more frequent than they allow (5 minutes by default) with a
// "too_many_pings" GOAWAY, so keep it at or above what the server permits.
func WithKeepalive(interval time.Duration) DialOption {
	return func(c *dialConfig) { c.keepalive = interval }
}

// WithMaxMessageBytes caps the size of messages in both directions (default
// 16 MiB, as the server's default).
func WithMaxMessageBytes(n int) DialOption {
	return func(c *dialConfig) { c.maxMessage = n }
}

// WithWaitForServer makes [Dial] wait (until its context ends) for a server
// that is not up yet instead of failing at once.
func WithWaitForServer() DialOption {
	return func(c *dialConfig) { c.waitForServer = true }
}

// WithGRPCDialOptions passes options straight to grpc.NewClient (e.g.
// interceptors for tracing).
func WithGRPCDialOptions(opts ...grpc.DialOption) DialOption {
	return func(c *dialConfig) { c.extra = append(c.extra, opts...) }
}

func (c *dialConfig) grpcOptions() []grpc.DialOption {
	creds := c.creds
	if creds == nil {
		creds = insecure.NewCredentials()
	}
	opts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		// A fixed flow-control window, as large as gRPC's bandwidth-delay
		// estimation may grow it (16 MiB): the estimation sends a ping
		// with nearly every message received, one more write and read per
		// tool round trip on each side.
		grpc.WithInitialWindowSize(flowWindow),
		grpc.WithInitialConnWindowSize(flowWindow),
		grpc.WithDefaultCallOptions(
			grpc.MaxCallRecvMsgSize(c.maxMessage),
			grpc.MaxCallSendMsgSize(c.maxMessage),
		),
	}
	if c.token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearerToken(c.token)))
	}
	if c.keepalive > 0 {
		opts = append(opts, grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: c.keepalive}))
	}
	return append(opts, c.extra...)
}

// flowWindow is the stream's and the connection's flow-control window.
const flowWindow = 16 << 20

type bearerToken string

func (t bearerToken) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(t)}, nil
}

func (bearerToken) RequireTransportSecurity() bool { return false }

// RunOption configures one run ([Client.Run], [Client.Start]). Options left
// out keep the server's defaults.
type RunOption func(*runConfig)

type runConfig struct {
	onEvent  func(Event)
	approver Approver
	prior    []*Message
	labels   map[string]string
	session  string
	options  *forgev1.RunOptions
	// omit: the event kinds the server leaves off the stream
	// (StartRun.events.omit).
	omit     []EventKind
	reattach reattachConfig
	// reattachSet: a reattach option was given (refused by Guard).
	reattachSet bool
	err         error
}

// reattachConfig is how a run's stream is reattached after it breaks.
type reattachConfig struct {
	off bool
	// deadline caps the time spent reattaching after a break (0: the run's
	// RunStarted.reattach_grace_s alone).
	deadline time.Duration
	// backoffMin is the delay before the first attempt, doubled after each
	// failed one up to backoffMax; each delay is jittered down to half.
	backoffMin, backoffMax time.Duration
}

// The default reattach backoff: 50 ms doubling to 2 s.
const (
	defaultReattachBackoffMin = 50 * time.Millisecond
	defaultReattachBackoffMax = 2 * time.Second
)

func newRunConfig(opts []RunOption) *runConfig {
	c := &runConfig{
		options: &forgev1.RunOptions{},
		reattach: reattachConfig{
			backoffMin: defaultReattachBackoffMin,
			backoffMax: defaultReattachBackoffMax,
		},
	}
	for _, opt := range opts {
		opt(c)
	}
	return c
}

func (c *runConfig) count(option string, n int) uint32 {
	if n < 0 || int64(n) > int64(^uint32(0)) {
		c.err = fmt.Errorf("forge: %s(%d): out of range", option, n)
		return 0
	}
	return uint32(n)
}

// toolTimeout is how long the server waits for a tool result.
func (c *runConfig) toolTimeout() time.Duration {
	if ms := c.options.GetToolTimeoutMs(); ms > 0 {
		return time.Duration(ms) * time.Millisecond
	}
	return defaultToolTimeout
}

// The server's default tool timeout (RunOptions.tool_timeout_ms).
const defaultToolTimeout = 300 * time.Second

// WithEvents calls fn for every event of the run, in order, from a single
// goroutine. fn should return quickly; the run does not wait for it, but
// [Client.Run] and [RunStream.Wait] return only after the last call.
func WithEvents(fn func(Event)) RunOption {
	return func(c *runConfig) { c.onEvent = fn }
}

// WithReattach turns the automatic reattach of a broken stream on (the
// default) or off.
//
// A run is reattachable when the server journals it: its [RunStarted] has a
// ReattachGrace above zero (forge-server --journal, on by default, and
// --reattach-grace). When such a run's stream breaks (a lost connection, a
// server restart, a draining server handing its runs over with UNAVAILABLE
// SHUTTING_DOWN), the SDK opens a new stream on the same [Client] and sends
// ReattachRun with the last event it handled, retrying with exponential
// backoff and jitter (see [WithReattachBackoff]) until the deadline (see
// [WithReattachDeadline]). The run then goes on as if nothing happened: each
// event reaches the callback or channel once, tool functions and approvers
// are not interrupted by the break and run once per call id (a call the
// server asks for again gets the result already computed, sent again), and
// results are sent on whatever stream is current.
//
// With reattach on, the SDK names the run itself (StartRun.run_id, 32
// random hex characters), so a stream that breaks before the run's
// [RunStarted] arrived is reattached by that id too, for up to 30 s (less
// with [WithReattachDeadline]); when the server answers that it has no such
// run, the start never reached it, and the SDK sends the start again on a
// new stream.
//
// With reattach off, for a run that is not reattachable, and when
// reattaching gives up (the run is unknown or belongs to another caller, the
// deadline passed, the run was cancelled meanwhile), a broken stream ends the
// run with [*ConnectionLostError] as before; after a failed reattach its Err
// holds both the break and the last attempt's error.
func WithReattach(on bool) RunOption {
	return func(c *runConfig) {
		c.reattach.off = !on
		c.reattachSet = true
	}
}

// WithReattachDeadline caps how long the SDK tries to reattach after each
// break (see [WithReattach]). Without it the deadline is the run's
// reattach grace, how long the server keeps a detached run waiting
// ([RunStarted].ReattachGrace), or 30 s for a stream that broke before
// RunStarted arrived; a longer d is cut to that.
func WithReattachDeadline(d time.Duration) RunOption {
	return func(c *runConfig) {
		if d <= 0 {
			c.err = fmt.Errorf("forge: WithReattachDeadline(%s): must be positive", d)
		}
		c.reattach.deadline = d
		c.reattachSet = true
	}
}

// WithReattachBackoff sets the delay before the first reattach attempt
// after a break and the most it grows to: it doubles after each failed
// attempt, and each delay is jittered down to half of it (default 50 ms
// growing to 2 s).
func WithReattachBackoff(initial, maximum time.Duration) RunOption {
	return func(c *runConfig) {
		if initial <= 0 || maximum < initial {
			c.err = fmt.Errorf("forge: WithReattachBackoff(%s, %s): want 0 < initial <= maximum", initial, maximum)
		}
		c.reattach.backoffMin, c.reattach.backoffMax = initial, maximum
		c.reattachSet = true
	}
}

// WithPriorMessages continues a conversation: msgs (e.g. a previous result's
// [RunResult.Conversation]) come before the new user message.
func WithPriorMessages(msgs ...*Message) RunOption {
	return func(c *runConfig) { c.prior = append(c.prior, msgs...) }
}

// WithSession makes the run part of the server's session id: the server
// carries the conversation across the runs of a session. A run with no
// prior messages ([WithPriorMessages]) continues the session's last
// completed conversation; its own conversation, once it completes, is the
// one the session's next run continues. Sessions need a server with a run
// journal (forge-server --journal), and belong to the caller that started
// them (another caller's run is refused with NOT_RUN_OWNER).
func WithSession(id string) RunOption {
	return func(c *runConfig) { c.session = id }
}

// WithLabels attaches free-form labels (e.g. a request id) that the server
// echoes in its logs.
func WithLabels(labels map[string]string) RunOption {
	return func(c *runConfig) {
		if c.labels == nil {
			c.labels = map[string]string{}
		}
		for k, v := range labels {
			c.labels[k] = v
		}
	}
}

// WithMaxIterations sets the hard ceiling on model calls (server default 10).
func WithMaxIterations(n int) RunOption {
	return func(c *runConfig) { c.options.MaxIterations = c.count("WithMaxIterations", n) }
}

// WithMaxRetries sets how many consecutive invalid responses are answered
// with a correction before the run fails with [*ToolCallError] (server
// default 3; 0 means no retries).
func WithMaxRetries(n int) RunOption {
	return func(c *runConfig) { c.options.MaxRetries = proto.Uint32(c.count("WithMaxRetries", n)) }
}

// WithMaxToolErrors sets how many consecutive hard tool errors are fed back
// to the model before the run fails with [*ToolExecutionError] (server
// default 2).
func WithMaxToolErrors(n int) RunOption {
	return func(c *runConfig) {
		c.options.MaxToolErrors = proto.Uint32(c.count("WithMaxToolErrors", n))
	}
}

// WithTemperature sets the sampling temperature (server default 0).
func WithTemperature(t float32) RunOption {
	return func(c *runConfig) { c.options.Temperature = proto.Float32(t) }
}

// WithMaxTokens caps generated tokens per model call (server default 512).
func WithMaxTokens(n int) RunOption {
	return func(c *runConfig) { c.options.MaxTokens = c.count("WithMaxTokens", n) }
}

// WithToolTimeout sets how long the server waits for a tool's result before
// it fails the call as a tool error (server default 5 minutes). The tool
// function's context is cancelled with cause [ErrToolTimeout] at that point.
func WithToolTimeout(d time.Duration) RunOption {
	return func(c *runConfig) {
		ms := d.Milliseconds()
		if d > 0 && ms == 0 {
			ms = 1
		}
		c.options.ToolTimeoutMs = c.count("WithToolTimeout", int(ms))
	}
}

// EventKind names a kind of event the run's stream may leave out (see
// [WithoutEvents]).
type EventKind = forgev1.EventKind

// The event kinds a run may leave out.
const (
	// EventChunk: the model's output as it is generated ([Chunk]).
	EventChunk EventKind = forgev1.EventKind_EVENT_KIND_CHUNK
	// EventMessageAppended: each message the run adds ([MessageAppended]).
	EventMessageAppended EventKind = forgev1.EventKind_EVENT_KIND_MESSAGE_APPENDED
	// EventCompacted: [Compacted].
	EventCompacted EventKind = forgev1.EventKind_EVENT_KIND_COMPACTED
	// EventQueued: [Queued].
	EventQueued EventKind = forgev1.EventKind_EVENT_KIND_QUEUED
	// EventToolOutputScreened: [ToolOutputScreened].
	EventToolOutputScreened EventKind = forgev1.EventKind_EVENT_KIND_TOOL_OUTPUT_SCREENED
)

// WithoutEvents asks the server not to send events of the given kinds on
// the run's stream (the contract's StartRun.events.omit), e.g.
// WithoutEvents(EventMessageAppended) for a caller that only wants the
// result: fewer messages per tool round trip. The run itself, the server's
// journal and the final transcript ([RunResult].Transcript) are the same
// either way. One exception: when the server leaves the final transcript
// out for size (RunCompleted.transcript_omitted, likewise a failed run's)
// the SDK rebuilds it from the [MessageAppended] events, so without them
// that transcript holds only the prior messages. Kinds outside the
// constants above are refused by the server with [*RequestRejectedError].
func WithoutEvents(kinds ...EventKind) RunOption {
	return func(c *runConfig) {
		for _, k := range kinds {
			if !slices.Contains(c.omit, k) {
				c.omit = append(c.omit, k)
			}
		}
	}
}

// eventOptions is the run's StartRun.events: batches always (the SDK takes
// each batched event as if it came alone), and the kinds left out.
func (c *runConfig) eventOptions() *forgev1.EventOptions {
	return &forgev1.EventOptions{Batch: true, Omit: c.omit}
}

// WithStreamChunks streams the model's output as [Chunk] events.
func WithStreamChunks() RunOption {
	return func(c *runConfig) { c.options.StreamChunks = true }
}

// WithParallelToolCalls lets the model call several tools in one turn; the
// SDK runs them concurrently.
func WithParallelToolCalls() RunOption {
	return func(c *runConfig) { c.options.ParallelToolCalls = true }
}

// EnforcementMode is how required steps and prerequisites are enforced.
type EnforcementMode = forgev1.EnforcementMode

// Enforcement modes.
const (
	// EnforcementBoth (the default): constrain and nudge.
	EnforcementBoth EnforcementMode = forgev1.EnforcementMode_ENFORCEMENT_MODE_BOTH
	// EnforcementConstraint: only by the allowed-tool set of the constraint.
	EnforcementConstraint EnforcementMode = forgev1.EnforcementMode_ENFORCEMENT_MODE_CONSTRAINT
	// EnforcementNudge: only by nudges after the fact.
	EnforcementNudge EnforcementMode = forgev1.EnforcementMode_ENFORCEMENT_MODE_NUDGE
)

// Guardrails switches the server's guardrails off one by one (all are on by
// default), e.g. to measure what each one does.
type Guardrails struct {
	// DisableRescue: do not salvage tool calls from free text.
	DisableRescue bool
	// DisableRetryNudges: invalid responses fail the run at once.
	DisableRetryNudges bool
	// DisableStepEnforcement: terminal tools may run before required steps;
	// prerequisites are ignored.
	DisableStepEnforcement bool
	// DisableErrorRecovery: the first hard tool error fails the run.
	DisableErrorRecovery bool
	// DisableCompaction: never compact the conversation.
	DisableCompaction bool
	// DisableConstrainedDecoding: no grammar/JSON-Schema constraint; tools
	// are described in the prompt and the output is parsed.
	DisableConstrainedDecoding bool
	// DisableCoercion: do not fix near-miss arguments before validation.
	DisableCoercion bool
	// DisableRepeatGuard: let the model repeat its previous successful call
	// unchanged.
	DisableRepeatGuard bool
	// DisableLoopBreaking: let the model run a call identical to one that
	// already failed in this run.
	DisableLoopBreaking bool
	// DisableParameterDocs: describe tool parameters by name and type only
	// (no enum values, required flags, defaults or descriptions).
	DisableParameterDocs bool
	// DisableGrounding: let identifier-like parameters take any value, not
	// only values seen in the conversation.
	DisableGrounding bool
	// DisableToolRelevance: offer every allowed tool each turn, not only the
	// ones most relevant to the request when there are many.
	DisableToolRelevance bool
	// DisableDestructivePolicy: treat destructive tools ([AsDestructive])
	// like any other. By default such a tool is offered only when the user's
	// words ask for it (unless it is a pending required step), and it runs
	// alone, never batched with other calls.
	DisableDestructivePolicy bool
	// DisableResultBinding: let a terminal tool's parameters take any value.
	// By default a report parameter that a successful tool result answers
	// (a label, or the tool that looks it up) only takes what it gave.
	DisableResultBinding bool
	// DisableNumberBounds: let integers take up to 16 digits. By default an
	// integer has at most one digit more than the longest number in the
	// conversation (at least 3).
	DisableNumberBounds bool
	// Enforcement selects how steps and prerequisites are enforced.
	Enforcement EnforcementMode
}

// WithGuardrails sets the run's guardrail switches.
func WithGuardrails(g Guardrails) RunOption {
	return func(c *runConfig) {
		c.options.Guardrails = &forgev1.Guardrails{
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
			Enforcement:                g.Enforcement,
		}
	}
}

// ReasoningReplay is what earlier chain-of-thought is sent back to the model.
type ReasoningReplay = forgev1.ReasoningReplay

// Reasoning replay modes.
const (
	ReasoningReplayNone     ReasoningReplay = forgev1.ReasoningReplay_REASONING_REPLAY_NONE
	ReasoningReplayKeepLast ReasoningReplay = forgev1.ReasoningReplay_REASONING_REPLAY_KEEP_LAST
	ReasoningReplayFull     ReasoningReplay = forgev1.ReasoningReplay_REASONING_REPLAY_FULL
)

// WithReasoningReplay sets what earlier reasoning is replayed to the model
// (server default: the last reasoning message only).
func WithReasoningReplay(r ReasoningReplay) RunOption {
	return func(c *runConfig) { c.options.ReasoningReplay = r }
}

// CompactionStrategy is how the conversation is shortened when it nears the
// context budget.
type CompactionStrategy = forgev1.CompactionStrategy

// Compaction strategies.
const (
	CompactionNone          CompactionStrategy = forgev1.CompactionStrategy_COMPACTION_STRATEGY_NONE
	CompactionSlidingWindow CompactionStrategy = forgev1.CompactionStrategy_COMPACTION_STRATEGY_SLIDING_WINDOW
	// CompactionTiered (the default): three escalating phases that remove
	// whole messages, so the model server's prompt cache survives.
	CompactionTiered CompactionStrategy = forgev1.CompactionStrategy_COMPACTION_STRATEGY_TIERED
)

// WithCompaction selects the compaction strategy (server default tiered).
func WithCompaction(s CompactionStrategy) RunOption {
	return func(c *runConfig) { c.options.Compaction = s }
}

// WithContextBudget sets the run's context budget in tokens; a value above
// the server's budget is capped to it.
func WithContextBudget(tokens int) RunOption {
	return func(c *runConfig) { c.options.ContextBudgetTokens = c.count("WithContextBudget", tokens) }
}

// WithPriority sets the run's scheduling priority on the model server's
// slots: lower runs first, and a waiting run preempts running inference of a
// higher value (default 0).
func WithPriority(p int32) RunOption {
	return func(c *runConfig) { c.options.Priority = p }
}

// WithCancelOnPreempt makes a preempted run fail with
// [*WorkflowCancelledError] instead of waiting to resume.
func WithCancelOnPreempt() RunOption {
	return func(c *runConfig) { c.options.CancelOnPreempt = true }
}

// WithApproveDestructiveCalls makes the server ask before each call of a
// destructive tool ([AsDestructive]): the run's [Approver] (see
// [WithApprover]) decides, and the call is sent to its tool function only
// once approved. A denial, with its reason, reaches the model as the tool's
// result instead. Without an approver every such call is denied.
func WithApproveDestructiveCalls() RunOption {
	return func(c *runConfig) { c.options.ApproveDestructiveCalls = true }
}

// WithApprover sets the function that decides on destructive calls when the
// run asks for approval ([WithApproveDestructiveCalls]; without it the server
// asks nothing and fn is never called).
func WithApprover(fn Approver) RunOption {
	return func(c *runConfig) { c.approver = fn }
}

// Approver decides whether a destructive call may run. It runs in its own
// goroutine, like a tool function, while the run goes on; its ctx is
// cancelled when the run ends or is cancelled, or when the server stops
// waiting for the decision (after the tool timeout, cause [ErrToolTimeout]).
// An error, or a panic, denies the call with the error's text as the reason.
type Approver func(ctx context.Context, req ApprovalRequest) (Approval, error)

// ApprovalRequest is a destructive call that waits for the client's approval
// before it is sent as a tool call (with the same CallID).
type ApprovalRequest struct {
	CallID   string
	ToolName string
	// Arguments is the call's arguments object, already validated against
	// the tool's schema by the server.
	Arguments map[string]any
	Iteration int
}

// Approval is an [Approver]'s decision.
type Approval struct {
	Approved bool
	// Reason says why not; the model reads it with the denial.
	Reason string
}

// The reason of the denial sent when the run has no [Approver].
const noApproverReason = "no approver is configured in this client"
