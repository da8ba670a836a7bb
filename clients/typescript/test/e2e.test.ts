/**
 * End to end: the real forge-server with a managed llama-server and the bundled
 * Gemma 3 270M model (nothing mocked). The weather workflow's handlers run in
 * this Node process; then examples/typescript/weather.ts runs against the same
 * server. One test: the model is slow on a shared CPU.
 */

import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { createForgeClient, workflow } from "@forge-sidecar/client";
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
