/**
 * Tool argument schemas: any Standard Schema library that can also emit JSON
 * Schema (zod >= 4.2, valibot with its JSON Schema adapter, ArkType, ...), or a
 * plain JSON Schema object whose argument type is inferred from the literal.
 */

// ── Standard Schema (https://standardschema.dev), copied as the spec asks ──

/** A schema that validates values (zod, valibot, ArkType... all implement it). */
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly "~standard": StandardSchemaV1.Props<Input, Output>;
}

export declare namespace StandardSchemaV1 {
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    readonly validate: (
      value: unknown,
      options?: { readonly libraryOptions?: Record<string, unknown> | undefined } | undefined,
    ) => Result<Output> | Promise<Result<Output>>;
    readonly types?: Types<Input, Output> | undefined;
    /** Standard JSON Schema: how the schema describes itself as JSON Schema. */
    readonly jsonSchema?: JsonSchemaConverter | undefined;
  }
  type Result<Output> = SuccessResult<Output> | FailureResult;
  interface SuccessResult<Output> {
    readonly value: Output;
    readonly issues?: undefined;
  }
  interface FailureResult {
    readonly issues: ReadonlyArray<Issue>;
  }
  interface Issue {
    readonly message: string;
    readonly path?: ReadonlyArray<PropertyKey | PathSegment> | undefined;
  }
  interface PathSegment {
    readonly key: PropertyKey;
  }
  interface Types<Input = unknown, Output = Input> {
    readonly input: Input;
    readonly output: Output;
  }
  interface JsonSchemaConverter {
    readonly input: (options: {
      readonly target: string;
      readonly libraryOptions?: Record<string, unknown> | undefined;
    }) => Record<string, unknown>;
  }
  type InferOutput<S extends StandardSchemaV1> = NonNullable<S["~standard"]["types"]>["output"];
}

// ── Plain JSON Schema with a literal-inferred argument type ────────────────

/** A JSON Schema object (draft 2020-12). Write it inline (or `as const`) to get typed arguments. */
export type JsonSchema = { readonly [key: string]: unknown };

/** What a tool accepts as its parameter schema. */
export type ToolSchema = StandardSchemaV1 | JsonSchema;

type Next<D extends unknown[]> = [...D, unknown];
type Simplify<T> = { [K in keyof T]: T[K] } & {};

/**
 * The TypeScript type a literal JSON Schema describes (the common subset:
 * type, properties, required, items, enum, const, anyOf/oneOf, nullable type
 * arrays). Anything it cannot follow becomes `unknown`.
 */
export type FromJsonSchema<S, D extends unknown[] = []> = D["length"] extends 10
  ? unknown
  : S extends { readonly const: infer C }
    ? C
    : S extends { readonly enum: ReadonlyArray<infer E> }
      ? E
      : S extends { readonly anyOf: ReadonlyArray<infer A> }
        ? FromJsonSchema<A, Next<D>>
        : S extends { readonly oneOf: ReadonlyArray<infer A> }
          ? FromJsonSchema<A, Next<D>>
          : S extends { readonly type: ReadonlyArray<infer T> }
            ? FromTypeName<T, S, D>
            : S extends { readonly type: infer T }
              ? FromTypeName<T, S, D>
              : unknown;

type FromTypeName<T, S, D extends unknown[]> = T extends "string"
  ? string
  : T extends "number" | "integer"
    ? number
    : T extends "boolean"
      ? boolean
      : T extends "null"
        ? null
        : T extends "array"
          ? S extends { readonly items: infer I }
            ? FromJsonSchema<I, Next<D>>[]
            : unknown[]
          : T extends "object"
            ? FromObjectSchema<S, D>
            : unknown;

type RequiredKeys<S> = S extends { readonly required: ReadonlyArray<infer R> } ? R : never;

type FromObjectSchema<S, D extends unknown[]> = S extends {
  readonly properties: infer P extends { readonly [key: string]: unknown };
}
  ? Simplify<
      {
        -readonly [K in keyof P as K extends RequiredKeys<S> ? K : never]: FromJsonSchema<
          P[K],
          Next<D>
        >;
      } & {
        -readonly [K in keyof P as K extends RequiredKeys<S> ? never : K]?: FromJsonSchema<
          P[K],
          Next<D>
        >;
      }
    >
  : Record<string, unknown>;

/** The argument type a tool handler receives for schema `S`. */
export type ArgsOf<S> = S extends StandardSchemaV1
  ? StandardSchemaV1.InferOutput<S>
  : FromJsonSchema<S> extends infer A extends Record<string, unknown>
    ? A
    : Record<string, unknown>;

// ── Runtime ────────────────────────────────────────────────────────────────

export function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  if (schema === null || (typeof schema !== "object" && typeof schema !== "function")) {
    return false;
  }
  const props: unknown = (schema as { "~standard"?: unknown })["~standard"];
  return (
    typeof props === "object" &&
    props !== null &&
    typeof (props as { validate?: unknown }).validate === "function"
  );
}

/** The arguments failed the tool's schema; reported to the model as a tool error. */
export class ToolArgumentsError extends Error {
  override readonly name = "ValidationError";
  readonly issues: ReadonlyArray<StandardSchemaV1.Issue>;

  constructor(message: string, issues: ReadonlyArray<StandardSchemaV1.Issue> = []) {
    super(message);
    this.issues = issues;
  }
}

function formatIssue(issue: StandardSchemaV1.Issue): string {
  const path = (issue.path ?? [])
    .map((p) => String(typeof p === "object" && p !== null ? p.key : p))
    .join(".");
  return path ? `${path}: ${issue.message}` : issue.message;
}

/** JSON Schema sent to the server for the tool's parameters. */
export function jsonSchemaOf(toolName: string, schema: ToolSchema): Record<string, unknown> {
  if (!isStandardSchema(schema)) {
    return { ...schema };
  }
  const converter = schema["~standard"].jsonSchema;
  if (converter === undefined) {
    throw new TypeError(
      `tool ${JSON.stringify(toolName)}: the ${schema["~standard"].vendor} schema cannot describe ` +
        "itself as JSON Schema (Standard JSON Schema); pass { jsonSchema } in the tool options",
    );
  }
  return converter.input({ target: "draft-2020-12" });
}

/** Parse a call's arguments with the tool's schema before the handler sees them. */
export async function parseArguments(schema: ToolSchema, raw: unknown): Promise<unknown> {
  if (isStandardSchema(schema)) {
    const result = await schema["~standard"].validate(raw);
    if (result.issues !== undefined) {
      throw new ToolArgumentsError(
        `invalid arguments: ${result.issues.map(formatIssue).join("; ")}`,
        result.issues,
      );
    }
    return result.value;
  }
  // A plain JSON Schema: the server has validated the arguments against it
  // (draft 2020-12); the SDK only checks the shape it hands to the handler.
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new ToolArgumentsError("invalid arguments: expected a JSON object");
  }
  return raw;
}
