package forge

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"os"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
	"google.golang.org/grpc"
)

// DefaultAddress is where `make run` starts the server.
const DefaultAddress = "127.0.0.1:50051"

// Client is a connection to a Forge server. It is safe for concurrent use;
// every run opens its own stream on the shared connection.
type Client struct {
	rpc    forgev1.ForgeServiceClient
	closer io.Closer
}

// Dial connects to the Forge server at address (host:port, or any gRPC
// target such as unix:///path) and checks that it answers before returning.
// Without options it connects in plaintext; see [WithTLS], [WithToken],
// [WithKeepalive] and [WithWaitForServer].
func Dial(ctx context.Context, address string, opts ...DialOption) (*Client, error) {
	cfg := &dialConfig{maxMessage: 16 << 20}
	for _, opt := range opts {
		opt(cfg)
	}
	if !cfg.tokenSet {
		cfg.token = os.Getenv(TokenEnv)
	}
	conn, err := grpc.NewClient(address, cfg.grpcOptions()...)
	if err != nil {
		return nil, fmt.Errorf("forge: dial %s: %w", address, err)
	}
	c := &Client{rpc: forgev1.NewForgeServiceClient(conn), closer: conn}
	_, err = c.rpc.GetServerInfo(ctx, &forgev1.GetServerInfoRequest{}, grpc.WaitForReady(cfg.waitForServer))
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("forge: dial %s: %w", address, rpcError(err))
	}
	return c, nil
}

// NewClient uses an existing gRPC connection (which the caller keeps owning:
// [Client.Close] does not close it).
func NewClient(conn grpc.ClientConnInterface) *Client {
	return &Client{rpc: forgev1.NewForgeServiceClient(conn)}
}

// Close closes the connection [Dial] opened. Runs still open fail with
// [*ConnectionLostError].
func (c *Client) Close() error {
	if c.closer == nil {
		return nil
	}
	return c.closer.Close()
}

// ServerInfo reports what the server runs on (backend, model, context budget,
// active runs...).
func (c *Client) ServerInfo(ctx context.Context) (*ServerInfo, error) {
	info, err := c.rpc.GetServerInfo(ctx, &forgev1.GetServerInfoRequest{})
	if err != nil {
		return nil, rpcError(err)
	}
	return serverInfoFromPb(info), nil
}

// RunResult is a run that ended with a terminal tool.
type RunResult struct {
	RunID        string
	TerminalTool string
	// Value is what the terminal tool's function returned, as a Go value
	// (Output when the server's terminal tool ran elsewhere, e.g. respond).
	Value any
	// Output is the terminal tool's result as it was sent to the server.
	Output     string
	Iterations int
	Usage      *Usage
	// Transcript is the whole conversation, prior messages included. When
	// the server omitted it for size (the contract's
	// RunCompleted.transcript_omitted), the SDK rebuilds it from the prior
	// messages it sent and the [MessageAppended] events, in order.
	Transcript []*Message
}

// Conversation returns the transcript without transient retry artefacts:
// what to pass to [WithPriorMessages] to continue the conversation.
func (r *RunResult) Conversation() []*Message { return Persistent(r.Transcript) }

// Run runs the workflow until a terminal tool succeeds and returns its
// result, running the workflow's tools in this process whenever the model
// calls them.
//
// A run that fails returns a typed error that unwraps to [*RunFailedError] (e.g.
// [*StepEnforcementError]); a request the server refuses returns
// [*RequestRejectedError]. Cancelling ctx cancels the run: the server
// confirms with a [*WorkflowCancelledError] carrying the transcript, which
// also satisfies errors.Is(err, context.Canceled).
func (c *Client) Run(ctx context.Context, wf *Workflow, userMessage string, opts ...RunOption) (*RunResult, error) {
	// Nothing reads the events of a run started here, unless WithEvents
	// takes them: they are not made at all.
	s, err := c.start(ctx, wf, userMessage, opts, true)
	if err != nil {
		return nil, err
	}
	return s.Wait()
}

// Start opens the run's stream and returns at once. Read its events from
// [RunStream.Events] (or pass [WithEvents]), stop it with [RunStream.Cancel]
// or by cancelling ctx, and get the outcome from [RunStream.Wait].
func (c *Client) Start(ctx context.Context, wf *Workflow, userMessage string, opts ...RunOption) (*RunStream, error) {
	return c.start(ctx, wf, userMessage, opts, false)
}

// start starts a run; unread: no one reads [RunStream.Events] (only Wait,
// which discards them).
func (c *Client) start(ctx context.Context, wf *Workflow, userMessage string, opts []RunOption, unread bool) (*RunStream, error) {
	cfg := newRunConfig(opts)
	if cfg.err != nil {
		return nil, cfg.err
	}
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	start := &forgev1.StartRun{
		Workflow:      wf.proto(),
		UserMessage:   userMessage,
		PriorMessages: convertAll(cfg.prior, messageToPb),
		Options:       cfg.options,
		Labels:        cfg.labels,
		SessionId:     cfg.session,
		Events:        cfg.eventOptions(),
	}
	if !cfg.reattach.off {
		// Named here, so a stream that breaks before run_started can still
		// reattach (or start the run again if the start never arrived).
		start.RunId = newRunID()
	}
	// The stream outlives ctx on purpose: cancelling ctx sends a cancel and
	// waits (briefly) for the server's confirmation and transcript. Streams
	// that reattach the run after a break share its values (e.g. metadata,
	// the caller's trace context among them).
	base := context.WithoutCancel(withTraceMetadata(ctx))
	streamCtx, stop := context.WithCancel(base)
	stream, err := c.rpc.Run(streamCtx)
	if err != nil {
		stop()
		return nil, rpcError(err)
	}
	s := newRunStream(wf, c.rpc, cfg)
	s.discard = unread && cfg.onEvent == nil
	go s.run(ctx, base, stream, stop, start)
	return s, nil
}

// newRunID is a random run id: 32 hex characters.
func newRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (it crashes the program instead)
	return hex.EncodeToString(b[:])
}
