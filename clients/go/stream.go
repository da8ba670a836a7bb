package forge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
	"google.golang.org/grpc"
)

// How long a run whose context was cancelled waits for the server to confirm
// the cancellation (with the transcript) before it drops the stream.
const cancelGrace = 2 * time.Second

// How long to wait for the server to close the stream after the last event.
const closeGrace = time.Second

// How long a stream that broke before the run's RunStarted arrived keeps
// trying to reattach (the server's grace is not known yet); capped by
// [WithReattachDeadline].
const prestartReattach = 30 * time.Second

// The longest one reattach attempt may wait for the server's first answer
// (within the reattach deadline): a replica taking over a run whose holder
// died waits up to the journal's lease (10 s) plus 2 s for it.
const reattachAttemptTimeout = 20 * time.Second

type runStream = grpc.BidiStreamingClient[forgev1.RunRequest, forgev1.RunResponse]

// RunStream is one run in progress, started with [Client.Start].
type RunStream struct {
	wf          *Workflow
	rpc         forgev1.ForgeServiceClient
	onEvent     func(Event)
	approver    Approver
	toolTimeout time.Duration
	reattach    reattachConfig

	cancelOnce   sync.Once
	cancelCh     chan struct{}
	cancelReason string

	events chan Event
	done   chan struct{}
	// discard: no one takes the run's events ([Client.Run] without
	// [WithEvents]), so none are made.
	discard bool

	mu     sync.Mutex
	runID  string
	result *RunResult
	err    error
}

func newRunStream(wf *Workflow, rpc forgev1.ForgeServiceClient, cfg *runConfig) *RunStream {
	s := &RunStream{
		wf:          wf,
		rpc:         rpc,
		onEvent:     cfg.onEvent,
		approver:    cfg.approver,
		toolTimeout: cfg.toolTimeout(),
		reattach:    cfg.reattach,
		cancelCh:    make(chan struct{}),
		events:      make(chan Event, 64),
		done:        make(chan struct{}),
	}
	if s.onEvent != nil {
		close(s.events)
	}
	return s
}

// Events returns the run's events in order; the channel is closed after the
// last one. Read it to the end (or call [RunStream.Wait], which discards what
// is left). With [WithEvents] the events go to the callback instead and the
// channel is closed from the start.
func (s *RunStream) Events() <-chan Event { return s.events }

// Cancel asks the server to stop the run; [RunStream.Wait] then returns a
// [*WorkflowCancelledError] with the transcript. Running tool functions and
// approvers see their context cancelled with cause [ErrRunCancelled]. It does
// not block and may be called more than once (only the first reason is sent).
// While a broken stream is being reattached (see [WithReattach]) there is no
// stream to send the cancellation on: reattaching stops and Wait returns a
// [*ConnectionLostError] (errors.Is(err, ErrRunCancelled) holds).
func (s *RunStream) Cancel(reason string) {
	s.cancelOnce.Do(func() {
		s.cancelReason = reason
		close(s.cancelCh)
	})
}

// RunID is the server's id of the run, once [RunStarted] has arrived.
func (s *RunStream) RunID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.runID
}

// Wait discards unread events, waits for the run to end and returns its
// result or error (see [Client.Run]).
func (s *RunStream) Wait() (*RunResult, error) {
	for range s.events {
	}
	<-s.done
	return s.result, s.err
}

type received struct {
	// gen is the stream's generation: messages of a stream that was
	// replaced are dropped.
	gen int
	msg *forgev1.RunResponse
	err error
}

// reattached is the outcome of reattaching after a break: a new stream and
// its first message (the run_started that opens it; nil on a stream that
// sent the start again), or the error ending the run.
type reattached struct {
	gen    int
	stream runStream
	stop   context.CancelFunc
	first  *forgev1.RunResponse
	err    error
	// afterSeq: the last event handled before the break; attempts: the
	// reattach attempts it took (for the Reattached event).
	afterSeq uint64
	attempts int
}

type toolDone struct {
	callID string
	value  any
	err    error
}

type approvalDone struct {
	callID   string
	approval Approval
	err      error
}

type pendingCall struct {
	name    string
	ctx     context.Context
	cancel  context.CancelCauseFunc
	started time.Time
}

// runLoop is the run's single owner of the stream's send side. The receive
// side runs in its own goroutine; tools and approvers run in one goroutine
// each and report back here, so results and decisions are sent one at a time
// in completion order. After a break of a reattachable run, a goroutine
// opens the next stream and hands it over (reattach); meanwhile stream is
// nil and results are only kept.
type runLoop struct {
	s   *RunStream
	ctx context.Context
	// base is the context of every stream of the run: ctx's values without
	// its cancellation.
	base       context.Context
	stream     runStream
	stopStream context.CancelFunc
	// gen counts the run's streams; it moves on at each break.
	gen        int
	incoming   chan received
	reattached chan reattached
	// stopReattach ends the reattach in progress, if any.
	stopReattach context.CancelFunc
	// broke: the error that broke the last stream.
	broke    error
	toolsOut chan toolDone
	decided  chan approvalDone
	finished chan struct{}

	// lastSeq is the highest RunResponse.seq handled: events up to it are
	// not delivered again (tool calls and approval requests are told apart
	// by call id instead).
	lastSeq uint64
	// grace is the run's RunStarted.reattach_grace_s.
	grace time.Duration
	// start is the run's StartRun, sent again when it never reached the
	// server; startID its client-chosen run id ("" with reattach off).
	start   *forgev1.StartRun
	startID string
	// started: a run_started (reattached or not) was read, so the server
	// has the run.
	started bool
	// prestartUntil: when reattaching a run not started yet gives up.
	prestartUntil time.Time
	// results: every finished call's ToolResult, sent again when the
	// server asks for the call again (after a reattach).
	results map[string]*forgev1.RunRequest
	// decisions: every approver's decision, likewise.
	decisions map[string]*forgev1.RunRequest
	// askedFor: approval requests handed to the approver.
	askedFor map[string]bool

	toolCtx  context.Context
	endTools context.CancelCauseFunc
	pending  map[string]*pendingCall
	// toolNames: the tool of every call dispatched so far, for a
	// cancellation that arrives after the call finished here.
	toolNames map[string]string
	// asking: approval requests whose approver has not answered yet.
	asking map[string]*pendingCall
	values map[string]any

	queue []Event
	out   chan Event

	// streamed: the prior messages, then those received as
	// message_appended, in order; they stand in for a final transcript the
	// server omitted for size.
	// Kept as received: converted only when that transcript is needed.
	streamed []*forgev1.Message

	runID       string
	cancelled   bool
	cancelCause error
	// streamEnded: Recv has reported the end of the stream.
	streamEnded bool
	// abandoned: the server did not confirm a cancellation in time.
	abandoned bool
	// reattach: the Reattached event of the stream attached last, emitted
	// when its run_started arrives; held until the run's own RunStarted
	// when the first stream broke before that one was read.
	reattachEvent *Reattached
	heldReattach  *Reattached
}

func (s *RunStream) run(ctx, base context.Context, stream runStream, stop context.CancelFunc, start *forgev1.StartRun) {
	out := make(chan Event)
	go s.deliver(out)
	toolCtx, endTools := context.WithCancelCause(ctx)
	l := &runLoop{
		s:          s,
		ctx:        ctx,
		base:       base,
		stream:     stream,
		stopStream: stop,
		incoming:   make(chan received),
		reattached: make(chan reattached),
		toolsOut:   make(chan toolDone),
		decided:    make(chan approvalDone),
		finished:   make(chan struct{}),
		results:    map[string]*forgev1.RunRequest{},
		decisions:  map[string]*forgev1.RunRequest{},
		askedFor:   map[string]bool{},
		start:      start,
		startID:    start.GetRunId(),
		toolCtx:    toolCtx,
		// The server sends prior messages back only in a full transcript.
		streamed:  append([]*forgev1.Message(nil), start.GetPriorMessages()...),
		endTools:  endTools,
		pending:   map[string]*pendingCall{},
		toolNames: map[string]string{},
		asking:    map[string]*pendingCall{},
		values:    map[string]any{},
		out:       out,
	}
	go l.receive(l.gen, stream)
	result, err := l.loop(start)

	cause := ErrRunEnded
	if l.cancelled {
		cause = ErrRunCancelled
	}
	endTools(cause)
	if l.stopReattach != nil {
		l.stopReattach()
	}
	if l.stream != nil && !l.streamEnded && !l.abandoned {
		l.awaitClose()
	}
	close(l.finished)
	if l.stopStream != nil {
		l.stopStream()
	}
	for _, e := range l.queue {
		out <- e
	}
	s.mu.Lock()
	s.result, s.err = result, err
	s.mu.Unlock()
	close(out)
}

// deliver hands events to the callback or the channel, then marks the run
// done.
func (s *RunStream) deliver(in <-chan Event) {
	for e := range in {
		if s.onEvent != nil {
			s.onEvent(e)
		} else {
			s.events <- e
		}
	}
	if s.onEvent == nil {
		close(s.events)
	}
	close(s.done)
}

func (l *runLoop) receive(gen int, stream runStream) {
	for {
		msg, err := stream.Recv()
		select {
		case l.incoming <- received{gen, msg, err}:
		case <-l.finished:
			return
		}
		if err != nil {
			return
		}
	}
}

// awaitClose gives the server a moment to end the stream with its status
// after the run's last event, so the stream is not reset under it.
func (l *runLoop) awaitClose() {
	timer := time.NewTimer(closeGrace)
	defer timer.Stop()
	for {
		select {
		case r := <-l.incoming:
			if r.err != nil && r.gen == l.gen {
				return
			}
		case <-timer.C:
			return
		}
	}
}

func (l *runLoop) loop(start *forgev1.StartRun) (*RunResult, error) {
	l.send(&forgev1.RunRequest{Kind: &forgev1.RunRequest_Start{Start: start}})
	ctxDone := l.ctx.Done()
	cancelCh := l.s.cancelCh
	var grace <-chan time.Time
	for {
		var out chan Event
		var next Event
		if len(l.queue) > 0 {
			out, next = l.out, l.queue[0]
		}
		select {
		case out <- next:
			l.queue[0] = nil
			l.queue = l.queue[1:]
		case r := <-l.incoming:
			if r.gen != l.gen {
				continue // a stream replaced after its break
			}
			if r.err != nil {
				if l.startReattach(r.err) {
					continue
				}
				l.streamEnded = true
				if errors.Is(r.err, io.EOF) {
					return nil, &ConnectionLostError{}
				}
				return nil, rpcError(r.err)
			}
			if res, err, end := l.handle(r.msg); end {
				return res, err
			}
		case r := <-l.reattached:
			if res, err, end := l.reattachedStream(r); end {
				return res, err
			}
		case d := <-l.toolsOut:
			l.toolFinished(d)
		case d := <-l.decided:
			l.approvalDecided(d)
		case <-cancelCh:
			cancelCh = nil
			if l.stream == nil {
				l.cancelled = true
				return nil, l.lostWhileReattaching(ErrRunCancelled)
			}
			l.cancel(l.s.cancelReason, nil)
		case <-ctxDone:
			ctxDone = nil
			cause := context.Cause(l.ctx)
			if l.stream == nil {
				l.cancelled = true
				l.cancelCause = cause
				return nil, l.lostWhileReattaching(cause)
			}
			l.cancel(cause.Error(), cause)
			timer := time.NewTimer(cancelGrace)
			defer timer.Stop()
			grace = timer.C
		case <-grace:
			l.abandoned = true
			return nil, &WorkflowCancelledError{&RunFailedError{
				Reason:  ReasonCancelled,
				Message: fmt.Sprintf("the server did not confirm the cancellation within %s", cancelGrace),
				Details: map[string]string{},
				RunID:   l.runID,
				cause:   l.cancelCause,
			}}
		}
	}
}

// reattachedStream takes over the stream a reattach opened and handles its
// first message, or ends the run with the reattach's error; the stream of a
// reattach made stale by a later break is closed.
func (l *runLoop) reattachedStream(r reattached) (res *RunResult, err error, end bool) {
	if r.gen != l.gen {
		if r.stop != nil {
			r.stop()
		}
		return nil, nil, false
	}
	if r.err != nil {
		return nil, r.err, true
	}
	l.attach(r)
	l.reattachEvent = &Reattached{AfterSeq: r.afterSeq, Attempts: r.attempts}
	if r.first == nil {
		return nil, nil, false // the start, sent again
	}
	return l.handle(r.first)
}

func (l *runLoop) emit(e Event) {
	if !l.s.discard {
		l.queue = append(l.queue, e)
	}
}

// send sends req on the current stream; while the run is being reattached
// there is none, and what matters is sent again when the server asks again.
func (l *runLoop) send(req *forgev1.RunRequest) {
	if l.stream != nil {
		// A failed send means the stream is gone; Recv reports why.
		_ = l.stream.Send(req)
	}
}

// handle processes one server message; end is true once the run is over.
// A batch's events are handled one by one, in order, each exactly as if it
// had come alone (its own seq, dedup and dispatch).
func (l *runLoop) handle(msg *forgev1.RunResponse) (res *RunResult, err error, end bool) {
	if batch, ok := msg.GetKind().(*forgev1.RunResponse_Batch); ok {
		for _, event := range batch.Batch.GetEvents() {
			if res, err, end := l.handle(event); end {
				return res, err, true
			}
		}
		return nil, nil, false
	}
	seq := msg.GetSeq()
	switch msg.GetKind().(type) {
	case *forgev1.RunResponse_ToolCall, *forgev1.RunResponse_ApprovalRequest:
		// Sent again after a reattach while they wait for an answer, and
		// possibly under a new seq by a run resumed from the journal: told
		// apart by call id (see dispatch and ask).
	default:
		if seq != 0 && seq <= l.lastSeq {
			return nil, nil, false // delivered before the reattach
		}
	}
	if seq > l.lastSeq {
		l.lastSeq = seq
	}
	switch kind := msg.GetKind().(type) {
	case *forgev1.RunResponse_RunStarted:
		l.runStarted(kind.RunStarted)
	case *forgev1.RunResponse_Chunk:
		m := kind.Chunk
		l.emit(Chunk{Type: m.GetType(), Content: m.GetContent(), Iteration: int(m.GetIteration())})
	case *forgev1.RunResponse_ToolCall:
		l.dispatch(kind.ToolCall)
	case *forgev1.RunResponse_ToolCallCancelled:
		l.toolCallCancelled(kind.ToolCallCancelled)
	case *forgev1.RunResponse_ApprovalRequest:
		l.ask(kind.ApprovalRequest)
	case *forgev1.RunResponse_MessageAppended:
		m := kind.MessageAppended
		l.streamed = append(l.streamed, m.GetMessage())
		if !l.s.discard {
			l.emit(MessageAppended{Message: messageFromPb(m.GetMessage()), Index: int(m.GetIndex())})
		}
	case *forgev1.RunResponse_Compacted:
		l.emit(compactedFromPb(kind.Compacted))
	case *forgev1.RunResponse_ToolOutputScreened:
		l.emit(toolOutputScreenedFromPb(kind.ToolOutputScreened))
	case *forgev1.RunResponse_Queued:
		m := kind.Queued
		l.emit(Queued{Position: int(m.GetPosition()), Iteration: int(m.GetIteration()), Preempted: m.GetPreempted()})
	case *forgev1.RunResponse_RunCompleted:
		result := l.runCompleted(kind.RunCompleted)
		return result, nil, true
	case *forgev1.RunResponse_RunFailed:
		return nil, runFailed(kind.RunFailed, l.runID, l.streamed, l.cancelCause), true
	}
	return nil, nil, false
}

// runStarted handles a run_started: the run's own (its RunStarted event), or
// one that opens a reattached stream (its Reattached event).
func (l *runLoop) runStarted(m *forgev1.RunStarted) {
	l.started = true
	if grace := m.GetReattachGraceS(); grace > 0 || !m.GetReattached() {
		l.grace = time.Duration(grace) * time.Second
	}
	if m.GetReattached() {
		// It opens a reattached stream: the run's own RunStarted was
		// delivered already, or follows (seq 1) when the first stream
		// broke before it arrived (the Reattached event waits for it).
		if ev := l.reattachEvent; ev != nil {
			l.reattachEvent = nil
			ev.RunID = m.GetRunId()
			if l.runID == "" {
				l.heldReattach = ev
			} else {
				l.emit(*ev)
			}
		}
		return
	}
	l.runID = m.GetRunId()
	l.s.mu.Lock()
	l.s.runID = l.runID
	l.s.mu.Unlock()
	l.emit(RunStarted{
		RunID:               m.GetRunId(),
		Backend:             m.GetBackend(),
		Model:               m.GetModel(),
		ContextBudgetTokens: int(m.GetContextBudgetTokens()),
		ToolCallMode:        m.GetToolCallMode(),
		BackendChain:        m.GetBackendChain(),
		ReattachGrace:       l.grace,
	})
	if ev := l.heldReattach; ev != nil {
		l.heldReattach = nil
		l.emit(*ev)
	}
}

// runCompleted is the run's result, also its last event (RunCompleted).
func (l *runLoop) runCompleted(m *forgev1.RunCompleted) *RunResult {
	value, ok := l.values[m.GetTerminalCallId()]
	if !ok {
		value = m.GetResult()
	}
	transcript := withResult(m)
	if m.GetTranscriptOmitted() {
		transcript = convertAll(l.streamed, messageFromPb)
	}
	result := &RunResult{
		RunID:        l.runID,
		TerminalTool: m.GetTerminalTool(),
		Value:        value,
		Output:       m.GetResult(),
		Iterations:   int(m.GetIterations()),
		Usage:        usageFromPb(m.GetUsage()),
		Transcript:   transcript,
	}
	l.emit(RunCompleted{Result: result})
	return result
}

// dispatch starts the tool function of a tool-call request in its own
// goroutine. A call the server asks for again (after a reattach) does not
// run again: its result is sent again when it has one, and is sent when the
// call finishes otherwise.
func (l *runLoop) dispatch(req *forgev1.ToolCallRequest) {
	callID, name := req.GetCallId(), req.GetToolName()
	if result := l.results[callID]; result != nil {
		l.send(result)
		return
	}
	if _, seen := l.toolNames[callID]; seen {
		return
	}
	l.toolNames[callID] = name
	args := json.RawMessage(req.GetArgumentsJson())
	l.emit(ToolCallStarted{
		CallID:    callID,
		ToolName:  name,
		Arguments: args,
		Iteration: int(req.GetIteration()),
		Coercions: req.GetCoercions(),
	})
	if l.cancelled {
		// The server is already cancelling; it will not wait for this call.
		l.emit(ToolCallFinished{CallID: callID, ToolName: name, Err: ErrRunCancelled, Discarded: true})
		return
	}
	p := l.newPending(name)
	l.pending[callID] = p
	timed := withToolCall(p.ctx, ToolCallInfo{
		CallID:    callID,
		ToolName:  name,
		RunID:     l.runID,
		Iteration: int(req.GetIteration()),
	})
	tool := l.s.wf.Tool(name)
	go func() {
		var d toolDone
		if tool == nil {
			d = toolDone{callID: callID, err: fmt.Errorf("no tool %q is registered in this client", name)}
		} else {
			spanCtx, span := startToolSpan(timed, req)
			v, err := tool.Call(spanCtx, args)
			endToolSpan(span, err)
			d = toolDone{callID: callID, value: v, err: err}
		}
		select {
		case l.toolsOut <- d:
		case <-l.finished:
		}
	}()
}

// toolCallCancelled stops a tool call the server no longer waits for: its
// result will be discarded (see [runLoop.toolFinished]).
func (l *runLoop) toolCallCancelled(m *forgev1.ToolCallCancelled) {
	ev := ToolCallCancelled{CallID: m.GetCallId(), ToolName: l.toolNames[m.GetCallId()], Reason: m.GetReason()}
	if p := l.pending[m.GetCallId()]; p != nil {
		p.cancel(ErrToolTimeout)
	}
	l.emit(ev)
}

// toolFinished sends a tool's result to the server, unless the server no
// longer waits for it.
func (l *runLoop) toolFinished(d toolDone) {
	p := l.pending[d.callID]
	if p == nil {
		return
	}
	delete(l.pending, d.callID)
	discard := l.cancelled || p.ctx.Err() != nil
	p.cancel(nil)
	ev := ToolCallFinished{
		CallID:    d.callID,
		ToolName:  p.name,
		Err:       d.err,
		Duration:  time.Since(p.started),
		Discarded: discard,
	}
	result := &forgev1.ToolResult{CallId: d.callID}
	if d.err == nil {
		out, err := encodeOutput(d.value)
		if err != nil {
			ev.Err = err
		} else {
			ev.Output = out
			result.Outcome = &forgev1.ToolResult_Output{Output: out}
		}
	}
	if ev.Err != nil {
		result.Outcome = &forgev1.ToolResult_Error{Error: toolError(ev.Err)}
	} else if l.s.wf.isTerminal(p.name) {
		l.values[d.callID] = d.value
	}
	req := &forgev1.RunRequest{Kind: &forgev1.RunRequest_ToolResult{ToolResult: result}}
	// Kept for the run's lifetime: sent again if the server asks again.
	l.results[d.callID] = req
	if !discard {
		l.send(req)
	}
	l.emit(ev)
}

// cancel asks the server to stop the run and cancels running tools.
func (l *runLoop) cancel(reason string, cause error) {
	if l.cancelCause == nil {
		l.cancelCause = cause
	}
	if l.cancelled {
		return
	}
	l.cancelled = true
	l.send(&forgev1.RunRequest{Kind: &forgev1.RunRequest_Cancel{Cancel: &forgev1.CancelRun{Reason: reason}}})
	for _, p := range l.pending {
		p.cancel(ErrRunCancelled)
	}
	for _, p := range l.asking {
		p.cancel(ErrRunCancelled)
	}
}
