/**
 * The workflow builder without a server: what goes on the wire, and (checked
 * by the compiler when the tests build) what the types infer.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import {
  type ArgsOf,
  type RunValue,
  type StandardSchemaV1,
  ToolArgumentsError,
  type ToolContext,
  workflow,
} from "@forge-sidecar/client";
import { z } from "zod";

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
function expectType<T extends true>(_ok: T): void {}

const ctx = (): ToolContext => ({
  signal: new AbortController().signal,
  callId: "c1",
  toolName: "t",
  iteration: 1,
  runId: "r",
  coercions: [],
});

test("zod tools: JSON Schema from the schema, arguments parsed (defaults applied) before the handler", async () => {
  const wf = workflow("weather", "Look up weather and report it.", { systemPrompt: "Be brief." })
    .tool(
      "get_weather",
      "Get current weather for a city",
      z.object({ city: z.string().describe("City name"), days: z.number().int().default(1) }),
      async ({ city, days }, { signal }) => {
        expectType<Equal<typeof city, string>>(true);
        expectType<Equal<typeof days, number>>(true);
        assert.ok(signal instanceof AbortSignal);
        return { city, days };
      },
    )
    .tool("report", "Report", z.object({ text: z.string() }), (a) => a.text.length, {
      prerequisites: ["get_weather", { tool: "get_weather", matchArg: "city" }],
    })
    .require("get_weather")
    .terminal("report");

  expectType<Equal<RunValue<typeof wf>, number>>(true);
  const pb = wf.toProto();
  assert.equal(pb.name, "weather");
  assert.equal(pb.systemPrompt, "Be brief.");
  assert.deepEqual(pb.requiredSteps, ["get_weather"]);
  assert.deepEqual(pb.terminalTools, ["report"]);
  assert.deepEqual(
    pb.tools[1]?.prerequisites.map((p) => [p.tool, p.matchArg]),
    [
      ["get_weather", ""],
      ["get_weather", "city"],
    ],
  );
  const schema = JSON.parse(pb.tools[0]?.parametersJsonSchema ?? "{}") as Record<string, unknown>;
  assert.equal(schema["type"], "object");
  assert.deepEqual(schema["required"], ["city"]); // `days` has a default: optional for the model
  assert.deepEqual((schema["properties"] as Record<string, unknown>)["city"], {
    type: "string",
    description: "City name",
  });

  const tool = wf.tools.get("get_weather");
  assert.deepEqual(await tool?.invoke({ city: "Paris" }, ctx()), { city: "Paris", days: 1 });
  await assert.rejects(tool?.invoke({ city: 3 }, ctx()) ?? Promise.resolve(), (err: unknown) => {
    assert.ok(err instanceof ToolArgumentsError);
    assert.equal(err.name, "ValidationError");
    assert.match(err.message, /^invalid arguments: city: /);
    return true;
  });
});

test("plain JSON Schema tools: argument types inferred from the literal, schema sent as is", async () => {
  const schema = {
    type: "object",
    properties: {
      city: { type: "string" },
      count: { type: "integer" },
      tags: { type: "array", items: { type: "string" } },
      unit: { enum: ["c", "f"] },
      where: { type: "object", properties: { lat: { type: "number" } }, required: ["lat"] },
      note: { type: ["string", "null"] },
    },
    required: ["city", "count"],
  } as const;
  const wf = workflow("json").tool("lookup", "Look something up", schema, async (args) => {
    expectType<
      Equal<
        typeof args,
        {
          city: string;
          count: number;
          tags?: string[];
          unit?: "c" | "f";
          where?: { lat: number };
          note?: string | null;
        }
      >
    >(true);
    return args.city;
  });
  assert.deepEqual(JSON.parse(wf.toProto().tools[0]?.parametersJsonSchema ?? ""), schema);
  assert.equal(await wf.tools.get("lookup")?.invoke({ city: "Oslo", count: 1 }, ctx()), "Oslo");
  await assert.rejects(wf.tools.get("lookup")?.invoke([1], ctx()) ?? Promise.resolve(), ToolArgumentsError);

  // Inline literals infer without `as const`; a schema typed only as an object gives a record.
  workflow("inline").tool(
    "t",
    "d",
    { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
    ({ n }) => {
      expectType<Equal<typeof n, number>>(true);
      return n;
    },
  );
  const loose: Record<string, unknown> = { type: "object" };
  expectType<Equal<ArgsOf<typeof loose>, Record<string, unknown>>>(true);
});

test("the builder is immutable and only accepts registered tool names", () => {
  const base = workflow("w").tool("a", "A", z.object({}), () => "a");
  const withB = base.tool("b", "B", z.object({}), () => 2);
  assert.equal(base.tools.size, 1);
  assert.equal(withB.tools.size, 2);
  const done = withB.require("a").terminal("b").withRespondTool();
  assert.equal(done.respondTool, true);
  assert.deepEqual(withB.requiredSteps, []);
  expectType<Equal<RunValue<typeof done>, number | string>>(true);
  // @ts-expect-error "c" is not a tool of this workflow
  withB.require("c");
  // @ts-expect-error "c" is not a tool of this workflow
  withB.terminal("c");
  assert.throws(() => withB.tool("a", "again", z.object({}), () => 1), /already has a tool named "a"/);
});

test("required and terminal at registration do what .require() and .terminal() do", () => {
  const wf = workflow("w")
    .tool("a", "A", z.object({}), () => "a", { required: true })
    .tool("b", "B", z.object({}), () => 2, { terminal: true, prerequisites: ["a"] })
    .tool("c", "C", z.object({}), () => true, { terminal: false, required: false });
  expectType<Equal<RunValue<typeof wf>, number>>(true);
  assert.deepEqual(wf.toProto().requiredSteps, ["a"]);
  assert.deepEqual(wf.toProto().terminalTools, ["b"]);
  // Both ways on one workflow: each name once, in order.
  const both = wf.require("a", "c").terminal("b", "c");
  assert.deepEqual(both.requiredSteps, ["a", "c"]);
  assert.deepEqual(both.terminalTools, ["b", "c"]);
  expectType<Equal<RunValue<typeof both>, number | boolean>>(true);
  // A flag known only at run time counts as possibly terminal for the value's type.
  const flag: boolean = wf.tools.size > 10;
  const maybe = workflow("m").tool("t", "T", z.object({}), () => 1, { terminal: flag });
  expectType<Equal<RunValue<typeof maybe>, number>>(true);
  assert.deepEqual(maybe.terminalTools, []);
});

test("a Standard Schema without a JSON Schema converter needs options.jsonSchema", () => {
  const bare: StandardSchemaV1<unknown, { x: string }> = {
    "~standard": {
      version: 1,
      vendor: "handmade",
      validate: (value) => ({ value: value as { x: string } }),
    },
  };
  assert.throws(() => workflow("w").tool("t", "d", bare, () => 1), /cannot describe itself as JSON Schema/);
  const wf = workflow("w").tool("t", "d", bare, ({ x }) => x, {
    jsonSchema: { type: "object", properties: { x: { type: "string" } } },
  });
  assert.equal(wf.tools.get("t")?.jsonSchema["type"], "object");
});

test("readOnly and idempotent at registration reach the ToolSpec (default false)", () => {
  const obj = { type: "object", properties: {} } as const;
  const wf = workflow("orders", "Handle orders.")
    .tool("lookup", "Look up an order", obj, async () => "A1", { readOnly: true })
    .tool("set_priority", "Set a priority", obj, async () => "ok", { idempotent: true })
    .tool("add_note", "Add a note", obj, async () => "ok");
  assert.deepEqual(
    [...wf.tools.values()].map((t) => [t.name, t.readOnly, t.idempotent]),
    [
      ["lookup", true, false],
      ["set_priority", false, true],
      ["add_note", false, false],
    ],
  );
  assert.deepEqual(
    wf.toProto().tools.map((t) => [t.name, t.readOnly, t.idempotent, t.destructive]),
    [
      ["lookup", true, false, false],
      ["set_priority", false, true, false],
      ["add_note", false, false, false],
    ],
  );
});
