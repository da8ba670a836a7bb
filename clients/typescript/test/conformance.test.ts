/**
 * Runs every conformance case (tests/conformance/cases/*.json) with the
 * TypeScript SDK against the real forge-server process, started with the
 * scripted backend on the case directory. Asserts exactly what the Python
 * runner (tests/conformance/test_conformance.py) asserts, `expect.events`
 * included (see event_match.ts).
 */

import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type Approval,
  type ApprovalRequest,
  type Approver,
  type ForgeClient,
  type JsonSchema,
  type Message,
  type MessageInput,
  type MessageType,
  type Role,
  RunFailedError,
  type RunOptions,
  ToolResolutionError,
  ToolUnreachableError,
  type Workflow,
  addMcpTools,
  createForgeClient,
  workflow,
} from "@forge-sidecar/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type CanonicalEvent, canonicalEvent, matchEvents } from "./event_match.js";
import { CASES_DIR, PYTHON, REPO_ROOT, type RunningServer, startForgeServer } from "./helpers.js";

type Json = Record<string, unknown>;

interface Behaviour {
  returns?: string;
  raises?: string;
  raises_resolution?: string;
  raises_unreachable?: string;
  sleep_ms?: number;
  returns_context?: boolean;
}

const CASE_FILES = readdirSync(CASES_DIR)
  .filter((f) => f.endsWith(".json"))
  .sort();

let server: RunningServer;
let client: ForgeClient;

before(async () => {
  server = await startForgeServer(["--backend", "scripted", "--script", CASES_DIR], 60_000);
  client = createForgeClient({ address: server.address });
});

after(async () => {
  client?.close();
  await server?.stop();
});

/** Fail loudly on case-file keys this runner does not understand (a gap to close, not to ignore). */
function checkKeys(where: string, obj: object, known: readonly string[]): void {
  const unknown = Object.keys(obj).filter((k) => !known.includes(k));
  assert.deepEqual(unknown, [], `${where}: keys the TypeScript runner does not handle`);
}

/** Client-side handlers that follow a case's behaviour lists. */
class ScriptedTools {
  private readonly calls = new Map<string, number>();
  /** The run's id as its run_started event gave it (returns_context). */
  runId = "";
  constructor(private readonly behaviours: Record<string, Behaviour[]>) {}

  handler(name: string) {
    return async (
      _args: Json,
      { signal, callId, toolName, runId }: { signal: AbortSignal; callId: string; toolName: string; runId: string },
    ): Promise<string> => {
      const steps = this.behaviours[name];
      if (steps === undefined || steps.length === 0) {
        throw new Error(`the case gives no behaviour for tool ${name}`);
      }
      const index = this.calls.get(name) ?? 0;
      this.calls.set(name, index + 1);
      const step = steps[Math.min(index, steps.length - 1)] as Behaviour;
      checkKeys(`client.tools.${name}`, step, [
        "returns",
        "raises",
        "raises_resolution",
        "raises_unreachable",
        "sleep_ms",
        "returns_context",
      ]);
      if (step.sleep_ms !== undefined) {
        await sleep(step.sleep_ms, undefined, { signal });
      }
      if (step.raises !== undefined) {
        throw new Error(step.raises);
      }
      if (step.raises_resolution !== undefined) {
        throw new ToolResolutionError(step.raises_resolution);
      }
      if (step.raises_unreachable !== undefined) {
        throw new ToolUnreachableError(step.raises_unreachable);
      }
      if (step.returns_context === true) {
        const run = runId === this.runId ? "same_run" : `run ${JSON.stringify(runId)}`;
        return `${callId}|${toolName}|${run}`;
      }
      return String(step.returns ?? "");
    };
  }
}

interface ScriptedApproval {
  approve?: boolean;
  reason?: string;
}

/** The run's approver following `client.approvals`: per tool, the next entry, the last repeats. */
function scriptedApprover(approvals: Record<string, ScriptedApproval[]>): Approver {
  // Checked here: a throw inside the approver would only become a denial.
  for (const [tool, steps] of Object.entries(approvals)) {
    for (const step of steps) {
      checkKeys(`client.approvals.${tool}`, step, ["approve", "reason"]);
    }
  }
  const asked = new Map<string, number>();
  return (request: ApprovalRequest): Approval => {
    const steps = approvals[request.toolName];
    if (steps === undefined || steps.length === 0) {
      return { approved: false, reason: "no approval scripted" };
    }
    const index = asked.get(request.toolName) ?? 0;
    asked.set(request.toolName, index + 1);
    const step = steps[Math.min(index, steps.length - 1)] as ScriptedApproval;
    return { approved: step.approve === true, reason: step.reason ?? "" };
  };
}

interface ToolSpecJson {
  name: string;
  description?: string;
  parameters?: JsonSchema;
  prerequisites?: Array<{ tool: string; match_arg?: string }>;
  destructive?: boolean;
  read_only?: boolean;
  idempotent?: boolean;
}

/** The case's workflow with its own tools; `withSteps` adds its required steps and terminal tools. */
function buildWorkflow(spec: Json, tools: ScriptedTools): Workflow<any, any> {
  checkKeys("workflow", spec, [
    "name",
    "description",
    "system_prompt",
    "tools",
    "required_steps",
    "terminal_tools",
    "respond_tool",
  ]);
  let wf: Workflow<any, any> = workflow(String(spec["name"]), String(spec["description"] ?? ""), {
    systemPrompt: String(spec["system_prompt"] ?? ""),
  });
  if (spec["respond_tool"] === true) {
    wf = wf.withRespondTool();
  }
  for (const tool of (spec["tools"] ?? []) as ToolSpecJson[]) {
    checkKeys(`workflow.tools.${tool.name}`, tool, [
      "name",
      "description",
      "parameters",
      "prerequisites",
      "destructive",
      "read_only",
      "idempotent",
    ]);
    wf = wf.tool(
      tool.name,
      tool.description ?? "",
      tool.parameters ?? { type: "object", properties: {} },
      tools.handler(tool.name),
      {
        prerequisites: (tool.prerequisites ?? []).map((p) => ({ tool: p.tool, matchArg: p.match_arg ?? "" })),
        destructive: tool.destructive,
        readOnly: tool.read_only,
        idempotent: tool.idempotent,
      },
    );
  }
  return wf;
}

/** `wf` with the case's required steps and terminal tools (after the MCP tools: they may name them). */
function withSteps(wf: Workflow<any, any>, spec: Json): Workflow<any, any> {
  return wf
    .require(...((spec["required_steps"] ?? []) as string[]))
    .terminal(...((spec["terminal_tools"] ?? []) as string[]));
}

const MCP_KEYS = [
  "tools",
  "page_size",
  "include",
  "exclude",
  "prefix",
  "destructive",
  "read_only",
  "idempotent",
  "timeout_ms",
];

/**
 * Start the case's MCP server (tests/conformance/mcp_case_server.py, with
 * $FORGE_PYTHON) over stdio, connect a client and register its tools with
 * addMcpTools as the case's `mcp` key says. The caller closes the client
 * (which ends the server process).
 */
async function addCaseMcpTools(
  wf: Workflow<any, any>,
  caseFile: string,
  spec: Json,
): Promise<{ workflow: Workflow<any, any>; mcp: Client }> {
  checkKeys("mcp", spec, MCP_KEYS);
  const transport = new StdioClientTransport({
    command: PYTHON,
    args: [join(CASES_DIR, "..", "mcp_case_server.py"), caseFile],
    cwd: REPO_ROOT,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer | string) => {
    stderr = (stderr + String(chunk)).slice(-20_000);
  });
  const mcp = new Client({ name: "forge-ts-conformance", version: "1.0.0" });
  try {
    await mcp.connect(transport);
    const { workflow: out } = await addMcpTools(wf, mcp, {
      include: spec["include"] as string[] | undefined,
      exclude: spec["exclude"] as string[] | undefined,
      prefix: spec["prefix"] as string | undefined,
      destructive: spec["destructive"] as Record<string, boolean> | undefined,
      readOnly: spec["read_only"] as Record<string, boolean> | undefined,
      idempotent: spec["idempotent"] as Record<string, boolean> | undefined,
      timeoutMs: spec["timeout_ms"] as number | undefined,
    });
    return { workflow: out, mcp };
  } catch (err) {
    await mcp.close();
    throw new Error(`the case's MCP server: ${String(err)}\n${stderr}`, { cause: err });
  }
}

const GUARDRAILS: Record<string, keyof RunOptions> = {
  disable_constrained_decoding: "constrainedDecoding",
  disable_rescue: "rescue",
  disable_retry_nudges: "retryNudges",
  disable_step_enforcement: "stepEnforcement",
  disable_error_recovery: "errorRecovery",
  disable_compaction: "compaction",
  disable_coercion: "coercion",
  disable_repeat_guard: "repeatGuard",
  disable_loop_breaking: "loopBreaking",
  disable_parameter_docs: "parameterDocs",
  disable_grounding: "grounding",
  disable_tool_relevance: "toolRelevance",
  disable_destructive_policy: "destructivePolicy",
  disable_result_binding: "resultBinding",
  disable_number_bounds: "numberBounds",
};

function buildOptions(raw: Json): RunOptions {
  checkKeys("options", raw, [
    "max_iterations",
    "max_retries",
    "max_tool_errors",
    "temperature",
    "max_tokens",
    "tool_timeout_ms",
    "stream_chunks",
    "parallel_tool_calls",
    "reasoning_replay",
    "guardrails",
    "compaction",
    "context_budget_tokens",
    "priority",
    "cancel_on_preempt",
    "approve_destructive_calls",
  ]);
  const guards = (raw["guardrails"] ?? {}) as Record<string, unknown>;
  checkKeys("options.guardrails", guards, [...Object.keys(GUARDRAILS), "enforcement"]);
  const options: Record<string, unknown> = {
    maxIterations: raw["max_iterations"],
    maxRetries: raw["max_retries"],
    maxToolErrors: raw["max_tool_errors"],
    temperature: raw["temperature"],
    maxTokens: raw["max_tokens"],
    toolTimeoutMs: raw["tool_timeout_ms"],
    streamChunks: raw["stream_chunks"],
    parallelToolCalls: raw["parallel_tool_calls"],
    reasoningReplay: raw["reasoning_replay"],
    enforcement: guards["enforcement"],
    compactionStrategy: raw["compaction"],
    contextBudgetTokens: raw["context_budget_tokens"],
    priority: raw["priority"],
    cancelOnPreempt: raw["cancel_on_preempt"],
    approveDestructiveCalls: raw["approve_destructive_calls"],
  };
  for (const [key, option] of Object.entries(GUARDRAILS)) {
    if (key in guards) {
      options[option] = guards[key] !== true;
    }
  }
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as RunOptions;
}

function priorMessage(raw: Json): MessageInput {
  checkKeys("prior_messages[]", raw, ["role", "type", "content", "tool_calls", "tool_call_id", "tool_name"]);
  return {
    role: String(raw["role"]) as Role,
    type: String(raw["type"]) as MessageType,
    content: String(raw["content"] ?? ""),
    toolCalls: ((raw["tool_calls"] ?? []) as Array<{ id: string; name: string; arguments: Json }>).map((c) => ({
      id: c.id,
      name: c.name,
      arguments: c.arguments,
    })),
    toolCallId: String(raw["tool_call_id"] ?? ""),
    toolName: String(raw["tool_name"] ?? ""),
  };
}

interface Outcome {
  outcome: "completed" | "failed";
  terminal_tool?: string;
  result?: string;
  failure_reason?: string;
  details: Readonly<Record<string, string>>;
  iterations: number;
  transcript: readonly Message[];
}

test("the runner sees every case file", () => {
  assert.ok(CASE_FILES.length > 0, `no *.json under ${CASES_DIR}`);
});

for (const file of CASE_FILES) {
  const name = file.replace(/\.json$/, "");
  test(`conformance: ${name}`, async () => {
    const c = JSON.parse(readFileSync(join(CASES_DIR, file), "utf8")) as Json;
    assert.equal(c["name"], name);
    checkKeys(name, c, [
      "name",
      "description",
      "workflow",
      "user_message",
      "prior_messages",
      "options",
      "script",
      "client",
      "expect",
      "mcp",
    ]);
    const expect = c["expect"] as Json;
    checkKeys(`${name}.expect`, expect, [
      "outcome",
      "terminal_tool",
      "result",
      "failure_reason",
      "details",
      "iterations",
      "approval_requests",
      "tool_calls",
      "message_types",
      "transcript_contains",
      "events",
    ]);
    const clientSpec = (c["client"] ?? {}) as Json;
    checkKeys(`${name}.client`, clientSpec, ["tools", "cancel_after_tool_calls", "approvals"]);
    const tools = new ScriptedTools((clientSpec["tools"] ?? {}) as Record<string, Behaviour[]>);
    let wf = buildWorkflow(c["workflow"] as Json, tools);
    let mcp: Client | undefined;
    if (c["mcp"] !== undefined) {
      const added = await addCaseMcpTools(wf, join(CASES_DIR, file), c["mcp"] as Json);
      wf = added.workflow;
      mcp = added.mcp;
    }
    wf = withSteps(wf, c["workflow"] as Json);
    const cancelAfter = clientSpec["cancel_after_tool_calls"] as number | undefined;

    const approvals = clientSpec["approvals"] as Record<string, ScriptedApproval[]> | undefined;

    const toolCalls: Array<{ name: string; args: Record<string, unknown> }> = [];
    const approvalRequests: Array<{ name: string; args: Record<string, unknown> }> = [];
    const messageTypes: string[] = [];
    const surfaced: CanonicalEvent[] = [];
    let outcome: Outcome;
    try {
      const stream = client.start(wf, String(c["user_message"]), {
        priorMessages: ((c["prior_messages"] ?? []) as Json[]).map(priorMessage),
        options: buildOptions((c["options"] ?? {}) as Json),
        // Absent: no approver, so the SDK's own default (deny) answers.
        approve: approvals === undefined ? undefined : scriptedApprover(approvals),
      });
      try {
        for await (const event of stream) {
          surfaced.push(canonicalEvent(event));
          if (event.type === "run_started") {
            tools.runId = event.runId;
          }
          if (event.type === "tool_call_started") {
            toolCalls.push({ name: event.toolName, args: event.arguments });
            if (cancelAfter !== undefined && toolCalls.length === cancelAfter) {
              stream.cancel("conformance case asked to cancel");
            }
          } else if (event.type === "approval_requested") {
            approvalRequests.push({ name: event.toolName, args: event.arguments });
          } else if (event.type === "message_appended") {
            messageTypes.push(event.message.type);
          }
        }
        const result = await stream.result;
        outcome = {
          outcome: "completed",
          terminal_tool: result.terminalTool,
          result: result.output,
          details: {},
          iterations: result.iterations,
          transcript: result.transcript,
        };
      } catch (err) {
        if (!(err instanceof RunFailedError)) {
          throw err;
        }
        outcome = {
          outcome: "failed",
          failure_reason: err.reason,
          details: err.details,
          iterations: err.iterations,
          transcript: err.transcript,
        };
      }
    } finally {
      await mcp?.close(); // the MCP server lives until the run has ended
    }

    assert.equal(outcome.outcome, expect["outcome"], JSON.stringify({ ...outcome, transcript: undefined }));
    for (const key of ["terminal_tool", "result", "failure_reason", "iterations"] as const) {
      if (key in expect) {
        assert.equal(outcome[key], expect[key], key);
      }
    }
    for (const [key, value] of Object.entries((expect["details"] ?? {}) as Record<string, string>)) {
      assert.equal(outcome.details[key], value, `details.${key} in ${JSON.stringify(outcome.details)}`);
    }
    if ("approval_requests" in expect) {
      assert.deepStrictEqual(approvalRequests, expect["approval_requests"], "approval_requests");
    }
    if ("tool_calls" in expect) {
      assert.deepStrictEqual(toolCalls, expect["tool_calls"]);
    }
    if ("message_types" in expect) {
      assert.deepStrictEqual(messageTypes, expect["message_types"]);
    }
    const contents = outcome.transcript.map((m) => m.content).join("\n");
    for (const needle of (expect["transcript_contains"] ?? []) as string[]) {
      assert.ok(contents.includes(needle), `transcript lacks ${JSON.stringify(needle)}`);
    }
    if ("events" in expect) {
      const problem = matchEvents(expect["events"], surfaced);
      assert.equal(problem, undefined, problem);
    }
  });
}

// ── Guard cases (tests/conformance/README.md, "Guard cases") ───────────────
// Each file under guard_cases runs through client.guard() against the same
// server, checked exactly as tests/conformance/test_guard_conformance.py does.

import { type GuardVerdict, RequestRejectedError, toolResultMessage } from "@forge-sidecar/client";

const GUARD_CASES_DIR = join(CASES_DIR, "..", "guard_cases");
const GUARD_CASE_FILES = readdirSync(GUARD_CASES_DIR)
  .filter((f) => f.endsWith(".json"))
  .sort();

interface GuardToolCallJson {
  id: string;
  name: string;
  arguments: Json;
}

function guardMessage(raw: Json): MessageInput {
  checkKeys("messages[]", raw, ["role", "type", "content", "tool_calls", "tool_call_id", "tool_name"]);
  return { ...priorMessage({ type: "unspecified", ...raw }) };
}

/** The verdict (or the error) under the case format's names. */
function guardOutcome(verdict: GuardVerdict): Json {
  switch (verdict.kind) {
    case "calls":
      return {
        verdict: "calls",
        calls: verdict.calls.map((c) => ({
          id: c.callId,
          name: c.toolName,
          args: c.arguments,
          coercions: c.coercions.map((x) => x.path),
        })),
      };
    case "retry":
      return {
        verdict: "retry",
        attempt: verdict.attempt,
        reason: verdict.reason,
        message_types: verdict.messages.map((m) => m.type),
      };
    case "done":
      return {
        verdict: "done",
        terminal_tool: verdict.terminalTool,
        result: verdict.result,
        terminal_call_id: verdict.terminalCallId,
      };
  }
}

function checkGuardStep(step: number, expect: Json, got: Json): void {
  const where = `step ${step}: ${JSON.stringify(got)}`;
  checkKeys(`step ${step}.expect`, expect, [
    "verdict",
    "calls",
    "attempt",
    "message_types",
    "reason_contains",
    "terminal_tool",
    "result",
    "terminal_call_id",
    "failure_reason",
    "details",
    "code",
    "reason",
    "field",
  ]);
  assert.equal(got["verdict"], expect["verdict"], where);
  if ("calls" in expect) {
    const want = expect["calls"] as Json[];
    const calls = got["calls"] as Json[];
    assert.equal(calls.length, want.length, where);
    want.forEach((w, i) => {
      for (const key of ["id", "name", "args", "coercions"]) {
        if (key in w) {
          assert.deepStrictEqual(calls[i]?.[key], w[key], `${key}: ${where}`);
        }
      }
    });
  }
  for (const key of ["attempt", "message_types", "terminal_tool", "result", "terminal_call_id"]) {
    if (key in expect) {
      assert.deepStrictEqual(got[key], expect[key], `${key}: ${where}`);
    }
  }
  if ("reason_contains" in expect) {
    assert.ok(String(got["reason"]).includes(String(expect["reason_contains"])), where);
  }
  if (expect["verdict"] === "failed" || expect["verdict"] === "rejected") {
    for (const key of ["failure_reason", "code", "reason", "field"]) {
      if (key in expect) {
        assert.equal(got[key], expect[key], `${key}: ${where}`);
      }
    }
  }
  for (const [key, value] of Object.entries((expect["details"] ?? {}) as Record<string, string>)) {
    assert.equal((got["details"] as Record<string, string>)[key], value, `details.${key}: ${where}`);
  }
}

test("the runner sees every Guard case file", () => {
  assert.ok(GUARD_CASE_FILES.length > 0, `no *.json under ${GUARD_CASES_DIR}`);
});

for (const file of GUARD_CASE_FILES) {
  const name = file.replace(/\.json$/, "");
  test(`guard conformance: ${name}`, async () => {
    const c = JSON.parse(readFileSync(join(GUARD_CASES_DIR, file), "utf8")) as Json;
    assert.equal(c["name"], name);
    checkKeys(name, c, ["name", "description", "workflow", "options", "messages", "steps"]);
    const wf = withSteps(buildWorkflow(c["workflow"] as Json, new ScriptedTools({})), c["workflow"] as Json);
    const options = buildOptions((c["options"] ?? {}) as Json);
    const history: MessageInput[] = (c["messages"] as Json[]).map(guardMessage);
    const steps = c["steps"] as Json[];
    for (const [i, step] of steps.entries()) {
      checkKeys(`${name}.steps[${i}]`, step, ["reply_text", "reply_tool_calls", "expect", "results"]);
      let verdict: GuardVerdict | undefined;
      let got: Json;
      try {
        verdict = await client.guard(wf, history, {
          replyText: step["reply_text"] as string | undefined,
          replyToolCalls: ((step["reply_tool_calls"] ?? []) as GuardToolCallJson[]).map((t) => ({
            id: t.id,
            name: t.name,
            arguments: t.arguments,
          })),
          options,
        });
        got = guardOutcome(verdict);
      } catch (err) {
        if (err instanceof RunFailedError) {
          got = { verdict: "failed", failure_reason: err.reason, details: err.details };
        } else if (err instanceof RequestRejectedError) {
          got = { verdict: "rejected", code: err.code, reason: err.reason, field: err.field };
        } else {
          throw err;
        }
      }
      checkGuardStep(i, step["expect"] as Json, got);
      // Carry the conversation on as a caller's loop would.
      if (verdict?.kind === "retry") {
        history.push(...verdict.messages);
      } else if (verdict?.kind === "calls") {
        const results = step["results"] as Array<{ output?: string; error?: string }> | undefined;
        if (results === undefined) {
          assert.equal(i, steps.length - 1, `step ${i}: a calls verdict needs results`);
          continue;
        }
        assert.equal(results.length, verdict.calls.length, `step ${i}: one result per call`);
        history.push(verdict.message);
        verdict.calls.forEach((call, j) => {
          const r = results[j] ?? {};
          checkKeys(`step ${i}.results[${j}]`, r, ["output", "error"]);
          history.push(toolResultMessage(call, r.output ?? "", { error: r.error }));
        });
      }
    }
  });
}
