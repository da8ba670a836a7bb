package forge_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
)

// TestWeatherEndToEndWithLlamaServer runs the weather workflow against the
// real server with its managed llama-server and the bundled Gemma 3 270M
// model (nothing mocked), then runs examples/go/weather against it. It is a
// single test so the model is loaded once; -short skips it.
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
		goBin, err := exec.LookPath("go")
		if err != nil {
			goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		cmd := exec.CommandContext(ctx, goBin, "run", "./weather", "--address", srv.addr)
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
}
