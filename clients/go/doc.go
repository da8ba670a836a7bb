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
// refuses is a [*RequestRejectedError] and a broken stream that could not be
// reattached (see below) a [*ConnectionLostError].
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
// # Tools from MCP servers
//
// [AddMCPTools] registers the tools of a connected MCP client session
// (github.com/modelcontextprotocol/go-sdk) on a workflow: each tool's
// inputSchema is its schema, its destructiveHint (MCP's defaults when absent)
// makes it destructive, its readOnlyHint and idempotentHint make it read-only
// and idempotent, and its calls go to the MCP server from this process. A
// call that times out or loses its connection is a [*ToolUnreachableError]:
// the server makes it once more only for a read-only or idempotent tool.
// The caller owns the session; the Forge server never connects to it:
//
//	session, err := mcp.NewClient(impl, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
//	tools, err := forge.AddMCPTools(ctx, wf, session, forge.MCPExclude("purge_cache"))
//
// # Durable runs: reattach
//
// A server with a run journal (forge-server --journal, SQLite by default;
// --journal none turns it off) keeps a run going for --reattach-grace
// seconds after its stream breaks ([RunStarted].ReattachGrace). The SDK then
// reattaches on its own: it opens a new stream on the same [Client] and
// sends ReattachRun with the last event it handled, retrying with
// exponential backoff and jitter (50 ms doubling to 2 s,
// [WithReattachBackoff]) until the run's grace, or [WithReattachDeadline],
// has passed. For the caller the run goes on unchanged: each event reaches
// the callback or channel once, tool functions and approvers are not
// interrupted by the break and run once per call id (a result computed
// while no stream was open is sent when the server asks for the call
// again), and [Client.Run] returns the run's outcome. [WithReattach](false)
// turns this off. A run that cannot be reattached (no journal, the server
// lost the run or another caller owns it, the deadline passed, the run was
// cancelled while reattaching) fails with [*ConnectionLostError] as before.
//
// # Client-side load balancing
//
// Replicas of forge-server that share a journal (PostgreSQL,
// --journal postgresql://...) serve the same runs. Dial them through gRPC's
// DNS resolver with the round_robin policy (e.g. a Kubernetes headless
// Service; see the README, "Running on Kubernetes"):
//
//	client, err := forge.Dial(ctx, "dns:///forge-headless.NAMESPACE.svc.cluster.local:50051",
//		forge.WithGRPCDialOptions(grpc.WithDefaultServiceConfig(
//			`{"loadBalancingConfig":[{"round_robin":{}}]}`)))
//
// The channel connects to every address the name resolves to and spreads
// the runs, one Run stream each, over them. A reattach is a new stream, so it
// may land on any replica: that replica takes the run over from the journal
// (a replica that still holds it is asked to let go; one that died loses
// it when its lease runs out, and the SDK retries the UNAVAILABLE RUN_BUSY
// answers meanwhile). A draining replica (SIGTERM) whose drain period ends
// hands its runs over: their streams end UNAVAILABLE SHUTTING_DOWN and the
// SDK reattaches them to another replica. gRPC resolves the name again when
// a connection breaks. Without round_robin (gRPC's default pick_first) a
// client keeps one connection to one replica and reattaches through it once
// it reconnects.
//
// Tool schemas are derived from the argument struct with
// github.com/invopop/jsonschema (descriptions from `jsonschema` struct tags);
// [AddSchemaTool] registers a tool from a raw JSON Schema instead.
package forge
