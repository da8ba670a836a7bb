/**
 * End to end: the real forge-server with a managed llama-server and the bundled
 * Gemma 3 270M model (nothing mocked). The weather workflow's handlers run in
 * this Node process; then examples/typescript/weather.ts runs against the same
 * server. Then the tools of a real stdio MCP server (examples/typescript/mcp_orders.ts
 * started with --serve-mcp), and that example itself. One server for both
 * tests: the model is slow to load on a shared CPU.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import {
  type ToolCallFinishedEvent,
  type Workflow,
  addMcpTools,
  createForgeClient,
  workflow,
} from "@forge-sidecar/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { z } from "zod";
import { REPO_ROOT, type RunningServer, startForgeServer } from "./helpers.js";

let server: RunningServer;

before(async () => {
  server = await startForgeServer(["--slots", "1", "--ctx-size", "4096"], 240_000);
});

after(async () => {
  await server?.stop();
});

test("weather workflow against the real llama-server + 270M model, tools run in Node", async () => {
  const ran: string[] = [];
  const wf = workflow("weather", "Look up weather and report it.")
    .tool("get_weather", "Get current weather for a city.", z.object({ city: z.string() }), async ({ city }) => {
      ran.push(`get_weather:${city}`);
      return `72F and sunny in ${city}`;
    })
    .tool(
      "report_weather",
      "Report the weather.",
      z.object({ city: z.string(), weather: z.string() }),
      async ({ city, weather }) => {
        ran.push(`report_weather:${city}`);
        return { city, report: weather };
      },
    )
    .require("get_weather")
    .terminal("report_weather");

  const client = createForgeClient({ address: server.address });
  try {
    const info = await client.serverInfo();
    assert.equal(info.backend, "llama-server");
    assert.match(info.model, /\.gguf$/);
    const chunks: string[] = [];
    const result = await client.run(wf, "What's the weather in Paris?", {
      options: { streamChunks: true },
      onEvent: (e) => {
        if (e.type === "chunk") chunks.push(e.chunkType);
      },
    });
    assert.equal(result.terminalTool, "report_weather");
    assert.equal(ran[0], "get_weather:Paris");
    assert.ok(ran.at(-1)?.startsWith("report_weather:"), ran.join(", "));
    assert.equal(result.value.city, "Paris"); // typed from report_weather's handler
    assert.ok(result.iterations >= 2);
    assert.equal(result.usage.modelCalls, result.iterations);
    assert.ok(result.usage.promptTokens > 0 && result.usage.completionTokens > 0);
    assert.ok(chunks.includes("final"), "stream_chunks delivered chunks");
    const calls = result.transcript.filter((m) => m.type === "tool_call");
    assert.equal(calls[0]?.toolCalls[0]?.name, "get_weather");
  } finally {
    client.close();
  }

  // The README's example, compiled with the tests, against the same server.
  const example = join(REPO_ROOT, "clients", "typescript", "dist-test", "examples", "typescript", "weather.js");
  const { stdout } = await promisify(execFile)(process.execPath, [example, "--address", server.address], {
    timeout: 240_000,
  });
  assert.match(stdout, /-> get_weather\(/);
  assert.match(stdout, /Weather report for Paris/);
});

test("tools from a real stdio MCP server with the bundled model; the MCP example completes", async () => {
  // The example compiled with the tests is also the MCP server (--serve-mcp).
  const example = join(REPO_ROOT, "clients", "typescript", "dist-test", "examples", "typescript", "mcp_orders.js");
  const reported: string[] = [];
  const base = workflow("order_lookup", "Look up the order the user asks about, then report it.").tool(
    "report_order",
    "Report the order to the user. Ends the task.",
    z.object({
      order_id: z.string().describe('The order, e.g. "A1".'),
      summary: z.string().describe("What lookup_order returned."),
    }),
    async ({ order_id, summary }) => {
      reported.push(order_id);
      return `${order_id}: ${summary}`;
    },
    { terminal: true },
  );
  const mcp = new Client({ name: "forge-ts-e2e", version: "1.0.0" });
  await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [example, "--serve-mcp"] }));
  const client = createForgeClient({ address: server.address });
  const finished: ToolCallFinishedEvent[] = [];
  try {
    const { workflow: withMcp, tools } = await addMcpTools(base, mcp, { include: ["lookup_order"] });
    assert.deepEqual(
      tools.map((t) => [t.name, t.readOnly, t.destructive]),
      [["lookup_order", true, false]],
    );
    // The MCP tool's name is known only at run time: widen the type to require it.
    const wf = (withMcp as Workflow<any, "report_order">).require("lookup_order");
    const result = await client.run(wf, "Where is order A1?", {
      onEvent: (e) => {
        if (e.type === "tool_call_finished") finished.push(e);
      },
    });
    assert.equal(result.terminalTool, "report_order");
    assert.ok(reported.length > 0, "report_order's handler never ran");
    // The MCP server ran the call and its answer went back to the model.
    const lookedUp = finished.filter((e) => e.toolName === "lookup_order");
    assert.ok(
      lookedUp.some((e) => e.error === undefined && e.output.startsWith("order ")),
      JSON.stringify(lookedUp.map((e) => [e.output, e.error?.message])),
    );
  } finally {
    client.close();
    await mcp.close();
  }

  // The MCP example (its own MCP server over stdio, three tools, one destructive) against the same server.
  const { stdout } = await promisify(execFile)(process.execPath, [example, "--address", server.address], {
    timeout: 240_000,
  });
  assert.match(stdout, /^MCP tool lookup_order: destructive=false read_only=true$/m);
  assert.match(stdout, /^MCP tool cancel_order: destructive=true read_only=false$/m);
  assert.match(stdout, /-> lookup_order\(/);
  assert.match(stdout, /^Order /m, stdout);
});
