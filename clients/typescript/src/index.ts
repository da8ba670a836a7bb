/**
 * Forge TypeScript/Node SDK: register local functions as tools and run guarded
 * tool-calling workflows on a Forge server over one bidirectional gRPC stream
 * per run.
 *
 * ```ts
 * const client = createForgeClient({ address: "127.0.0.1:50051" });
 * const wf = workflow("weather", "Look up the weather and report it.")
 *   .tool("get_weather", "Get current weather for a city", z.object({ city: z.string() }),
 *     async ({ city }) => `72°F and sunny in ${city}`, { required: true })
 *   .tool("report_weather", "Report the weather", z.object({ city: z.string(), weather: z.string() }),
 *     async (a) => `Report: ${a.weather}`, { terminal: true });
 * const result = await client.run(wf, "What's the weather in Paris?");
 * ```
 */

export {
  DEFAULT_ADDRESS,
  ForgeClient,
  type ForgeClientOptions,
  type GuardOptions,
  type OmittableEvent,
  type RunCallOptions,
  type RunOptions,
  type BackendHealth,
  type ServerInfo,
  type StreamOptions,
  type TlsOptions,
  createForgeClient,
} from "./client.js";
export {
  type ApprovalDecidedEvent,
  type ApprovalRequest,
  type ApprovalRequestedEvent,
  type ChunkEvent,
  type ChunkKind,
  type CompactedEvent,
  type ForgeEvent,
  type MessageAppendedEvent,
  type QueuedEvent,
  type ReattachedEvent,
  type RunCompletedEvent,
  type RunResult,
  type RunStartedEvent,
  type ToolCallCancelledEvent,
  type ToolCallFinishedEvent,
  type ToolCallStartedEvent,
  type ToolFailure,
  type ToolOutputScreenedEvent,
  // Deprecated aliases, kept for one release.
  type ToolCallEvent,
  type ToolResultEvent,
} from "./events.js";
export {
  type GuardCallsVerdict,
  type GuardDoneVerdict,
  type GuardRetryVerdict,
  type GuardVerdict,
  type GuardedCall,
  TOOL_ERROR_PREFIX,
  toolResultMessage,
} from "./guard.js";
export { type Approval, type ApprovalContext, type Approver, RunStream, encodeOutput } from "./run_stream.js";
export {
  BackendError,
  ConnectionLostError,
  ContextBudgetExceededError,
  type FailureReasonName,
  type FieldViolation,
  ForgeError,
  InternalServerError,
  MaxIterationsError,
  PrerequisiteError,
  RequestRejectedError,
  RunFailedError,
  ShuttingDownError,
  StepEnforcementError,
  ToolCallError,
  ToolExecutionError,
  ToolResolutionError,
  ToolUnreachableError,
  WorkflowCancelledError,
} from "./errors.js";
export {
  type McpTool,
  McpServerError,
  McpToolError,
  type McpToolsOptions,
  addMcpTools,
  mcpToolResult,
} from "./mcp.js";
export type {
  IterationUsage,
  Message,
  MessageInput,
  MessageType,
  Role,
  ToolCallRecord,
  Usage,
} from "./messages.js";
export {
  type ArgsOf,
  type FromJsonSchema,
  type JsonSchema,
  type StandardSchemaV1,
  type ToolSchema,
  ToolArgumentsError,
} from "./schema.js";
export {
  type Coercion,
  type Prerequisite,
  type RunValue,
  type SecretsPolicy,
  type ToolContext,
  type ToolDefinition,
  type ToolHandler,
  type ToolOptions,
  Workflow,
  type WorkflowOptions,
  workflow,
} from "./workflow.js";
