package forge_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Event batches and omitted event kinds (the contract's StartRun.events):
// the SDK always asks for batches and takes each batched event as if it had
// come alone.

// wireSpy records what the SDK's run streams send and receive, below the
// SDK (a gRPC stream interceptor).
type wireSpy struct {
	mu     sync.Mutex
	starts []*forgev1.StartRun
	// received: every RunResponse read, as it came over the wire.
	received []*forgev1.RunResponse
}

func (w *wireSpy) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	return &spiedStream{ClientStream: cs, spy: w}, nil
}

type spiedStream struct {
	grpc.ClientStream
	spy *wireSpy
}

func (s *spiedStream) SendMsg(m any) error {
	if req, ok := m.(*forgev1.RunRequest); ok && req.GetStart() != nil {
		s.spy.mu.Lock()
		s.spy.starts = append(s.spy.starts, proto.Clone(req.GetStart()).(*forgev1.StartRun))
		s.spy.mu.Unlock()
	}
	return s.ClientStream.SendMsg(m)
}

func (s *spiedStream) RecvMsg(m any) error {
	err := s.ClientStream.RecvMsg(m)
	if res, ok := m.(*forgev1.RunResponse); ok && err == nil {
		s.spy.mu.Lock()
		s.spy.received = append(s.spy.received, proto.Clone(res).(*forgev1.RunResponse))
		s.spy.mu.Unlock()
	}
	return err
}

func (w *wireSpy) batches() int {
	_, n := w.events()
	return n
}

// events flattens the received messages: a batch's events in its place.
func (w *wireSpy) events() (events []*forgev1.RunResponse, batches int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, m := range w.received {
		if b := m.GetBatch(); b != nil {
			batches++
			events = append(events, b.GetEvents()...)
		} else {
			events = append(events, m)
		}
	}
	return events, batches
}

func dialSpied(t *testing.T) (*forge.Client, *wireSpy) {
	t.Helper()
	spy := &wireSpy{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client, err := forge.Dial(ctx, scriptedServer(t),
		forge.WithGRPCDialOptions(grpc.WithStreamInterceptor(spy.intercept)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client, spy
}

type stepArgs struct {
	I int `json:"i"`
}

// batchWorkflow is go_batch's workflow (testdata/scripts/go_batch.json):
// fifteen steps, two of them in one turn, then finish. steps records the
// step calls' arguments in the order they ran.
func batchWorkflow(steps *[]int, mu *sync.Mutex) *forge.Workflow {
	wf := forge.NewWorkflow("go_batch", "Call step until done, then finish.")
	forge.AddTool(wf, "step", "One step.", func(_ context.Context, in stepArgs) (string, error) {
		mu.Lock()
		*steps = append(*steps, in.I)
		mu.Unlock()
		return "stepped", nil
	})
	forge.AddTool(wf, "finish", "Finish.", func(context.Context, struct{}) (string, error) {
		return "done", nil
	}, forge.AsTerminal())
	return wf
}

const batchSteps = 15

func TestRunAsksForBatchesAndDeliversEveryEventInOrder(t *testing.T) {
	client, spy := dialSpied(t)
	var mu sync.Mutex
	var steps []int
	rec := &recorder{}
	// At least three runs, and until a batch came over the wire: whether
	// events are ready together (and so batched) is the server's timing.
	runs := 0
	for ; runs < 3 || (runs < 20 && spy.batches() == 0); runs++ {
		steps = nil
		rec.mu.Lock()
		rec.events = nil
		rec.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		res, err := client.Run(ctx, batchWorkflow(&steps, &mu), "go",
			forge.WithEvents(rec.add), forge.WithMaxIterations(30), forge.WithParallelToolCalls())
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if res.TerminalTool != "finish" || res.Value != "done" {
			t.Fatalf("result = %s %#v", res.TerminalTool, res.Value)
		}

		// Every step ran once; the turn with two calls ran both.
		got := slices.Clone(steps)
		slices.Sort(got)
		want := []int{}
		for i := 1; i <= batchSteps; i++ {
			want = append(want, i)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("steps ran: %v, want each of 1..%d once", steps, batchSteps)
		}

		// Every message, once, in order: indices 0..n-1, the transcript's.
		rec.mu.Lock()
		events := slices.Clone(rec.events)
		rec.mu.Unlock()
		var indices []int
		started, finished := 0, 0
		for _, e := range events {
			switch e := e.(type) {
			case forge.MessageAppended:
				indices = append(indices, e.Index)
			case forge.ToolCallStarted:
				started++
			case forge.ToolCallFinished:
				if e.Err != nil || e.Discarded {
					t.Errorf("call %s %s: err %v discarded %v", e.ToolName, e.CallID, e.Err, e.Discarded)
				}
				finished++
			}
		}
		if _, ok := events[0].(forge.RunStarted); !ok {
			t.Fatalf("first event %T, want RunStarted", events[0])
		}
		if len(indices) != len(res.Transcript) {
			t.Fatalf("%d MessageAppended events, transcript of %d messages", len(indices), len(res.Transcript))
		}
		for i, index := range indices {
			if index != i {
				t.Fatalf("MessageAppended indices %v: want 0..%d in order", indices, len(indices)-1)
			}
		}
		if started != batchSteps+1 || finished != batchSteps+1 {
			t.Fatalf("%d ToolCallStarted, %d ToolCallFinished, want %d each", started, finished, batchSteps+1)
		}
	}

	spy.mu.Lock()
	starts := slices.Clone(spy.starts)
	spy.mu.Unlock()
	if len(starts) != runs {
		t.Fatalf("%d StartRun sent, want %d", len(starts), runs)
	}
	for _, start := range starts {
		if !start.GetEvents().GetBatch() || len(start.GetEvents().GetOmit()) != 0 {
			t.Fatalf("StartRun.events = %v, want batch and nothing omitted", start.GetEvents())
		}
	}
	// The wire carried batches, and their events numbered 1, 2, 3... within
	// each run: what the SDK delivered above came from them.
	wire, batches := spy.events()
	if batches == 0 {
		t.Fatalf("no EventBatch in %d runs (%d events)", runs, len(wire))
	}
	var last uint64
	for _, e := range wire {
		if e.GetRunStarted() != nil {
			last = 0
		}
		if e.GetSeq() != last+1 {
			t.Fatalf("seq %d after %d", e.GetSeq(), last)
		}
		last = e.GetSeq()
	}
	t.Logf("%d runs: %d events over the wire, %d in batches", runs, len(wire), batches)
}

func TestWithoutEventsLeavesMessagesOut(t *testing.T) {
	client, spy := dialSpied(t)
	var mu sync.Mutex
	var steps []int
	rec := &recorder{}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := client.Run(ctx, batchWorkflow(&steps, &mu), "go",
		forge.WithEvents(rec.add), forge.WithMaxIterations(30), forge.WithParallelToolCalls(),
		forge.WithoutEvents(forge.EventMessageAppended))
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminalTool != "finish" || res.Value != "done" {
		t.Fatalf("result = %s %#v", res.TerminalTool, res.Value)
	}
	if len(steps) != batchSteps {
		t.Fatalf("steps ran: %v", steps)
	}

	spy.mu.Lock()
	start := spy.starts[0]
	spy.mu.Unlock()
	if !start.GetEvents().GetBatch() ||
		!slices.Equal(start.GetEvents().GetOmit(), []forgev1.EventKind{forgev1.EventKind_EVENT_KIND_MESSAGE_APPENDED}) {
		t.Fatalf("StartRun.events = %v, want batch, omit MESSAGE_APPENDED", start.GetEvents())
	}
	wire, _ := spy.events()
	for _, e := range wire {
		if e.GetMessageAppended() != nil {
			t.Fatalf("the server sent message_appended (seq %d) although it was left out", e.GetSeq())
		}
	}
	calls := 0
	rec.mu.Lock()
	for _, e := range rec.events {
		switch e.(type) {
		case forge.MessageAppended:
			t.Errorf("MessageAppended delivered although left out: %+v", e)
		case forge.ToolCallStarted:
			calls++
		}
	}
	rec.mu.Unlock()
	if calls != batchSteps+1 {
		t.Fatalf("%d ToolCallStarted, want %d", calls, batchSteps+1)
	}

	// The transcript is whole all the same: the user's message, then an
	// assistant call and its result per turn.
	var tools int
	for _, m := range res.Transcript {
		if m.GetRole() == forge.RoleTool {
			tools++
		}
	}
	if tools != batchSteps+1 || !strings.Contains(transcriptText(res.Transcript), "stepped") {
		t.Fatalf("transcript of %d messages, %d tool results:\n%s", len(res.Transcript), tools, transcriptText(res.Transcript))
	}
}

func TestGuardRefusesWithoutEvents(t *testing.T) {
	client := dial(t)
	var mu sync.Mutex
	var steps []int
	_, err := client.Guard(context.Background(), batchWorkflow(&steps, &mu), nil, forge.ModelReply{Text: "hi"},
		forge.WithoutEvents(forge.EventChunk))
	if err == nil || !strings.Contains(err.Error(), "WithoutEvents") {
		t.Fatalf("Guard with WithoutEvents: %v", err)
	}
}

// batchingServer is a fake ForgeService that sends its events in batches:
// the first stream breaks after a batch holding the run's start, a message
// and a tool call; the reattached stream sends a batch holding both again
// (old seqs) and one new event, then, once the result is in, a batch with
// the tool's message and the run's end. Each event must be delivered once,
// in order, and the tool run once.
type batchingServer struct {
	forgev1.UnimplementedForgeServiceServer
	streams  atomic.Int32
	start    chan *forgev1.StartRun
	afterSeq chan uint64
	result   chan *forgev1.ToolResult
}

func (f *batchingServer) GetServerInfo(context.Context, *forgev1.GetServerInfoRequest) (*forgev1.GetServerInfoResponse, error) {
	return &forgev1.GetServerInfoResponse{}, nil
}

func batchOf(events ...*forgev1.RunResponse) *forgev1.RunResponse {
	return &forgev1.RunResponse{
		Seq:  events[len(events)-1].GetSeq(),
		Kind: &forgev1.RunResponse_Batch{Batch: &forgev1.EventBatch{Events: events}},
	}
}

func appendedAt(seq uint64, index uint32, role forgev1.Role, content string) *forgev1.RunResponse {
	return &forgev1.RunResponse{Seq: seq, Kind: &forgev1.RunResponse_MessageAppended{MessageAppended: &forgev1.MessageAppended{
		Message: &forgev1.Message{Role: role, Content: content}, Index: index,
	}}}
}

func (f *batchingServer) Run(stream grpc.BidiStreamingServer[forgev1.RunRequest, forgev1.RunResponse]) error {
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	call := &forgev1.RunResponse{Seq: 3, Kind: &forgev1.RunResponse_ToolCall{ToolCall: &forgev1.ToolCallRequest{
		CallId: "c1", ToolName: "get_weather", ArgumentsJson: `{"city":"Paris"}`,
	}}}
	user := appendedAt(2, 0, forgev1.Role_ROLE_USER, "Weather in Paris?")
	if f.streams.Add(1) == 1 {
		f.start <- first.GetStart()
		err := stream.Send(batchOf(
			&forgev1.RunResponse{Seq: 1, Kind: &forgev1.RunResponse_RunStarted{RunStarted: &forgev1.RunStarted{RunId: "r1", ReattachGraceS: 30}}},
			user, call,
		))
		if err != nil {
			return err
		}
		return status.Error(codes.Unavailable, "connection reset")
	}
	f.afterSeq <- first.GetReattach().GetAfterSeq()
	err = stream.Send(&forgev1.RunResponse{Kind: &forgev1.RunResponse_RunStarted{RunStarted: &forgev1.RunStarted{
		RunId: "r1", ReattachGraceS: 30, Reattached: true,
	}}})
	if err != nil {
		return err
	}
	queued := &forgev1.RunResponse{Seq: 4, Kind: &forgev1.RunResponse_Queued{Queued: &forgev1.Queued{Position: 0, Iteration: 1}}}
	if err := stream.Send(batchOf(user, call, queued)); err != nil {
		return err
	}
	req, err := stream.Recv()
	if err != nil {
		return err
	}
	f.result <- req.GetToolResult()
	return stream.Send(batchOf(
		appendedAt(5, 1, forgev1.Role_ROLE_TOOL, "sunny in Paris"),
		&forgev1.RunResponse{Seq: 6, Kind: &forgev1.RunResponse_RunCompleted{RunCompleted: &forgev1.RunCompleted{
			TerminalTool: "report_weather", Result: "done", Iterations: 2, TranscriptOmitted: true,
		}}},
	))
}

func TestBatchedEventsAcrossAReattach(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	fake := &batchingServer{
		start:    make(chan *forgev1.StartRun, 1),
		afterSeq: make(chan uint64, 1),
		result:   make(chan *forgev1.ToolResult, 2),
	}
	gs := grpc.NewServer()
	forgev1.RegisterForgeServiceServer(gs, fake)
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	client := dialAddr(t, ln.Addr().String())
	var runs callCounts
	rec := &recorder{}
	wf := weatherWorkflow("go_batching", func(_ context.Context, in weatherArgs) (string, error) {
		runs.add(in.City)
		return "sunny in " + in.City, nil
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := client.Run(ctx, wf, "Weather in Paris?", fastReattach,
		forge.WithEvents(rec.add), forge.WithoutEvents(forge.EventChunk, forge.EventCompacted))
	if err != nil {
		t.Fatal(err)
	}
	if start := <-fake.start; !start.GetEvents().GetBatch() || !slices.Equal(start.GetEvents().GetOmit(),
		[]forgev1.EventKind{forgev1.EventKind_EVENT_KIND_CHUNK, forgev1.EventKind_EVENT_KIND_COMPACTED}) {
		t.Errorf("StartRun.events = %v, want batch, omit CHUNK and COMPACTED", start.GetEvents())
	}
	if got := <-fake.afterSeq; got != 3 {
		t.Errorf("reattach after_seq = %d, want 3 (the last event of the batch)", got)
	}
	if r := <-fake.result; r.GetCallId() != "c1" || r.GetOutput() != "sunny in Paris" {
		t.Errorf("result on the reattached stream: %v", r)
	}
	runs.want(t, "Paris")
	if res.Output != "done" || len(res.Transcript) != 2 || res.Transcript[1].GetContent() != "sunny in Paris" {
		t.Errorf("result %+v (transcript rebuilt from the batched messages: %v)", res, res.Transcript)
	}
	var kinds []string
	rec.mu.Lock()
	for _, e := range rec.events {
		switch e := e.(type) {
		case forge.MessageAppended:
			kinds = append(kinds, fmt.Sprintf("MessageAppended %d", e.Index))
		default:
			kinds = append(kinds, strings.TrimPrefix(fmt.Sprintf("%T", e), "forge."))
		}
	}
	rec.mu.Unlock()
	// ToolCallFinished may come before or after Queued (the tool runs
	// concurrently with the loop); everything else is in the server's order.
	without := slices.DeleteFunc(slices.Clone(kinds), func(k string) bool { return k == "ToolCallFinished" })
	want := []string{"RunStarted", "MessageAppended 0", "ToolCallStarted", "Reattached", "Queued", "MessageAppended 1", "RunCompleted"}
	if !slices.Equal(without, want) || len(kinds) != len(want)+1 {
		t.Errorf("events %v, want %v and one ToolCallFinished", kinds, want)
	}
}
