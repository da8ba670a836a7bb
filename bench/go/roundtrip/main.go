// Command roundtrip drives bench/roundtrip.py's K-iteration workflow through
// the Go SDK and prints every per-iteration latency (microseconds) as JSON.
//
// It is started by `python -m bench.roundtrip` against its Forge server:
//
//	cd bench/go && go run ./roundtrip -addr 127.0.0.1:50051 -iterations 50 -runs 20
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
	flag.Parse()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
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
	if err := json.NewEncoder(os.Stdout).Encode(map[string]any{"samples_us": samples}); err != nil {
		log.Fatal(err)
	}
}
