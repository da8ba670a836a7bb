/**
 * Secrets in tool outputs over the real forge-server (scripted backend): the
 * workflow's `toolOutputSecrets` travels to the server, the model's view is
 * screened, and the SDK surfaces `tool_output_screened` events.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type ForgeClient,
  type ForgeEvent,
  type SecretsPolicy,
  type ToolOutputScreenedEvent,
  createForgeClient,
  workflow,
} from "@forge-sidecar/client";
import { z } from "zod";
import { type RunningServer, startForgeServer } from "./helpers.js";

const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ name, args }] });
const turns = [call("get_weather", { city: "Paris" }), call("report", { city: "Paris", weather: "sunny" })];
const SCRIPTS = { ts_secrets_redact: turns, ts_secrets_block: turns, ts_secrets_default: turns };
const LEAKY = "sunny; admin password=hunter2-prod";

let dir: string;
let server: RunningServer;
let client: ForgeClient;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "forge-ts-secrets-"));
  writeFileSync(join(dir, "script.json"), JSON.stringify(SCRIPTS));
  server = await startForgeServer(["--backend", "scripted", "--script", join(dir, "script.json")], 60_000);
  client = createForgeClient({ address: server.address });
});

after(async () => {
  client.close();
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function runLeaky(name: string, policy: SecretsPolicy | undefined) {
  const wf = workflow(name, "Look up the weather, then report it.", { toolOutputSecrets: policy })
    .tool("get_weather", "Get the current weather for a city", z.object({ city: z.string() }), async () => LEAKY)
    .tool("report", "Report the weather. Ends the task.", z.object({ city: z.string(), weather: z.string() }), async (a) =>
      `${a.city}: ${a.weather}`,
    )
    .require("get_weather")
    .terminal("report");
  const events: ForgeEvent[] = [];
  const result = await client.run(wf, "What's the weather in Paris?", {
    onEvent: (e) => {
      events.push(e);
    },
  });
  const screened = events.filter((e): e is ToolOutputScreenedEvent => e.type === "tool_output_screened");
  const text = result.transcript.map((m) => m.content).join("\n");
  return { screened, text };
}

describe("tool output secrets", () => {
  test("redact: the secret never reaches the transcript and the event names its type", async () => {
    const { screened, text } = await runLeaky("ts_secrets_redact", "redact");
    assert.equal(screened.length, 1);
    assert.equal(screened[0]?.toolName, "get_weather");
    assert.equal(screened[0]?.action, "redact");
    assert.deepEqual(screened[0]?.secretTypes, ["Secret Keyword"]);
    assert.equal(screened[0]?.secrets, 1);
    assert.ok(!text.includes("hunter2-prod"), text);
    assert.ok(text.includes("[REDACTED: Secret Keyword]"), text);
  });

  test("block: the output is withheld", async () => {
    const { screened, text } = await runLeaky("ts_secrets_block", "block");
    assert.deepEqual(
      screened.map((e) => e.action),
      ["block"],
    );
    assert.ok(!text.includes("sunny; admin"), text);
    assert.ok(text.includes("withheld"), text);
  });

  test("unset: the server's default (allow) passes the output on", async () => {
    const { screened, text } = await runLeaky("ts_secrets_default", undefined);
    assert.equal(screened.length, 0);
    assert.ok(text.includes("hunter2-prod"), text);
  });
});
