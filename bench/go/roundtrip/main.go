// Command roundtrip drives bench/roundtrip.py's K-iteration workflow through
// the Go SDK and prints every per-iteration latency (microseconds) as JSON.
//
// It is started by `python -m bench.roundtrip` against its Forge server:
//
//	cd bench/go && go run ./roundtrip -addr 127.0.0.1:50051 -iterations 50 -runs 20
//
// With -echo it measures the bare Go gRPC round trip against bench/echo.py
// instead (no Forge, no SDK; -request-bytes per message sent), printing the
// same JSON:
//
//	cd bench/go && go run ./roundtrip -echo 127.0.0.1:50099 -request-bytes 18 -iterations 50 -runs 20
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"time"

	forge "github.com/forge-sidecar/forge/clients/go"
)

type stepArgs struct {
	I int `json:"i"`
}

type finishArgs struct{}

func workflow(stamps *[]time.Time) *forge.Workflow {
	wf := forge.NewWorkflow("roundtrip", "Benchmark: call step until done, then finish.")
	forge.AddTool(wf, "step", "One step.", func(_ context.Context, in stepArgs) (string, error) {
		*stamps = append(*stamps, time.Now())
		return fmt.Sprintf("ok %d", in.I), nil
	})
	forge.AddTool(wf, "finish", "Finish.", func(_ context.Context, _ finishArgs) (string, error) {
		*stamps = append(*stamps, time.Now())
		return "done", nil
	})
	wf.Terminal("finish")
	return wf
}

func main() {
	addr := flag.String("addr", "127.0.0.1:50051", "Forge server address")
	iterations := flag.Int("iterations", 50, "iterations per run (the server's script)")
	runs := flag.Int("runs", 20, "measured runs")
	warmup := flag.Int("warmup", 1, "unmeasured runs first")
	echo := flag.String("echo", "", "measure the bare gRPC round trip against bench/echo.py at this address instead")
	requestBytes := flag.Int("request-bytes", 18, "with -echo: bytes per message sent")
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if *echo != "" {
		samples, err := measureEcho(ctx, *echo, *iterations, *runs, *warmup, *requestBytes)
		if err != nil {
			log.Fatalf("echo %s: %v", *echo, err)
		}
		printSamples(samples)
		return
	}
	client, err := forge.Dial(ctx, *addr)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	samples := []float64{}
	for n := 0; n < *warmup+*runs; n++ {
		stamps := []time.Time{}
		res, err := client.Run(ctx, workflow(&stamps), "go", forge.WithMaxIterations(*iterations))
		if err != nil {
			log.Fatalf("run %d: %v", n, err)
		}
		if res.Iterations != *iterations {
			log.Fatalf("run %d ended after %d iterations", n, res.Iterations)
		}
		if n < *warmup {
			continue
		}
		for i := 1; i < len(stamps); i++ {
			samples = append(samples, float64(stamps[i].Sub(stamps[i-1]).Nanoseconds())/1e3)
		}
	}
	printSamples(samples)
}

func printSamples(samples []float64) {
	if err := json.NewEncoder(os.Stdout).Encode(map[string]any{"samples_us": samples}); err != nil {
		log.Fatal(err)
	}
}
