package forge_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestWeatherEndToEndWithLlamaServer runs the weather workflow against the
// real server with its managed llama-server and the bundled Gemma 3 270M
// model (nothing mocked), then runs examples/go/weather against it, then a
// workflow whose tools come from a real stdio MCP server (issue 21) and
// examples/go/mcporders. It is a single test so the model is loaded once;
// -short skips it.
func TestWeatherEndToEndWithLlamaServer(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: skipping the run against the real model")
	}
	root := repoRoot(t)
	srv, err := startServer(root, 4*time.Minute, "--slots", "1", "--ctx-size", "4096")
	if err != nil {
		t.Fatalf("Forge server with the bundled model: %v", err)
	}
	defer srv.stop()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	client, err := forge.Dial(ctx, srv.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	info, err := client.ServerInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.GetBackend() != "llama-server" || !strings.HasSuffix(info.GetModel(), ".gguf") ||
		info.GetContextBudgetTokens() != 4096 {
		t.Errorf("server info: %v", info)
	}

	// The tools are closures of this test: what they record ran here, in the
	// Go process, on the server's request.
	var mu sync.Mutex
	var ran []string
	wf := weatherWorkflow("weather", func(_ context.Context, in weatherArgs) (string, error) {
		mu.Lock()
		ran = append(ran, "get_weather:"+in.City)
		mu.Unlock()
		return "72F and sunny in " + in.City, nil
	})
	var chunks int
	res, err := client.Run(ctx, wf, "What's the weather in Paris?", forge.WithStreamChunks(),
		forge.WithEvents(func(e forge.Event) {
			if _, ok := e.(forge.Chunk); ok {
				chunks++
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	if res.TerminalTool != "report_weather" {
		t.Fatalf("terminal tool %q", res.TerminalTool)
	}
	if len(ran) == 0 || ran[0] != "get_weather:Paris" {
		t.Errorf("tools run in this process: %v", ran)
	}
	if r, ok := res.Value.(report); !ok || r.City != "Paris" {
		t.Errorf("result value %#v", res.Value)
	}
	usage := res.Usage
	if int(usage.GetModelCalls()) != res.Iterations || res.Iterations < 2 ||
		usage.GetPromptTokens() == 0 || usage.GetCompletionTokens() == 0 {
		t.Errorf("iterations %d, usage %v", res.Iterations, usage)
	}
	if chunks == 0 {
		t.Error("no streamed chunks")
	}

	t.Run("example", func(t *testing.T) {
		cmd := exec.CommandContext(ctx, goTool(), "run", "./weather", "--address", srv.addr)
		cmd.Dir = filepath.Join(root, "examples", "go")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("examples/go/weather: %v\n%s", err, out)
		}
		t.Logf("examples/go/weather:\n%s", out)
		if !strings.Contains(string(out), "Weather report for Paris") {
			t.Errorf("examples/go/weather printed:\n%s", out)
		}
	})

	// MCP servers as tool sources (issue 21): examples/go/mcporders, built
	// once, is the stdio MCP server (-serve-mcp) of both subtests.
	mcporders := buildMCPOrders(t, root)

	t.Run("mcp", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		mcpClient := mcp.NewClient(&mcp.Implementation{Name: "forge-e2e", Version: "1.0.0"}, nil)
		session, err := mcpClient.Connect(ctx, &mcp.CommandTransport{Command: exec.Command(mcporders, "-serve-mcp")}, nil)
		if err != nil {
			t.Fatalf("MCP server %s -serve-mcp: %v", mcporders, err)
		}
		defer session.Close()

		wf := forge.NewWorkflow("order_lookup", "Look up the order the user asks about, then report it.")
		tools, err := forge.AddMCPTools(ctx, wf, session, forge.MCPInclude("lookup_order"))
		if err != nil {
			t.Fatal(err)
		}
		if len(tools) != 1 || tools[0].Name != "lookup_order" || !tools[0].ReadOnly || tools[0].Destructive {
			t.Fatalf("MCP tools registered: %+v", tools)
		}
		wf.Require("lookup_order")
		var reported []string
		forge.AddTool(wf, "report_order", "Report the order to the user. Ends the task.",
			func(_ context.Context, in orderReport) (orderReport, error) {
				mu.Lock()
				reported = append(reported, in.OrderID)
				mu.Unlock()
				return in, nil
			}, forge.AsTerminal())

		var looked []forge.ToolCallFinished
		res, err := client.Run(ctx, wf, "Where is order A1?", forge.WithEvents(func(e forge.Event) {
			if f, ok := e.(forge.ToolCallFinished); ok && f.ToolName == "lookup_order" {
				mu.Lock()
				looked = append(looked, f)
				mu.Unlock()
			}
		}))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("MCP workflow: %d iterations, result %#v, lookup_order calls %+v", res.Iterations, res.Value, looked)
		if res.TerminalTool != "report_order" {
			t.Fatalf("terminal tool %q", res.TerminalTool)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(reported) == 0 {
			t.Error("report_order did not run in this process")
		}
		if _, ok := res.Value.(orderReport); !ok {
			t.Errorf("result value %#v", res.Value)
		}
		// The MCP server ran the call and its answer went back to the model.
		fromMCP := false
		for _, f := range looked {
			if f.Err == nil && strings.HasPrefix(f.Output, "order ") && strings.HasSuffix(f.Output, ": 2 items, shipped") {
				fromMCP = true
			}
		}
		if !fromMCP {
			t.Errorf("no lookup_order call answered by the MCP server: %+v", looked)
		}
	})

	t.Run("mcp example", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, mcporders, "--address", srv.addr, "Where is order A1?")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("examples/go/mcporders: %v\n%s", err, out)
		}
		t.Logf("examples/go/mcporders:\n%s", out)
		for _, want := range []string{
			"MCP tool lookup_order (destructive: false, read-only: true)",
			"MCP tool add_note (destructive: false, read-only: false)",
			"MCP tool cancel_order (destructive: true, read-only: false)",
		} {
			if !strings.Contains(string(out), want) {
				t.Errorf("examples/go/mcporders did not print %q:\n%s", want, out)
			}
		}
	})
}

// orderReport is report_order's arguments and result.
type orderReport struct {
	OrderID string `json:"order_id" jsonschema:"description=The order, e.g. A1"`
	Summary string `json:"summary" jsonschema:"description=What lookup_order returned"`
}

// goTool is the go command that runs this test.
func goTool() string {
	if goBin, err := exec.LookPath("go"); err == nil {
		return goBin
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}

// buildMCPOrders builds examples/go/mcporders into a temporary directory and
// returns the binary's path.
func buildMCPOrders(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "mcporders")
	cmd := exec.Command(goTool(), "build", "-o", bin, "./mcporders")
	cmd.Dir = filepath.Join(root, "examples", "go")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./mcporders: %v\n%s", err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	}
	return bin
}
