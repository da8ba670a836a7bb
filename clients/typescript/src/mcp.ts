/**
 * Tools from an MCP server: the tools of a connected `Client` from
 * `@modelcontextprotocol/sdk` registered on a workflow, their annotations
 * honoured. The caller owns the client (starts the server, connects, closes
 * it); Forge never connects to an MCP server itself: the tools run here, in
 * the SDK, like any other tool.
 *
 * ```ts
 * const mcp = new Client({ name: "orders-agent", version: "1.0.0" });
 * await mcp.connect(new StdioClientTransport({ command: "orders-mcp-server" }));
 * const { workflow: wf } = await addMcpTools(
 *   workflow("orders", "Answer questions about orders.").withRespondTool(),
 *   mcp,
 *   { exclude: ["purge_cache"] },
 * );
 * const result = await client.run(wf, "Where is order A1?");
 * ```
 *
 * The tool list is read when `addMcpTools` is called: build the workflow (and
 * call it) for each run, so that a run started after the server's
 * `notifications/tools/list_changed` sees the new list.
 *
 * `@modelcontextprotocol/sdk` is an optional peer dependency: only this
 * module's types refer to it, and `addMcpTools` loads it when called.
 */

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { ForgeError, ToolUnreachableError } from "./errors.js";
import type { JsonSchema } from "./schema.js";
import type { Workflow } from "./workflow.js";

/** What the server accepts as a tool name (proto/forge/v1/workflow.proto). */
const TOOL_NAME = /^[A-Za-z_][A-Za-z0-9_.-]{0,63}$/;
/** Pages of tools/list followed at most; a server whose cursors never end is an error. */
const MAX_PAGES = 1000;
/** MCP's JSON-RPC error codes (ErrorCode in @modelcontextprotocol/sdk/types.js). */
const CONNECTION_CLOSED = -32000;
const REQUEST_TIMEOUT = -32001;

/**
 * One MCP tool as `addMcpTools` registered it: its Forge name, the MCP name
 * it calls and its annotations (after MCP's defaults and the caller's overrides).
 */
export interface McpTool {
  readonly name: string;
  readonly mcpName: string;
  readonly destructive: boolean;
  readonly readOnly: boolean;
  readonly idempotent: boolean;
}

export interface McpToolsOptions {
  /** Register only the MCP tools with these names; naming a tool the server does not have is an error. */
  include?: readonly string[] | undefined;
  /** Leave out the MCP tools with these names. */
  exclude?: readonly string[] | undefined;
  /** Put before each Forge tool name (two servers, one workflow); the MCP name is still what is called. */
  prefix?: string | undefined;
  /** Per MCP tool name: destructive or not, whatever the server's annotations say. */
  destructive?: Readonly<Record<string, boolean>> | undefined;
  /** Per MCP tool name: read-only or not, whatever the server's annotations say. */
  readOnly?: Readonly<Record<string, boolean>> | undefined;
  /** Per MCP tool name: idempotent or not, whatever the server's annotations say. */
  idempotent?: Readonly<Record<string, boolean>> | undefined;
  /**
   * Bounds the listing and each call (default 60 000 ms); a call that takes
   * longer throws `ToolUnreachableError` (see `addMcpTools`).
   */
  timeoutMs?: number | undefined;
}

/**
 * The tools of an MCP server could not be listed by `addMcpTools`: the client
 * is closed, the server is gone, not initialized or did not answer in time.
 * Thrown before any run.
 */
export class McpServerError extends ForgeError {
  override name = "McpServerError";
}

/**
 * Thrown by an MCP tool's handler: the server answered `isError` (the message
 * is its content), or the call failed otherwise (the message names the
 * cause). Like any handler error it becomes a tool error the model sees. A
 * call that timed out or lost its connection throws `ToolUnreachableError`
 * instead.
 */
export class McpToolError extends Error {
  override name = "McpToolError";
  /** The MCP tool's name. */
  readonly tool: string;

  constructor(tool: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.tool = tool;
  }
}

/**
 * Register the tools of a connected MCP `client` on `workflow`; returns the
 * new workflow (workflows are immutable) and the registered tools.
 *
 * It lists the tools (`tools/list`, every page) and registers each as a
 * schema tool: its `inputSchema` is the schema, its description the
 * description. Calling it does `tools/call` on `client`: structured content
 * becomes the result as JSON, otherwise the text blocks joined by newlines;
 * image, audio and resource content is named in the result (see
 * `mcpToolResult`); an `isError` result is an `McpToolError` the model sees.
 *
 * MCP's defaults apply to the annotations: a tool is destructive unless its
 * `readOnlyHint` is true or its `destructiveHint` is false; it is read-only
 * when its `readOnlyHint` is true, idempotent when read-only or its
 * `idempotentHint` is true. `destructive`, `readOnly` and `idempotent`
 * override them per MCP tool name. Each tool is registered with these
 * (`ToolOptions.destructive`, `readOnly`, `idempotent`).
 *
 * A call that times out (`timeoutMs`) or loses its connection throws
 * `ToolUnreachableError` naming the cause: the SDK never calls again itself;
 * the server makes the call once more when the tool is read-only or
 * idempotent, and otherwise tells the model that its effect is unknown. The
 * run goes on.
 *
 * Throws `McpServerError` when the tools cannot be listed, and an `Error` for
 * a name Forge cannot use, a name in `include`, `destructive`, `readOnly` or
 * `idempotent` the server does not have, or a clash with a tool already
 * registered; then nothing is registered.
 */
export async function addMcpTools<W extends Workflow<any, any>>(
  workflow: W,
  client: Client,
  options: McpToolsOptions = {},
): Promise<{ workflow: W; tools: McpTool[] }> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const prefix = options.prefix ?? "";
  const exclude = options.exclude ?? [];
  const overrides: Overrides = {
    destructive: options.destructive ?? {},
    readOnly: options.readOnly ?? {},
    idempotent: options.idempotent ?? {},
  };
  const listed = await listTools(client, timeoutMs);
  const have = listed.map((t) => t.name);
  const named = Object.values(overrides).flatMap((o) => Object.keys(o));
  const missing = [...new Set([...(options.include ?? []), ...named])].filter((n) => !have.includes(n));
  if (missing.length > 0) {
    throw new Error(
      `the MCP server has no tool named ${missing.sort().join(", ")} ` +
        `(it has: ${[...have].sort().join(", ") || "none"})`,
    );
  }
  const todo: Array<{ tool: Tool; spec: McpTool }> = [];
  for (const tool of listed) {
    if (options.include !== undefined && !options.include.includes(tool.name)) continue;
    if (exclude.includes(tool.name)) continue;
    const name = prefix + tool.name;
    if (!TOOL_NAME.test(name)) {
      throw new Error(
        `MCP tool ${JSON.stringify(tool.name)} cannot be a Forge tool named ${JSON.stringify(name)} ` +
          `(names match ${TOOL_NAME.source}); leave it out with exclude`,
      );
    }
    if (workflow.tools.has(name) || todo.some((p) => p.spec.name === name)) {
      throw new Error(`workflow ${JSON.stringify(workflow.name)} already has a tool named ${JSON.stringify(name)}`);
    }
    todo.push({ tool, spec: annotations(tool, name, overrides) });
  }
  let out: Workflow<any, any> = workflow;
  for (const { tool, spec } of todo) {
    // The decision is explicit (annotations, MCP's defaults or the override):
    // the server does not infer one from the tool's name.
    const schema = { ...(tool.inputSchema as JsonSchema), "x-forge-destructive": spec.destructive };
    out = out.tool(spec.name, description(tool), schema, caller(client, spec, timeoutMs), {
      destructive: spec.destructive,
      readOnly: spec.readOnly,
      idempotent: spec.idempotent,
    });
  }
  return { workflow: out as W, tools: todo.map((p) => p.spec) };
}

function description(tool: Tool): string {
  return tool.description || tool.title || tool.annotations?.title || tool.name;
}

/** The caller's per-MCP-tool overrides of the annotations. */
interface Overrides {
  destructive: Readonly<Record<string, boolean>>;
  readOnly: Readonly<Record<string, boolean>>;
  idempotent: Readonly<Record<string, boolean>>;
}

/** `record[key]` when it is the record's own (not `toString` and friends). */
function own(record: Readonly<Record<string, boolean>>, key: string): boolean | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

function annotations(tool: Tool, name: string, overrides: Overrides): McpTool {
  // MCP's defaults: readOnlyHint false, destructiveHint true, idempotentHint
  // false; destructive and idempotent mean something only when not read-only.
  const hints = tool.annotations;
  const readOnly = own(overrides.readOnly, tool.name) ?? hints?.readOnlyHint === true;
  const idempotent = own(overrides.idempotent, tool.name) ?? (readOnly || hints?.idempotentHint === true);
  const destructive = own(overrides.destructive, tool.name) ?? (!readOnly && hints?.destructiveHint !== false);
  return { name, mcpName: tool.name, destructive, readOnly, idempotent };
}

async function listTools(client: Client, timeoutMs: number): Promise<Tool[]> {
  const tools: Tool[] = [];
  let cursor: string | undefined;
  const deadline = Date.now() + timeoutMs;
  try {
    for (let page = 0; page < MAX_PAGES; page++) {
      const result = await client.listTools(cursor === undefined ? undefined : { cursor }, {
        timeout: Math.max(1, deadline - Date.now()),
      });
      tools.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) {
        return tools;
      }
    }
  } catch (err) {
    if (codeOf(err) === REQUEST_TIMEOUT) {
      throw new McpServerError(`the MCP server did not list its tools within ${timeoutMs} ms`, { cause: err });
    }
    throw new McpServerError(`the MCP server's tools could not be listed: ${causeOf(err)}`, { cause: err });
  }
  throw new McpServerError(`the MCP server's tool list did not end after ${MAX_PAGES} pages`);
}

function caller(client: Client, spec: McpTool, timeoutMs: number) {
  return async (args: unknown, ctx: { signal: AbortSignal }): Promise<string> => {
    let result: CallToolResult;
    try {
      result = (await client.callTool(
        { name: spec.mcpName, arguments: (args ?? {}) as Record<string, unknown> },
        undefined,
        { timeout: timeoutMs, signal: ctx.signal },
      )) as CallToolResult;
    } catch (err) {
      if (ctx.signal.aborted) {
        throw err; // the run is over or the call abandoned
      }
      // Its effect unknown: the server decides whether to make it again.
      const code = codeOf(err);
      if (code === REQUEST_TIMEOUT) {
        throw new ToolUnreachableError(`MCP tool ${JSON.stringify(spec.mcpName)} timed out after ${timeoutMs} ms`, {
          cause: err,
        });
      }
      if (code === CONNECTION_CLOSED || isNotConnected(err)) {
        throw new ToolUnreachableError(`MCP tool ${JSON.stringify(spec.mcpName)} lost its connection: ${causeOf(err)}`, {
          cause: err,
        });
      }
      throw new McpToolError(spec.mcpName, `MCP tool ${JSON.stringify(spec.mcpName)} failed: ${causeOf(err)}`, {
        cause: err,
      });
    }
    const output = mcpToolResult(result);
    if (result.isError === true) {
      throw new McpToolError(spec.mcpName, output || `MCP tool ${JSON.stringify(spec.mcpName)} reported an error`);
    }
    return output;
  };
}

function codeOf(err: unknown): unknown {
  return typeof err === "object" && err !== null && "code" in err ? (err as { code: unknown }).code : undefined;
}

/** The SDK's error for a request on a client whose transport is gone. */
function isNotConnected(err: unknown): boolean {
  return err instanceof Error && err.message === "Not connected";
}

function causeOf(err: unknown): string {
  if (err instanceof Error) {
    return err.message || err.name;
  }
  return String(err);
}

/**
 * The text the model sees for a `tools/call` result. Structured content, when
 * present, as JSON (its text blocks are the same value serialized, per MCP);
 * else the text blocks, joined by newlines. Content the model cannot read
 * (images, audio, binary resources, resource links) is named, never dropped.
 */
export function mcpToolResult(result: CallToolResult): string {
  const parts: string[] = [];
  const structured = result.structuredContent !== undefined && result.structuredContent !== null;
  if (structured) {
    parts.push(JSON.stringify(result.structuredContent));
  }
  for (const block of result.content ?? []) {
    switch (block.type) {
      case "text":
        if (!structured) parts.push(block.text);
        break;
      case "image":
      case "audio":
        parts.push(`[${block.type} content: ${block.mimeType}, ${block.data.length} bytes base64]`);
        break;
      case "resource_link":
        parts.push(`[resource link: ${block.uri}${about(block.name, block.mimeType)}]`);
        break;
      case "resource": {
        const res = block.resource;
        if ("text" in res && typeof res.text === "string") {
          parts.push(`[resource ${res.uri}${about(undefined, res.mimeType)}]\n${res.text}`);
        } else {
          const blob = "blob" in res && typeof res.blob === "string" ? res.blob : "";
          parts.push(`[resource content: ${res.uri}${about(undefined, res.mimeType)}, ${blob.length} bytes base64]`);
        }
        break;
      }
      default: // a content type newer than this SDK
        parts.push(`[${(block as { type: string }).type} content]`);
    }
  }
  return parts.join("\n");
}

function about(name: string | undefined, mimeType: string | undefined): string {
  const details = [name, mimeType].filter((d): d is string => !!d);
  return details.length > 0 ? ` (${details.join(", ")})` : "";
}
