// Command weather runs two Go functions as tools in the Forge server's
// guarded loop: the same workflow as examples/python/weather.py.
//
// Start the server first (`make run`), then:
//
//	cd examples/go && go run ./weather "What's the weather in Oslo?"
//
// The tools run here, in this process; the server only asks for them over
// the run's stream.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"

	forge "github.com/forge-sidecar/forge/clients/go"
)

type weatherArgs struct {
	City string `json:"city" jsonschema_description:"City name, e.g. \"Paris\"."`
}

type reportArgs struct {
	City    string `json:"city" jsonschema_description:"The city the weather is for."`
	Weather string `json:"weather" jsonschema_description:"The weather, as get_weather returned it."`
}

func getWeather(_ context.Context, in weatherArgs) (string, error) {
	return fmt.Sprintf("72°F and sunny in %s", in.City), nil
}

func reportWeather(_ context.Context, in reportArgs) (string, error) {
	return fmt.Sprintf("Weather report for %s: %s", in.City, in.Weather), nil
}

func workflow() *forge.Workflow {
	wf := forge.NewWorkflow("weather",
		"Look up the current weather for the city the user asks about, then report it.")
	forge.AddTool(wf, "get_weather", "Get current weather for a city.", getWeather,
		forge.AsRequired())
	forge.AddTool(wf, "report_weather", "Report the weather to the user. Ends the task.", reportWeather,
		forge.AsTerminal())
	return wf
}

func show(e forge.Event) {
	switch e := e.(type) {
	case forge.ToolCallStarted:
		fmt.Printf("  -> %s(%s)\n", e.ToolName, e.Arguments)
	case forge.MessageAppended:
		showRefused(e.Message)
	}
}

// showRefused prints a refused attempt as what it was: the model's call or
// text that a guardrail refused, then the correction Forge sent back.
func showRefused(m *forge.Message) {
	if !m.GetTransient() {
		return
	}
	for _, c := range m.GetToolCalls() {
		fmt.Printf("  !! refused call: %s(%s)\n", c.GetName(), c.GetArgumentsJson())
	}
	content := []rune(m.GetContent())
	text := string(content[:min(len(content), 100)])
	switch {
	case text == "":
	case m.GetRole() == forge.RoleAssistant:
		fmt.Printf("  !! refused answer: %s\n", text)
	default:
		fmt.Printf("  !! correction: %s\n", text)
	}
}

func main() {
	address := flag.String("address", forge.DefaultAddress, "Forge server address")
	token := flag.String("token", "", "the server's bearer token (default: $FORGE_TOKEN)")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: weather [--address host:port] [--token T] [question]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	question := "What's the weather in Paris?"
	if flag.NArg() > 0 {
		question = flag.Arg(0)
	}
	// Ctrl-C cancels the run; the server confirms with the transcript.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, *address, *token, question); err != nil {
		// A refusal (Unauthenticated, a bad workflow) or no server: one line.
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, address, token, question string) error {
	var opts []forge.DialOption
	if token != "" {
		opts = append(opts, forge.WithToken(token)) // else Dial reads $FORGE_TOKEN
	}
	client, err := forge.Dial(ctx, address, opts...)
	if err != nil {
		return err
	}
	defer client.Close()
	info, err := client.ServerInfo(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("Forge %s: %s / %s\n", info.GetVersion(), info.GetBackend(), info.GetModel())

	res, err := client.Run(ctx, workflow(), question, forge.WithEvents(show))
	if err != nil {
		return err
	}
	fmt.Println(res.Value)
	fmt.Printf("(%d iterations, %d model calls)\n", res.Iterations, res.Usage.GetModelCalls())
	return nil
}
