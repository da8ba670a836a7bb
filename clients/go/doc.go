// Package forge is the Go SDK of Forge, a gRPC sidecar that runs a guarded
// LLM tool-calling loop. The tool functions stay in your process: the server
// sends a tool-call request down the run's stream whenever the model calls a
// tool, the SDK decodes the arguments into your function's argument struct,
// runs it and sends the result back on the same stream.
//
//	client, err := forge.Dial(ctx, "127.0.0.1:50051")
//	if err != nil { ... }
//	defer client.Close()
//
//	type weatherArgs struct {
//		City string `json:"city" jsonschema:"description=City name"`
//	}
//	wf := forge.NewWorkflow("weather", "Look up the weather, then report it.")
//	forge.AddTool(wf, "get_weather", "Get current weather for a city",
//		func(ctx context.Context, in weatherArgs) (string, error) {
//			return "72°F and sunny in " + in.City, nil
//		})
//	forge.AddTool(wf, "report_weather", "Report the weather. Ends the task.", report)
//	wf.Require("get_weather").Terminal("report_weather")
//
//	res, err := client.Run(ctx, wf, "What's the weather in Paris?",
//		forge.WithEvents(func(e forge.Event) { log.Println(e) }))
//
// A run either returns a [RunResult] or fails with a typed error carrying the
// transcript: [*StepEnforcementError], [*ToolCallError], [*ToolExecutionError],
// [*PrerequisiteError], [*MaxIterationsError], [*WorkflowCancelledError],
// [*BackendError], [*ContextBudgetExceededError], [*InternalServerError] or
// [*ShuttingDownError] (all unwrap to [*RunFailedError]); a request the server
// refuses is a [*RequestRejectedError] and a broken stream a
// [*ConnectionLostError].
//
// Tools that cannot be undone are registered with [AsDestructive]: the server
// offers them only when the user's words ask for them and runs them alone.
// With [WithApproveDestructiveCalls] each such call also waits for the run's
// [Approver] ([WithApprover]), which sees an [ApprovalRequested] event first:
//
//	forge.AddTool(wf, "delete_service", "Delete a service permanently", deleteService,
//		forge.AsDestructive())
//	res, err := client.Run(ctx, wf, "Delete the old staging service.",
//		forge.WithApproveDestructiveCalls(),
//		forge.WithApprover(func(ctx context.Context, req forge.ApprovalRequest) (forge.Approval, error) {
//			return forge.Approval{Approved: askOperator(ctx, req)}, nil
//		}))
//
// Tool schemas are derived from the argument struct with
// github.com/invopop/jsonschema (descriptions from `jsonschema` struct tags);
// [AddSchemaTool] registers a tool from a raw JSON Schema instead.
package forge
