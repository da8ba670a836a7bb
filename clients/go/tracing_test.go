package forge_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	collectorpb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// One trace from the caller through the server into the Go SDK's tool
// functions (issue 35, docs/tracing.md). The test is the caller, with an
// OpenTelemetry SDK tracer provider and its in-memory exporter; the real
// forge-server runs the scripted backend with tracing on (OTEL_* variables)
// and exports OTLP/gRPC to a real receiver: the collector's TraceService,
// served below.

// otlpReceiver keeps every span an OTLP exporter sends it.
type otlpReceiver struct {
	collectorpb.UnimplementedTraceServiceServer
	mu    sync.Mutex
	spans []*tracepb.Span
}

func (r *otlpReceiver) Export(_ context.Context, req *collectorpb.ExportTraceServiceRequest) (*collectorpb.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			r.spans = append(r.spans, ss.GetSpans()...)
		}
	}
	return &collectorpb.ExportTraceServiceResponse{}, nil
}

// find is the received span named name, or nil.
func (r *otlpReceiver) find(name string) *tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.spans {
		if s.GetName() == name {
			return s
		}
	}
	return nil
}

func (r *otlpReceiver) all() []*tracepb.Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...)
}

// startReceiver serves the collector's TraceService on a loopback port and
// returns its endpoint URL.
func startReceiver(t *testing.T) (*otlpReceiver, string) {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	receiver := &otlpReceiver{}
	srv := grpc.NewServer()
	collectorpb.RegisterTraceServiceServer(srv, receiver)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return receiver, "http://" + lis.Addr().String()
}

// callerTracing installs an SDK tracer provider recording into memory as
// the global one (as an application would) for the test's duration.
func callerTracing(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exporter := tracetest.NewInMemoryExporter()
	provider := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	previous := otel.GetTracerProvider()
	otel.SetTracerProvider(provider)
	t.Cleanup(func() {
		otel.SetTracerProvider(previous)
		_ = provider.Shutdown(context.Background())
	})
	return exporter
}

type PrinterError struct{}

func (PrinterError) Error() string { return "the label printer is out of tape" }

func shelvingWorkflow() *forge.Workflow {
	wf := forge.NewWorkflow("go_traced", "Find a shelf, label it, then finish.")
	forge.AddTool(wf, "find_shelf", "Find a free shelf in an aisle.",
		func(_ context.Context, in struct {
			Aisle int `json:"aisle"`
		}) (string, error) {
			return fmt.Sprintf("shelf %d-B", in.Aisle), nil
		}, forge.AsRequired())
	forge.AddTool(wf, "label_shelf", "Label a shelf.",
		func(context.Context, struct {
			Shelf string `json:"shelf"`
		}) (string, error) {
			return "", PrinterError{}
		})
	forge.AddTool(wf, "finish", "Finish.",
		func(_ context.Context, in struct {
			Summary string `json:"summary"`
		}) (string, error) {
			return in.Summary, nil
		}, forge.AsTerminal())
	return wf
}

// runShelving runs go_traced on addr inside the caller's own span and
// returns that span's context.
func runShelving(t *testing.T, addr string) trace.SpanContext {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client, err := forge.Dial(ctx, addr)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx, caller := otel.Tracer("caller").Start(ctx, "caller")
	res, err := client.Run(ctx, shelvingWorkflow(), "Shelve the crate in aisle 7.")
	caller.End()
	if err != nil {
		t.Fatal(err)
	}
	if res.Output != "shelf 7-B found, not labelled" {
		t.Fatalf("output %q", res.Output)
	}
	return caller.SpanContext()
}

// toolSpans are the SDK's execute_tool spans of one trace, by call id.
func toolSpans(t *testing.T, exporter *tracetest.InMemoryExporter, traceID trace.TraceID) map[string]tracetest.SpanStub {
	t.Helper()
	byCall := map[string]tracetest.SpanStub{}
	for _, s := range exporter.GetSpans() {
		if s.SpanContext.TraceID() != traceID || s.Name == "caller" {
			continue
		}
		attrs := attrMap(s.Attributes)
		if s.InstrumentationScope.Name != forge.TracerName || s.SpanKind != trace.SpanKindInternal ||
			attrs["gen_ai.operation.name"] != "execute_tool" || attrs["gen_ai.tool.type"] != "function" ||
			s.Name != "execute_tool "+attrs["gen_ai.tool.name"] {
			t.Errorf("unexpected span %q (scope %q, kind %v, attributes %v)", s.Name, s.InstrumentationScope.Name, s.SpanKind, attrs)
		}
		byCall[attrs["gen_ai.tool.call.id"]] = s
	}
	if len(byCall) != 3 {
		t.Fatalf("want 3 SDK tool spans in the caller's trace, got %d: %v", len(byCall), byCall)
	}
	return byCall
}

func attrMap(kvs []attribute.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[string(kv.Key)] = kv.Value.Emit()
	}
	return out
}

// checkToolOutcome: the failing tool's span is an error named by the error's
// type, the others are left unset.
func checkToolOutcome(t *testing.T, s tracetest.SpanStub) {
	t.Helper()
	attrs := attrMap(s.Attributes)
	if attrs["gen_ai.tool.name"] == "label_shelf" {
		if s.Status.Code != otelcodes.Error || attrs["error.type"] != "forge_test.PrinterError" {
			t.Errorf("label_shelf span: status %v, error.type %q", s.Status, attrs["error.type"])
		}
		return
	}
	if s.Status.Code != otelcodes.Unset || attrs["error.type"] != "" {
		t.Errorf("%s span: status %v, error.type %q", s.Name, s.Status, attrs["error.type"])
	}
}

func TestToolSpansNestUnderTheCallerWhenTheServerDoesNotTrace(t *testing.T) {
	exporter := callerTracing(t)
	caller := runShelving(t, scriptedServer(t))
	for _, s := range toolSpans(t, exporter, caller.TraceID()) {
		if s.Parent.SpanID() != caller.SpanID() {
			t.Errorf("%s: parent %s, want the caller's span %s", s.Name, s.Parent.SpanID(), caller.SpanID())
		}
		checkToolOutcome(t, s)
	}
}

func TestOneTraceRunsFromTheCallerThroughTheServerIntoEachTool(t *testing.T) {
	receiver, endpoint := startReceiver(t)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
	t.Setenv("OTEL_SERVICE_NAME", "forge-under-go-test")
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	root := repoRoot(t)
	scripts := t.TempDir() // a directory of cases: only go_traced's
	if err := os.Symlink(filepath.Join(root, "clients", "go", "testdata", "scripts", "go_traced.json"),
		filepath.Join(scripts, "go_traced.json")); err != nil {
		t.Fatal(err)
	}
	proc, err := startServer(root, 60*time.Second, "--backend", "scripted", "--script", scripts)
	if err != nil {
		t.Fatal(err)
	}
	exporter := callerTracing(t)
	caller := runShelving(t, proc.addr)
	sdkSpans := toolSpans(t, exporter, caller.TraceID())
	// The run span ends last: once it is in, so are the others.
	deadline := time.Now().Add(30 * time.Second)
	for receiver.find("invoke_agent go_traced") == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	proc.stop() // flushes what is left in the server's batch
	run := receiver.find("invoke_agent go_traced")
	if run == nil {
		t.Fatalf("the receiver got no run span; server log:\n%s", proc.log.String())
	}
	traceID := hex.EncodeToString(run.GetTraceId())
	if traceID != caller.TraceID().String() || hex.EncodeToString(run.GetParentSpanId()) != caller.SpanID().String() {
		t.Fatalf("run span in trace %s under %x, want the caller's trace %s under %s",
			traceID, run.GetParentSpanId(), caller.TraceID(), caller.SpanID())
	}
	received := receiver.all()
	chats := 0
	for _, s := range received {
		if strings.HasPrefix(s.GetName(), "chat ") {
			chats++
		}
		if s != run && string(s.GetParentSpanId()) != string(run.GetSpanId()) {
			t.Errorf("server span %q is not a child of the run span", s.GetName())
		}
	}
	if chats != 3 {
		t.Errorf("%d chat spans, want one per model call (3)", chats)
	}
	serverTools := map[string]*tracepb.Span{}
	for _, s := range received {
		if s.GetKind() == tracepb.Span_SPAN_KIND_INTERNAL {
			for _, kv := range s.GetAttributes() {
				if kv.GetKey() == "gen_ai.tool.call.id" {
					serverTools[kv.GetValue().GetStringValue()] = s
				}
			}
		}
	}
	for callID, s := range sdkSpans {
		parent := serverTools[callID]
		if parent == nil {
			t.Errorf("no server execute_tool span for call %s", callID)
			continue
		}
		if parent.GetName() != s.Name || hex.EncodeToString(parent.GetSpanId()) != s.Parent.SpanID().String() ||
			hex.EncodeToString(parent.GetTraceId()) != caller.TraceID().String() {
			t.Errorf("%s (call %s): parent %s, want the server's %q %x", s.Name, callID, s.Parent.SpanID(), parent.GetName(), parent.GetSpanId())
		}
		checkToolOutcome(t, s)
	}
}
