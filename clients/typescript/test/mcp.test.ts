/**
 * MCP servers as tool sources (issue 21): addMcpTools against a real MCP
 * server built with @modelcontextprotocol/sdk (the low-level Server, so that
 * tools/list paginates), connected in-process over InMemoryTransport, and the
 * real forge-server with a scripted model.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type ApprovalRequestedEvent,
  type ForgeClient,
  type ForgeEvent,
  McpServerError,
  McpToolError,
  type RunResult,
  type ToolCallFinishedEvent,
  ToolUnreachableError,
  type Workflow,
  addMcpTools,
  createForgeClient,
  workflow,
} from "@forge-sidecar/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  type CallToolResult,
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import { type RunningServer, startForgeServer } from "./helpers.js";

const orderId: Tool["inputSchema"] = {
  type: "object",
  properties: { order_id: { type: "string" } },
  required: ["order_id"],
};

/** The MCP server's tools, in the order tools/list gives them. */
const TOOLS: Tool[] = [
  {
    name: "lookup_order",
    description: "Look up an order.",
    inputSchema: orderId,
    annotations: { readOnlyHint: true },
  },
  { name: "order_status", description: "An order's status.", inputSchema: orderId, annotations: { readOnlyHint: true } },
  { name: "snapshot", title: "Snapshot of an order", inputSchema: orderId, annotations: { readOnlyHint: true } },
  { name: "refund", description: "Refund an order.", inputSchema: orderId, annotations: { destructiveHint: false } },
  {
    name: "add_note",
    description: "Add a note to an order.",
    inputSchema: {
      type: "object",
      properties: { order_id: { type: "string" }, note: { type: "string", maxLength: 200 } },
      required: ["order_id", "note"],
      additionalProperties: false,
    },
    annotations: { destructiveHint: false },
  },
  {
    name: "set_priority",
    description: "Set an order's priority.",
    inputSchema: { type: "object", properties: { order_id: { type: "string" }, priority: { type: "integer" } } },
    annotations: { destructiveHint: false, idempotentHint: true },
  },
  { name: "cancel_order", description: "Cancel an order.", inputSchema: orderId, annotations: { destructiveHint: true } },
  { name: "purge_cache", description: "Purge the order cache.", inputSchema: { type: "object" } },
  { name: "slow_report", description: "A slow report.", inputSchema: orderId, annotations: { readOnlyHint: true } },
];
const ALL_TOOLS = TOOLS.map((t) => t.name);

/** What the MCP server's tools did (shared by every server in this file). */
const calls: string[] = [];

function toolResult(name: string, args: Record<string, unknown>): CallToolResult {
  const id = String(args["order_id"] ?? "");
  switch (name) {
    case "lookup_order":
      return { content: [{ type: "text", text: `order ${id}: 2 items, shipped` }] };
    case "order_status": {
      const value = { order_id: id, status: "shipped", items: 2 };
      // The text block is the same value, serialized otherwise: the result is the structured one.
      return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: value };
    }
    case "snapshot":
      return {
        content: [
          { type: "text", text: `order ${id} page` },
          { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
          { type: "audio", data: "UklGRg==", mimeType: "audio/wav" },
          { type: "resource_link", uri: "file:///orders/receipt.pdf", name: "receipt", mimeType: "application/pdf" },
          { type: "resource", resource: { uri: "file:///orders/notes.txt", mimeType: "text/plain", text: "gift wrap" } },
          {
            type: "resource",
            resource: { uri: "file:///orders/label.bin", mimeType: "application/octet-stream", blob: "AAEC" },
          },
        ],
      };
    case "refund":
      return { content: [{ type: "text", text: "payment system unavailable" }], isError: true };
    default:
      return { content: [{ type: "text", text: `${name} done for ${id}` }] };
  }
}

/** A connected MCP client of a fresh in-process server whose tools/list pages hold `pageSize` tools. */
async function mcpClient(pageSize = 100): Promise<Client> {
  const server = new Server({ name: "orders", version: "1.0.0" }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (request) => {
    const start = Number(request.params?.cursor ?? "0");
    const end = start + pageSize;
    return end < TOOLS.length
      ? { tools: TOOLS.slice(start, end), nextCursor: String(end) }
      : { tools: TOOLS.slice(start) };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const args = request.params.arguments ?? {};
    calls.push(request.params.name);
    if (args["order_id"] === "LOST") {
      await server.close(); // the connection drops in the middle of the call
      return { content: [] };
    }
    if (request.params.name === "slow_report") {
      await sleep(5_000, undefined, { signal: extra.signal }).catch(() => undefined);
    }
    return toolResult(request.params.name, args);
  });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: "forge-ts-test", version: "1.0.0" });
  await client.connect(clientSide);
  return client;
}

const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ name, args }] });
const done = call("respond", { message: "done" });

/** The model's turns per workflow name, replayed by the scripted backend. */
const SCRIPTS: Record<string, unknown[]> = {
  ts_mcp_results: [
    call("lookup_order", { order_id: "A1" }),
    call("order_status", { order_id: "A1" }),
    call("snapshot", { order_id: "A1" }),
    call("refund", { order_id: "A1" }),
    done,
  ],
  ts_mcp_filters: [call("shop_lookup_order", { order_id: "B2" }), call("crm.lookup_order", { order_id: "C3" }), done],
  ts_mcp_destructive: [call("cancel_order", { order_id: "A1" }), done],
  ts_mcp_timeout: [call("slow_report", { order_id: "A1" }), call("lookup_order", { order_id: "A1" }), done],
  ts_mcp_lost: [
    call("lookup_order", { order_id: "A1" }),
    call("set_priority", { order_id: "A1", priority: 2 }),
    call("add_note", { order_id: "A1", note: "customer called" }),
    done,
  ],
};

let scriptDir: string;
let server: RunningServer;
let client: ForgeClient;
const clients: Client[] = [];

before(async () => {
  scriptDir = mkdtempSync(join(tmpdir(), "forge-ts-mcp-"));
  const script = join(scriptDir, "script.json");
  writeFileSync(script, JSON.stringify(SCRIPTS));
  server = await startForgeServer(["--backend", "scripted", "--script", script], 60_000);
  client = createForgeClient({ address: server.address });
});

after(async () => {
  client?.close();
  await server?.stop();
  for (const c of clients) {
    await c.close();
  }
  rmSync(scriptDir, { recursive: true, force: true });
});

async function connected(pageSize?: number): Promise<Client> {
  const c = await mcpClient(pageSize);
  clients.push(c);
  return c;
}

function orders(name: string) {
  return workflow(name, "Answer questions about orders.").withRespondTool();
}

async function run(
  wf: Workflow<any, any>,
  message = "Look into order A1.",
  options: Parameters<ForgeClient["run"]>[2] = {},
): Promise<{ result: RunResult<unknown>; finished: Map<string, ToolCallFinishedEvent>; events: ForgeEvent[] }> {
  const events: ForgeEvent[] = [];
  const result = await client.run(wf, message, { ...options, onEvent: (e) => void events.push(e) });
  const finished = new Map<string, ToolCallFinishedEvent>();
  for (const e of events) {
    if (e.type === "tool_call_finished") finished.set(e.toolName, e);
  }
  return { result, finished, events };
}

describe("addMcpTools", () => {
  test("every page of tools becomes a schema tool with its description and annotations", async () => {
    const mcp = await connected(3);
    const first = await mcp.listTools();
    assert.equal(first.tools.length, 3);
    assert.ok(first.nextCursor, "the MCP server did not paginate");
    const { workflow: wf, tools } = await addMcpTools(orders("ts_mcp_schema"), mcp);
    assert.deepEqual(
      tools.map((t) => t.name),
      ALL_TOOLS,
    );
    const specs = new Map(wf.toProto().tools.map((t) => [t.name, t]));
    assert.deepEqual([...specs.keys()], ALL_TOOLS);
    // The MCP schema as written, marked with its explicit destructive decision.
    assert.deepEqual(JSON.parse(specs.get("add_note")?.parametersJsonSchema ?? ""), {
      ...TOOLS[4]?.inputSchema,
      "x-forge-destructive": false,
    });
    assert.equal(specs.get("add_note")?.description, "Add a note to an order.");
    assert.equal(specs.get("snapshot")?.description, "Snapshot of an order", "the title stands in for a description");
    // destructiveHint true, and no annotations at all (MCP's defaults), are
    // destructive; read-only and destructiveHint false are not.
    assert.deepEqual(
      [...specs.values()].filter((t) => t.destructive).map((t) => t.name),
      ["cancel_order", "purge_cache"],
    );
    const hints = new Map(tools.map((t) => [t.name, [t.readOnly, t.idempotent, t.destructive]]));
    assert.deepEqual(hints.get("lookup_order"), [true, true, false]);
    assert.deepEqual(hints.get("set_priority"), [false, true, false]);
    assert.deepEqual(hints.get("add_note"), [false, false, false]);
    assert.deepEqual(hints.get("purge_cache"), [false, false, true]);
    // ...and reach the server, which makes a call once more only for these
    // when its answer never came back.
    assert.deepEqual(
      new Map([...specs.values()].map((t) => [t.name, [t.readOnly, t.idempotent, t.destructive]])),
      hints,
    );
    // The caller's override wins over the annotations, both ways.
    const overridden = await addMcpTools(orders("ts_mcp_schema"), mcp, {
      destructive: { purge_cache: false, lookup_order: true },
    });
    assert.deepEqual(
      overridden.tools.filter((t) => t.destructive).map((t) => t.name),
      ["lookup_order", "cancel_order"],
    );
  });

  test("text, structured content, other content and isError reach the model", async () => {
    const { workflow: wf } = await addMcpTools(orders("ts_mcp_results"), await connected());
    const { result, finished } = await run(wf);
    assert.equal(result.terminalTool, "respond");
    assert.equal(finished.get("lookup_order")?.output, "order A1: 2 items, shipped");
    assert.equal(finished.get("lookup_order")?.error, undefined);
    assert.equal(finished.get("order_status")?.output, '{"order_id":"A1","status":"shipped","items":2}');
    assert.deepEqual(finished.get("snapshot")?.output.split("\n"), [
      "order A1 page",
      "[image content: image/png, 12 bytes base64]",
      "[audio content: audio/wav, 8 bytes base64]",
      "[resource link: file:///orders/receipt.pdf (receipt, application/pdf)]",
      "[resource file:///orders/notes.txt (text/plain)]",
      "gift wrap",
      "[resource content: file:///orders/label.bin (application/octet-stream), 4 bytes base64]",
    ]);
    assert.equal(finished.get("refund")?.output, "");
    assert.equal(finished.get("refund")?.error?.message, "payment system unavailable");
    assert.equal(finished.get("refund")?.error?.type, "McpToolError");
    const transcript = result.transcript.map((m) => m.content).join("\n");
    assert.ok(transcript.includes("payment system unavailable"), "the model never saw the isError result");
    assert.ok(transcript.includes("[image content: image/png, 12 bytes base64]"), transcript);
    assert.ok(transcript.includes('"status":"shipped"'), transcript);
  });

  test("include, exclude and prefix register two servers side by side; bad names register nothing", async () => {
    const shop = await connected();
    const crm = await connected();
    const a = await addMcpTools(orders("ts_mcp_filters"), shop, {
      include: ["lookup_order", "refund"],
      prefix: "shop_",
    });
    const b = await addMcpTools(a.workflow, crm, { exclude: ALL_TOOLS.slice(1), prefix: "crm." });
    assert.deepEqual(
      a.tools.map((t) => t.name),
      ["shop_lookup_order", "shop_refund"],
    );
    assert.deepEqual(
      b.tools.map((t) => [t.name, t.mcpName]),
      [["crm.lookup_order", "lookup_order"]],
    );
    assert.deepEqual([...b.workflow.tools.keys()], ["shop_lookup_order", "shop_refund", "crm.lookup_order"]);
    await assert.rejects(addMcpTools(b.workflow, crm, { include: ["lookup_order"], prefix: "crm." }), {
      message: /already has a tool named "crm\.lookup_order"/,
    });
    await assert.rejects(addMcpTools(orders("x"), crm, { include: ["nope"] }), { message: /no tool named nope/ });
    await assert.rejects(addMcpTools(orders("x"), crm, { destructive: { nope: true } }), {
      message: /no tool named nope/,
    });
    await assert.rejects(addMcpTools(orders("x"), crm, { prefix: "9/" }), { message: /cannot be a Forge tool named/ });
    assert.deepEqual([...b.workflow.tools.keys()], ["shop_lookup_order", "shop_refund", "crm.lookup_order"]);

    const { result, finished } = await run(b.workflow);
    assert.equal(result.terminalTool, "respond");
    assert.equal(finished.get("shop_lookup_order")?.output, "order B2: 2 items, shipped");
    assert.equal(finished.get("crm.lookup_order")?.output, "order C3: 2 items, shipped");
  });

  test("a destructive MCP tool asks for approval; overridden, it runs without", async () => {
    const mcp = await connected();
    const approvalRun = async (wf: Workflow<any, any>) => {
      const asked: string[] = [];
      const { result, events } = await run(wf, "Cancel order A1.", {
        options: { approveDestructiveCalls: true },
        approve: (request) => {
          asked.push(request.toolName);
          return { approved: false, reason: "cancellations need a manager" };
        },
      });
      const requested = events.filter((e): e is ApprovalRequestedEvent => e.type === "approval_requested");
      return { result, asked, requested };
    };
    calls.length = 0;
    const destructive = await addMcpTools(orders("ts_mcp_destructive"), mcp, { include: ["cancel_order"] });
    const denied = await approvalRun(destructive.workflow);
    assert.deepEqual(denied.asked, ["cancel_order"]);
    assert.deepEqual(
      denied.requested.map((e) => [e.toolName, e.arguments]),
      [["cancel_order", { order_id: "A1" }]],
    );
    assert.ok(denied.result.transcript.some((m) => m.content.includes("cancellations need a manager")));
    assert.deepEqual(calls, [], "a denied call never reached the MCP server");

    const overridden = await addMcpTools(orders("ts_mcp_destructive"), mcp, {
      include: ["cancel_order"],
      destructive: { cancel_order: false },
    });
    const allowed = await approvalRun(overridden.workflow);
    assert.deepEqual(allowed.asked, []);
    assert.deepEqual(calls, ["cancel_order"]);
    assert.ok(allowed.result.transcript.some((m) => m.content.includes("cancel_order done for A1")));
  });

  test("a call that times out is a ToolUnreachableError naming the cause, and the run goes on", async () => {
    const { workflow: wf } = await addMcpTools(orders("ts_mcp_timeout"), await connected(), {
      include: ["slow_report", "lookup_order"],
      timeoutMs: 300,
    });
    calls.length = 0;
    const started = Date.now();
    const { result, finished, events } = await run(wf);
    assert.ok(Date.now() - started < 4_000, "the call was not cut off at its timeout");
    assert.equal(result.terminalTool, "respond");
    assert.deepEqual(finished.get("slow_report")?.error, {
      message: 'MCP tool "slow_report" timed out after 300 ms',
      kind: "unreachable",
      type: "ToolUnreachableError",
    });
    // Read-only: the server made the call once more (its own call id) before
    // the model saw it; the SDK itself never calls twice.
    const slow = events
      .filter((e): e is ToolCallFinishedEvent => e.type === "tool_call_finished" && e.toolName === "slow_report")
      .map((e) => e.callId);
    assert.equal(slow.length, 2, String(slow));
    assert.equal(slow[1], `${slow[0]}.retry`);
    assert.deepEqual(calls, ["slow_report", "slow_report", "lookup_order"]);
    assert.equal(finished.get("lookup_order")?.output, "order A1: 2 items, shipped");
    assert.ok(result.transcript.some((m) => m.content.includes("timed out after 300 ms")));
    assert.ok(result.transcript.some((m) => m.content.includes("'slow_report' was tried twice")));
  });

  test("a lost connection is a ToolUnreachableError; the SDK never calls twice", async () => {
    const attempt = async (tool: string): Promise<{ attempts: number; message: string }> => {
      const mcp = await mcpClient();
      let attempts = 0;
      const callTool = mcp.callTool.bind(mcp);
      mcp.callTool = ((...args: Parameters<Client["callTool"]>) => {
        attempts += 1;
        return callTool(...args);
      }) as Client["callTool"];
      const { workflow: wf } = await addMcpTools(orders("ts_mcp_lost"), mcp, { include: [tool] });
      const ctx = { signal: new AbortController().signal, callId: "c1", toolName: tool, iteration: 1, runId: "r1", coercions: [] };
      const err = await wf.tools
        .get(tool)
        ?.invoke({ order_id: "LOST", note: "n" }, ctx)
        .then(
          () => assert.fail("the call should have failed"),
          (e: unknown) => e,
        );
      await mcp.close();
      assert.ok(err instanceof ToolUnreachableError, String(err));
      return { attempts, message: err.message };
    };
    // Read-only, idempotent or neither: one call each; retrying is the server's.
    const readOnly = await attempt("lookup_order");
    assert.equal(readOnly.attempts, 1);
    assert.match(readOnly.message, /^MCP tool "lookup_order" lost its connection: .*Connection closed$/);
    const idempotent = await attempt("set_priority");
    assert.equal(idempotent.attempts, 1);
    const other = await attempt("add_note");
    assert.equal(other.attempts, 1);
    assert.match(other.message, /^MCP tool "add_note" lost its connection: .*Connection closed$/);
  });

  test("after a lost connection the server calls a read-only or idempotent tool once more, others never", async () => {
    const mcp = await connected();
    // The first call of each tool loses its connection; later ones go through.
    const attempts = new Map<string, number>();
    const callTool = mcp.callTool.bind(mcp);
    mcp.callTool = (async (...args: Parameters<Client["callTool"]>) => {
      const name = args[0].name;
      const n = (attempts.get(name) ?? 0) + 1;
      attempts.set(name, n);
      if (n === 1) {
        throw new McpError(ErrorCode.ConnectionClosed, "Connection closed");
      }
      return await callTool(...args);
    }) as Client["callTool"];
    const { workflow: wf, tools } = await addMcpTools(orders("ts_mcp_lost"), mcp, {
      include: ["lookup_order", "set_priority", "add_note"],
    });
    assert.deepEqual(
      tools.map((t) => [t.name, t.readOnly, t.idempotent]),
      [
        ["lookup_order", true, true],
        ["add_note", false, false],
        ["set_priority", false, true],
      ],
    );
    const { result, events } = await run(wf);
    assert.equal(result.terminalTool, "respond");
    assert.deepEqual(Object.fromEntries(attempts), { lookup_order: 2, set_priority: 2, add_note: 1 });
    // The second try was the server's: a call of its own, under "<id>.retry".
    const finished = events.filter((e): e is ToolCallFinishedEvent => e.type === "tool_call_finished");
    const byTool = (tool: string) => finished.filter((e) => e.toolName === tool);
    for (const tool of ["lookup_order", "set_priority"]) {
      const [first, retry, ...more] = byTool(tool);
      assert.deepEqual(more, []);
      assert.equal(first?.error?.kind, "unreachable");
      assert.equal(first?.error?.message, `MCP tool "${tool}" lost its connection: MCP error -32000: Connection closed`);
      assert.equal(retry?.callId, `${first?.callId}.retry`);
      assert.equal(retry?.error, undefined);
    }
    assert.equal(byTool("lookup_order")[1]?.output, "order A1: 2 items, shipped");
    assert.equal(byTool("set_priority")[1]?.output, "set_priority done for A1");
    const [note, ...again] = byTool("add_note");
    assert.deepEqual(again, [], "add_note is neither read-only nor idempotent: never called twice");
    assert.equal(note?.error?.kind, "unreachable");
    // What the model read: the note tried once, its effect unknown.
    const toolResults = new Map(
      result.transcript.filter((m) => m.role === "tool").map((m) => [m.toolName, m.content] as const),
    );
    assert.match(toolResults.get("lookup_order") ?? "", /order A1: 2 items, shipped/);
    assert.match(toolResults.get("add_note") ?? "", /'add_note' was tried once/);
    assert.match(toolResults.get("add_note") ?? "", /whether it took effect is unknown/);
  });

  test("readOnly and idempotent override the hints per tool", async () => {
    const mcp = await connected();
    const { workflow: wf, tools } = await addMcpTools(orders("ts_mcp_overrides"), mcp, {
      include: ["lookup_order", "add_note", "set_priority"],
      readOnly: { add_note: true },
      idempotent: { lookup_order: false, set_priority: false },
    });
    const hints = new Map(tools.map((t) => [t.name, [t.readOnly, t.idempotent]]));
    assert.deepEqual(
      hints,
      new Map([
        ["lookup_order", [true, false]],
        ["add_note", [true, true]],
        ["set_priority", [false, false]],
      ]),
    );
    assert.deepEqual(new Map(wf.toProto().tools.map((t) => [t.name, [t.readOnly, t.idempotent]])), hints);
    await assert.rejects(addMcpTools(orders("x"), mcp, { idempotent: { nope: true } }), {
      message: /no tool named nope/,
    });
    await assert.rejects(addMcpTools(orders("x"), mcp, { readOnly: { nope: true } }), {
      message: /no tool named nope/,
    });
  });

  test("a closed client is an McpServerError before any run", async () => {
    const mcp = await mcpClient();
    await mcp.close();
    const err = await addMcpTools(orders("ts_mcp_closed"), mcp).then(
      () => assert.fail("addMcpTools should have failed"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof McpServerError, String(err));
    assert.match(err.message, /the MCP server's tools could not be listed: Not connected/);
  });
});
