/**
 * The tools of an MCP server, run by the Forge server's guarded loop.
 *
 * Start the Forge server first (`make run`), then, from clients/typescript:
 *   npm run build && tsc -p tsconfig.test.json
 *   node dist-test/examples/typescript/mcp_orders.js "What is the status of order A1?" \
 *     [--address 127.0.0.1:50051] [--approve]
 *
 * This file is also the MCP server: it starts itself with `--serve-mcp` as a
 * stdio MCP server (written with @modelcontextprotocol/sdk's McpServer, three
 * tools, one of them destructive), connects to it, and registers its tools on
 * a workflow with `addMcpTools`. The MCP client is this process's: Forge never
 * connects to an MCP server, it asks this process for each call over the
 * run's stream. cancel_order has no annotations, so by MCP's defaults it is
 * destructive: the run asks before each call, and this script denies unless
 * started with --approve (or you answer "y" on a terminal).
 */

import { createInterface } from "node:readline/promises";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import {
  type Approval,
  type ApprovalContext,
  type ApprovalRequest,
  type ForgeEvent,
  type Workflow,
  addMcpTools,
  createForgeClient,
  workflow,
} from "@forge-sidecar/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const ORDERS: Record<string, string> = { A1: "shipped", B2: "packing", C3: "delivered" };

const text = (s: string) => ({ content: [{ type: "text" as const, text: s }] });

/** The MCP server: three tools over stdin/stdout (stdout is the protocol's: never print there). */
async function serveMcp(): Promise<void> {
  const server = new McpServer({ name: "orders", version: "1.0.0" });
  const orderId = z.string().describe('The order id, e.g. "A1".');
  server.registerTool(
    "lookup_order",
    {
      description: "Look up an order by its id: its shipping status.",
      inputSchema: { order_id: orderId },
      annotations: { readOnlyHint: true },
    },
    async ({ order_id }) => text(`order ${order_id}: ${ORDERS[order_id.toUpperCase()] ?? "unknown order"}`),
  );
  server.registerTool(
    "add_note",
    {
      description: "Add a note to an order.",
      inputSchema: { order_id: orderId, note: z.string().describe("The note to add.") },
      annotations: { destructiveHint: false },
    },
    async ({ order_id }) => text(`note added to order ${order_id}`),
  );
  // No annotations: MCP's defaults make it destructive.
  server.registerTool(
    "cancel_order",
    { description: "Cancel an order for good. It cannot be undone.", inputSchema: { order_id: orderId } },
    async ({ order_id }) => {
      ORDERS[order_id.toUpperCase()] = "cancelled";
      return text(`order ${order_id} cancelled`);
    },
  );
  await server.connect(new StdioServerTransport());
}

/** The workflow's own tool: the terminal report. The MCP tools join it per run. */
function orders() {
  return workflow("orders", "Look up the order the user asks about, then report its status.").tool(
    "report_status",
    "Report an order's status to the user. Ends the task.",
    z.object({
      order_id: z.string().describe('The order, e.g. "A1".'),
      status: z.string().describe("Its status, as lookup_order returned it."),
    }),
    async ({ order_id, status }) => `Order ${order_id}: ${status}`,
    { terminal: true },
  );
}

/**
 * The MCP tools' names are known only at run time, from the server: widen the
 * workflow's type to name them (in `require`), keeping report_status's result type.
 */
type OrdersWorkflow = Workflow<
  { readonly report_status: string; readonly [mcpTool: string]: unknown },
  "report_status"
>;

function show(event: ForgeEvent): void {
  if (event.type === "tool_call_started") {
    console.log(`  -> ${event.toolName}(${JSON.stringify(event.arguments)})`);
  } else if (event.type === "tool_call_finished" && event.error !== undefined) {
    console.log(`  !! ${event.toolName} failed: ${event.error.message}`);
  } else if (event.type === "message_appended" && event.message.transient) {
    // A refused attempt, shown as what it was: the model's call or text that a
    // guardrail refused, then the correction Forge sent back.
    const { message } = event;
    for (const call of message.toolCalls) {
      console.log(`  !! refused call: ${call.name}(${call.argumentsJson})`);
    }
    if (message.content && message.role === "assistant") {
      console.log(`  !! refused answer: ${message.content.slice(0, 100)}`);
    } else if (message.content) {
      console.log(`  !! correction: ${message.content.slice(0, 100)}`);
    }
  }
}

/** Destructive calls: approved with --approve, asked on a terminal, else denied. */
function approver(approveAll: boolean) {
  return async (request: ApprovalRequest, ctx: ApprovalContext): Promise<Approval> => {
    const call = `${request.toolName}(${JSON.stringify(request.arguments)})`;
    if (approveAll) {
      console.log(`  ?? ${call} is destructive: approved (--approve)`);
      return { approved: true };
    }
    if (process.stdin.isTTY) {
      const rl = createInterface({ input: process.stdin, output: process.stdout });
      try {
        const answer = await rl.question(`  ?? ${call} is destructive: run it? [y/N] `, { signal: ctx.signal });
        return /^y(es)?$/i.test(answer.trim()) ? { approved: true } : { approved: false, reason: "the user said no" };
      } finally {
        rl.close();
      }
    }
    console.log(`  ?? ${call} is destructive: denied (no --approve)`);
    return { approved: false, reason: "destructive calls need the user's approval" };
  };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    options: {
      address: { type: "string", default: "127.0.0.1:50051" },
      // The server's bearer token; without it the SDK reads $FORGE_TOKEN.
      token: { type: "string" },
      "serve-mcp": { type: "boolean", default: false },
      approve: { type: "boolean", default: false },
    },
    allowPositionals: true,
  });
  if (values["serve-mcp"]) {
    await serveMcp();
    return;
  }
  // Start the MCP server (this file, on this Node) and connect to it over stdio.
  const mcp = new Client({ name: "mcp-orders-example", version: "1.0.0" });
  await mcp.connect(
    new StdioClientTransport({ command: process.execPath, args: [fileURLToPath(import.meta.url), "--serve-mcp"] }),
  );
  const client = createForgeClient({ address: values.address, token: values.token });
  try {
    // Build the workflow for each run: a run then sees the server's current
    // tool list (after a notifications/tools/list_changed too).
    const { workflow: registered, tools } = await addMcpTools(orders(), mcp);
    const wf = (registered as OrdersWorkflow).require("lookup_order");
    for (const t of tools) {
      console.log(`MCP tool ${t.name}: destructive=${t.destructive} read_only=${t.readOnly}`);
    }
    const result = await client.run(wf, positionals[0] ?? "What is the status of order A1?", {
      options: { approveDestructiveCalls: true },
      approve: approver(values.approve),
      onEvent: show,
    });
    console.log(result.value); // typed: string, what report_status returned
    console.log(`(${result.iterations} iterations, ${result.usage.modelCalls} model calls)`);
  } finally {
    client.close();
    await mcp.close();
  }
}

await main().catch((err: unknown) => {
  // A refusal (UNAUTHENTICATED, a bad workflow), no server, or a failed run
  // (which carries its transcript): one line, not a stack trace.
  console.error(err instanceof Error ? `error: ${err.message}` : err);
  process.exitCode = 1;
});
