/** Declaring a workflow: tools (local functions + schemas), required steps, terminal tools. */

import { create } from "@bufbuild/protobuf";
import {
  PrerequisiteSchema,
  ToolOutputPolicy,
  ToolSpecSchema,
  type Workflow as PbWorkflow,
  WorkflowSchema,
} from "./gen/forge/v1/workflow_pb.js";
import { type ArgsOf, type JsonSchema, type ToolSchema, jsonSchemaOf, parseArguments } from "./schema.js";

/** A server-side adjustment of a near-miss argument (e.g. "42" -> 42) before validation. */
export interface Coercion {
  /** JSON Pointer to the argument, e.g. "/count". */
  path: string;
  originalJson: string;
  coercedJson: string;
}

/** What a handler gets besides its arguments. */
export interface ToolContext {
  /**
   * Aborts when the run is cancelled, the stream to the server is lost for
   * good (not while the SDK reattaches the run), the run ends while the call
   * is still running, or the server stops waiting for this call (its tool
   * timeout). Pass it on to fetch() and friends.
   */
  signal: AbortSignal;
  callId: string;
  toolName: string;
  /** The loop iteration that produced the call. */
  iteration: number;
  runId: string;
  coercions: readonly Coercion[];
}

/** A local function the model can call; `args` is the schema's parsed output. */
export type ToolHandler<Args, Result> = (args: Args, ctx: ToolContext) => Result | Promise<Result>;

/** "Call `tool` first"; with `matchArg`, with the same value for that argument. */
export interface Prerequisite {
  tool: string;
  matchArg?: string | undefined;
}

export interface ToolOptions<Names extends string = string> {
  /** Tools the model must have called before this one. */
  prerequisites?: ReadonlyArray<Names | Prerequisite> | undefined;
  /** Overrides the JSON Schema sent to the server (for schemas that cannot describe themselves). */
  jsonSchema?: JsonSchema | undefined;
  /**
   * The tool deletes, overwrites or otherwise changes something that cannot be
   * undone (like MCP's `destructiveHint`). Unless the run turns the policy off
   * (`RunOptions.destructivePolicy: false`), the server offers it only when the
   * user's own words ask for it and runs it alone, never in a batch; with
   * `RunOptions.approveDestructiveCalls` the run's `approve` callback is asked
   * before each call. Default false.
   */
  destructive?: boolean | undefined;
  /**
   * The tool only reads (like MCP's `readOnlyHint`): calling it again changes
   * nothing. When a call throws `ToolUnreachableError` (its answer never came
   * back), the server makes it once more, under call id `<id>.retry`; a tool
   * neither read-only nor idempotent is never called twice, and the model is
   * told the call's effect is unknown. Default false.
   */
  readOnly?: boolean | undefined;
  /**
   * Calling the tool twice with the same arguments does what calling it once
   * does (like MCP's `idempotentHint`): retried after `ToolUnreachableError`
   * like a read-only tool. Default false.
   */
  idempotent?: boolean | undefined;
  /** A required step: it must succeed once before a terminal tool may run (as `.require(name)`). */
  required?: boolean | undefined;
  /** A successful call ends the run with its result (as `.terminal(name)`). */
  terminal?: boolean | undefined;
}

/**
 * The terminal tools after registering `N` with options `O`: `N` joins them
 * for `terminal: true`, and also for a `boolean` known only at run time (so
 * `RunValue` stays wide enough). The `keyof` test comes first: without a
 * `terminal` key, `O` would fail the weak-type check against `{ terminal?: … }`.
 */
type TerminalAfter<Terminal extends string, N extends string, O> = "terminal" extends keyof O
  ? O extends { terminal: true }
    ? Terminal | N
    : O extends { terminal?: false | undefined }
      ? Terminal
      : Terminal | N
  : Terminal;

/** A registered tool. */
export interface ToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly schema: ToolSchema;
  readonly jsonSchema: Record<string, unknown>;
  readonly prerequisites: readonly Prerequisite[];
  /** Cannot be undone (see ToolOptions.destructive). */
  readonly destructive: boolean;
  /** Only reads (see ToolOptions.readOnly). */
  readonly readOnly: boolean;
  /** The same effect when repeated (see ToolOptions.idempotent). */
  readonly idempotent: boolean;
  /** Parse `args` with the schema, then run the handler. */
  invoke(args: unknown, ctx: ToolContext): Promise<unknown>;
}

export interface WorkflowOptions {
  /** The system prompt; empty means the server's default built from name and description. */
  systemPrompt?: string | undefined;
  /**
   * Tool outputs (or errors) holding credentials, before the model sees them:
   * pass them on, redact each secret, or withhold the output. Unset: the
   * server's `--tool-output-secrets`. Each screened output is a
   * `tool_output_screened` event.
   */
  toolOutputSecrets?: SecretsPolicy | undefined;
}

/** A workflow's rule for tool outputs holding secrets. */
export type SecretsPolicy = "allow" | "redact" | "block";

const SECRETS_POLICY: Record<SecretsPolicy, ToolOutputPolicy> = {
  allow: ToolOutputPolicy.ALLOW,
  redact: ToolOutputPolicy.REDACT,
  block: ToolOutputPolicy.BLOCK,
};

type ToolMap = { readonly [name: string]: unknown };

/** The type of `RunResult.value` for a workflow: what its terminal tools' handlers return. */
export type RunValue<W> =
  W extends Workflow<infer Tools, infer Terminal>
    ? [Terminal] extends [never]
      ? unknown
      : Terminal extends keyof Tools
        ? Tools[Terminal]
        : string
    : unknown;

interface WorkflowState {
  name: string;
  description: string;
  systemPrompt: string;
  respondTool: boolean;
  toolOutputSecrets: SecretsPolicy | undefined;
  tools: ReadonlyMap<string, ToolDefinition>;
  requiredSteps: readonly string[];
  terminalTools: readonly string[];
}

/**
 * An immutable workflow: every method returns a new workflow, and the type
 * tracks the tool names (so `require`/`terminal` only accept registered ones)
 * and each tool's return type (so `RunResult.value` is typed).
 */
export class Workflow<Tools extends ToolMap = {}, Terminal extends string = never> {
  readonly name: string;
  readonly description: string;
  readonly systemPrompt: string;
  /** The server's built-in terminal `respond(message)` tool is enabled. */
  readonly respondTool: boolean;
  /** Tool outputs holding secrets: allow, redact or block (undefined: the server's default). */
  readonly toolOutputSecrets: SecretsPolicy | undefined;
  readonly tools: ReadonlyMap<string, ToolDefinition>;
  readonly requiredSteps: readonly string[];
  readonly terminalTools: readonly string[];
  /** Type-level only: the tools' return types and the terminal tools. */
  declare readonly __types?: { tools: Tools; terminal: Terminal };

  constructor(state: WorkflowState) {
    this.name = state.name;
    this.description = state.description;
    this.systemPrompt = state.systemPrompt;
    this.respondTool = state.respondTool;
    this.toolOutputSecrets = state.toolOutputSecrets;
    this.tools = state.tools;
    this.requiredSteps = state.requiredSteps;
    this.terminalTools = state.terminalTools;
  }

  private state(): WorkflowState {
    return {
      name: this.name,
      description: this.description,
      systemPrompt: this.systemPrompt,
      respondTool: this.respondTool,
      toolOutputSecrets: this.toolOutputSecrets,
      tools: this.tools,
      requiredSteps: this.requiredSteps,
      terminalTools: this.terminalTools,
    };
  }

  /**
   * Register a tool: a name, a description for the model, a schema (zod or any
   * Standard Schema that emits JSON Schema, or a plain JSON Schema object) and
   * the local handler, whose argument type is inferred from the schema.
   */
  tool<
    const N extends string,
    const S extends ToolSchema,
    R,
    const O extends ToolOptions<(keyof Tools & string) | N> = {},
  >(
    name: N,
    description: string,
    schema: S,
    handler: ToolHandler<ArgsOf<S>, R>,
    options?: O,
  ): Workflow<Tools & { readonly [K in N]: Awaited<R> }, TerminalAfter<Terminal, N, O>> {
    if (this.tools.has(name)) {
      throw new Error(`workflow ${JSON.stringify(this.name)} already has a tool named ${JSON.stringify(name)}`);
    }
    const definition: ToolDefinition = {
      name,
      description,
      schema,
      jsonSchema: options?.jsonSchema !== undefined ? { ...options.jsonSchema } : jsonSchemaOf(name, schema),
      prerequisites: (options?.prerequisites ?? []).map((p) =>
        typeof p === "string" ? { tool: p } : { tool: p.tool, matchArg: p.matchArg },
      ),
      destructive: options?.destructive ?? false,
      readOnly: options?.readOnly ?? false,
      idempotent: options?.idempotent ?? false,
      async invoke(args: unknown, ctx: ToolContext): Promise<unknown> {
        const parsed = (await parseArguments(schema, args)) as ArgsOf<S>;
        return await handler(parsed, ctx);
      },
    };
    const tools = new Map(this.tools);
    tools.set(name, definition);
    const state = this.state();
    return new Workflow({
      ...state,
      tools,
      requiredSteps: options?.required === true ? withName(state.requiredSteps, name) : state.requiredSteps,
      terminalTools: options?.terminal === true ? withName(state.terminalTools, name) : state.terminalTools,
    });
  }

  /** These tools must each succeed once before a terminal tool may run (or `{ required: true }` at registration). */
  require(...names: Array<keyof Tools & string>): Workflow<Tools, Terminal> {
    return new Workflow({ ...this.state(), requiredSteps: withName(this.requiredSteps, ...names) });
  }

  /** A successful call of any of these ends the run with its result (or `{ terminal: true }` at registration). */
  terminal<const T extends keyof Tools & string>(...names: T[]): Workflow<Tools, Terminal | T> {
    return new Workflow({ ...this.state(), terminalTools: withName(this.terminalTools, ...names) });
  }

  /**
   * Add the server's built-in terminal tool `respond(message: string)`: the
   * model answers conversational turns by calling it, and the run ends with
   * the message as its (string) result.
   */
  withRespondTool(): Workflow<Tools, Terminal | "respond"> {
    return new Workflow({ ...this.state(), respondTool: true });
  }

  /** Replace the system prompt (empty: the server's default). */
  withSystemPrompt(systemPrompt: string): Workflow<Tools, Terminal> {
    return new Workflow({ ...this.state(), systemPrompt });
  }

  /** The contract's Workflow message. */
  toProto(): PbWorkflow {
    return create(WorkflowSchema, {
      name: this.name,
      description: this.description,
      systemPrompt: this.systemPrompt,
      respondTool: this.respondTool,
      toolOutputSecrets:
        this.toolOutputSecrets === undefined ? ToolOutputPolicy.UNSPECIFIED : SECRETS_POLICY[this.toolOutputSecrets],
      requiredSteps: [...this.requiredSteps],
      terminalTools: [...this.terminalTools],
      tools: [...this.tools.values()].map((t) =>
        create(ToolSpecSchema, {
          name: t.name,
          description: t.description,
          parametersJsonSchema: JSON.stringify(t.jsonSchema),
          prerequisites: t.prerequisites.map((p) =>
            create(PrerequisiteSchema, { tool: p.tool, matchArg: p.matchArg ?? "" }),
          ),
          destructive: t.destructive,
          readOnly: t.readOnly,
          idempotent: t.idempotent,
        }),
      ),
    });
  }
}

/** `names` appended to `list`, each once, in order. */
function withName(list: readonly string[], ...names: string[]): string[] {
  const out = [...list];
  for (const name of names) {
    if (!out.includes(name)) {
      out.push(name);
    }
  }
  return out;
}

/** Start a workflow: `workflow("weather", "Look up the weather and report it.").tool(...)`. */
export function workflow(name: string, description = "", options: WorkflowOptions = {}): Workflow {
  return new Workflow({
    name,
    description,
    systemPrompt: options.systemPrompt ?? "",
    respondTool: false,
    toolOutputSecrets: options.toolOutputSecrets,
    tools: new Map(),
    requiredSteps: [],
    terminalTools: [],
  });
}
