package forge_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
)

// The SDK's own cost per tool round trip (call received, tool run, result
// sent), against an in-process fake server that answers at once: what
// bench/roundtrip.py measures, without the Python server's share.

const benchIterations = 50

type instantServer struct {
	forgev1.UnimplementedForgeServiceServer
}

func (instantServer) GetServerInfo(context.Context, *forgev1.GetServerInfoRequest) (*forgev1.GetServerInfoResponse, error) {
	return &forgev1.GetServerInfoResponse{}, nil
}

func (instantServer) Run(stream grpc.BidiStreamingServer[forgev1.RunRequest, forgev1.RunResponse]) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	seq := uint64(1)
	if err := stream.Send(&forgev1.RunResponse{Seq: seq, Kind: &forgev1.RunResponse_RunStarted{RunStarted: &forgev1.RunStarted{RunId: "r"}}}); err != nil {
		return err
	}
	for i := 1; i <= benchIterations; i++ {
		name, args := "step", fmt.Sprintf(`{"i":%d}`, i)
		if i == benchIterations {
			name, args = "finish", "{}"
		}
		callID := fmt.Sprintf("call_%d", i)
		// As the server batches them: the tool's message of the last call,
		// the model's call and the call itself.
		events := []*forgev1.RunResponse{
			{Seq: seq + 1, Kind: &forgev1.RunResponse_MessageAppended{MessageAppended: &forgev1.MessageAppended{
				Message: &forgev1.Message{Role: forgev1.Role_ROLE_TOOL, Content: "ok"}, Index: uint32(2 * i),
			}}},
			{Seq: seq + 2, Kind: &forgev1.RunResponse_MessageAppended{MessageAppended: &forgev1.MessageAppended{
				Message: &forgev1.Message{Role: forgev1.Role_ROLE_ASSISTANT, ToolCalls: []*forgev1.ToolCall{{Id: callID, Name: name, ArgumentsJson: args}}},
				Index:   uint32(2*i + 1),
			}}},
			{Seq: seq + 3, Kind: &forgev1.RunResponse_ToolCall{ToolCall: &forgev1.ToolCallRequest{
				CallId: callID, ToolName: name, ArgumentsJson: args, Iteration: uint32(i),
			}}},
		}
		seq += 3
		if err := stream.Send(batchOf(events...)); err != nil {
			return err
		}
		if _, err := stream.Recv(); err != nil {
			return err
		}
	}
	return stream.Send(&forgev1.RunResponse{Seq: seq + 1, Kind: &forgev1.RunResponse_RunCompleted{RunCompleted: &forgev1.RunCompleted{
		TerminalTool: "finish", Result: "done", Iterations: benchIterations,
	}}})
}

func BenchmarkToolRoundTrip(b *testing.B) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	gs := grpc.NewServer()
	forgev1.RegisterForgeServiceServer(gs, instantServer{})
	go gs.Serve(ln)
	defer gs.Stop()
	ctx := context.Background()
	client, err := forge.Dial(ctx, ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	for _, name := range []string{"Run", "RunWithEvents", "RunTraced"} {
		opts := []forge.RunOption{forge.WithReattach(false)}
		if name == "RunWithEvents" {
			opts = append(opts, forge.WithEvents(func(forge.Event) {}))
		}
		b.Run(name, func(b *testing.B) {
			ctx := ctx
			if name == "RunTraced" {
				// Tracing on: a recording provider (no exporter: the
				// export is the application's cost) and a caller span.
				provider := sdktrace.NewTracerProvider()
				previous := otel.GetTracerProvider()
				otel.SetTracerProvider(provider)
				defer otel.SetTracerProvider(previous)
				var span trace.Span
				ctx, span = provider.Tracer("bench").Start(ctx, "caller")
				defer span.End()
			}
			var last time.Time
			var samples []time.Duration
			stamp := func() {
				now := time.Now()
				if !last.IsZero() {
					samples = append(samples, now.Sub(last))
				}
				last = now
			}
			wf := forge.NewWorkflow("bench", "Benchmark.")
			forge.AddTool(wf, "step", "One step.", func(_ context.Context, in stepArgs) (string, error) {
				stamp()
				return fmt.Sprintf("ok %d", in.I), nil
			})
			forge.AddTool(wf, "finish", "Finish.", func(context.Context, struct{}) (string, error) {
				stamp()
				return "done", nil
			}, forge.AsTerminal())
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				// The tools run one at a time: each stamp happens before
				// the next call is sent.
				last = time.Time{}
				if _, err := client.Run(ctx, wf, "go", opts...); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			slices.Sort(samples)
			b.ReportMetric(float64(samples[len(samples)/2].Nanoseconds())/1e3, "p50-us/roundtrip")
			b.ReportMetric(float64(samples[len(samples)*99/100].Nanoseconds())/1e3, "p99-us/roundtrip")
		})
	}
}
