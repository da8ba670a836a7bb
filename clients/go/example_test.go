package forge_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	forge "github.com/forge-sidecar/forge/clients/go"
)

func ExampleAddTool() {
	type args struct {
		City string `json:"city" jsonschema:"description=City name"`
		Days int    `json:"days,omitempty" jsonschema:"minimum=1,maximum=7"`
	}
	wf := forge.NewWorkflow("forecast", "Get the forecast, then report it.")
	tool := forge.AddTool(wf, "get_forecast", "Get the forecast for a city",
		func(ctx context.Context, in args) (string, error) {
			if in.City == "Atlantis" {
				return "", forge.Resolutionf("no city named %q", in.City)
			}
			return fmt.Sprintf("sunny in %s for %d days", in.City, max(in.Days, 1)), nil
		}, forge.AsRequired())
	fmt.Println(string(tool.Schema))
	// Output: {"properties":{"city":{"type":"string","description":"City name"},"days":{"type":"integer","maximum":7,"minimum":1}},"additionalProperties":false,"type":"object","required":["city"]}
}

func ExampleClient_Run() {
	ctx := context.Background()
	client, err := forge.Dial(ctx, forge.DefaultAddress)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	wf := forge.NewWorkflow("weather", "Look up the weather, then report it.")
	forge.AddTool(wf, "get_weather", "Get current weather for a city",
		func(ctx context.Context, in struct {
			City string `json:"city" jsonschema:"description=City name"`
		}) (string, error) {
			return "72°F and sunny in " + in.City, nil
		})
	forge.AddTool(wf, "report_weather", "Report the weather. Ends the task.",
		func(ctx context.Context, in struct {
			City    string `json:"city"`
			Weather string `json:"weather"`
		}) (string, error) {
			return in.City + ": " + in.Weather, nil
		})
	wf.Require("get_weather").Terminal("report_weather")

	res, err := client.Run(ctx, wf, "What's the weather in Paris?",
		forge.WithMaxIterations(6),
		forge.WithEvents(func(e forge.Event) {
			if call, ok := e.(forge.ToolCallStarted); ok {
				fmt.Printf("-> %s(%s)\n", call.ToolName, call.Arguments)
			}
		}))
	var steps *forge.StepEnforcementError
	switch {
	case errors.As(err, &steps):
		log.Fatalf("skipped steps %s after %d iterations", steps.Details["pending_steps"], steps.Iterations)
	case err != nil:
		log.Fatal(err)
	}
	fmt.Println(res.Value)

	// Continue the conversation.
	res, err = client.Run(ctx, wf, "And in Oslo?", forge.WithPriorMessages(res.Conversation()...))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Value)
}

func ExampleRunStream() {
	ctx := context.Background()
	client, err := forge.Dial(ctx, forge.DefaultAddress)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	wf := forge.NewWorkflow("chat", "Answer the user.")
	wf.RespondTool = true

	stream, err := client.Start(ctx, wf, "Hi!", forge.WithStreamChunks())
	if err != nil {
		log.Fatal(err)
	}
	for e := range stream.Events() {
		switch e := e.(type) {
		case forge.Chunk:
			fmt.Print(e.Content)
		case forge.Queued:
			if e.Position > 5 {
				stream.Cancel("too busy")
			}
		}
	}
	res, err := stream.Wait()
	if errors.As(err, new(*forge.WorkflowCancelledError)) {
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.Output)
}
