/** Guard verdicts: one guard decision for a caller that runs its own loop and model calls (client.guard()). */

import { runFailedFromPb } from "./errors.js";
import { toolCallStartedFromPb } from "./events.js";
import type { GuardResponse } from "./gen/forge/v1/forge_service_pb.js";
import { ForgeError } from "./errors.js";
import { type Message, messageFromPb } from "./messages.js";
import type { Coercion } from "./workflow.js";

/** How a failed tool call reads in the conversation: the server counts such a result as an error. */
export const TOOL_ERROR_PREFIX = "[ToolError] ";

/** One validated, coerced tool call for the caller to run. */
export interface GuardedCall {
  /** The id the conversation records (the model's own id where it gave one). */
  callId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  /** The arguments as the server wrote them (exact integers). */
  argumentsJson: string;
  /** Near-miss arguments the server fixed before validation. */
  coercions: readonly Coercion[];
}

/** Run `calls`, then append `message` and one `toolResultMessage(call, ...)` per call. */
export interface GuardCallsVerdict {
  kind: "calls";
  calls: GuardedCall[];
  /** The assistant message recording the calls, with their ids. */
  message: Message;
}

/** Run nothing: append `messages` (the rejected attempt and its correction, transient) and ask the model again. */
export interface GuardRetryVerdict {
  kind: "retry";
  messages: Message[];
  /** Why the reply was rejected, in words. */
  reason: string;
  /** Consecutive rejected attempts so far; past the retry budget the next rejection throws a RunFailedError. */
  attempt: number;
}

/** The terminal tool returned: the run is complete. */
export interface GuardDoneVerdict {
  kind: "done";
  terminalTool: string;
  result: string;
  terminalCallId: string;
}

export type GuardVerdict = GuardCallsVerdict | GuardRetryVerdict | GuardDoneVerdict;

/**
 * The tool message recording a call's result for the next guard request:
 * `output`, or with `options.error` a failed call ("[ToolError] ...").
 */
export function toolResultMessage(
  call: Pick<GuardedCall, "callId" | "toolName">,
  output: string,
  options: { error?: string | undefined } = {},
): Message {
  return {
    role: "tool",
    type: "tool_result",
    content: options.error !== undefined ? TOOL_ERROR_PREFIX + options.error : output,
    toolCalls: [],
    toolCallId: call.callId,
    toolName: call.toolName,
    transient: false,
  };
}

/** The SDK's verdict; a `failed` answer throws its RunFailedError (transcript: `sent`). */
export function verdictFromPb(response: GuardResponse, sent: readonly Message[]): GuardVerdict {
  const v = response.verdict;
  switch (v.case) {
    case "calls": {
      const calls = v.value.calls.map((c): GuardedCall => {
        const e = toolCallStartedFromPb(c);
        return {
          callId: e.callId,
          toolName: e.toolName,
          arguments: e.arguments,
          argumentsJson: e.argumentsJson || "{}",
          coercions: e.coercions,
        };
      });
      return {
        kind: "calls",
        calls,
        message: {
          role: "assistant",
          type: "tool_call",
          content: "",
          toolCalls: calls.map((c) => ({ id: c.callId, name: c.toolName, argumentsJson: c.argumentsJson })),
          toolCallId: "",
          toolName: "",
          transient: false,
        },
      };
    }
    case "retry":
      return {
        kind: "retry",
        messages: v.value.messages.map(messageFromPb),
        reason: v.value.reason,
        attempt: v.value.attempt,
      };
    case "done":
      return {
        kind: "done",
        terminalTool: v.value.terminalTool,
        result: v.value.result,
        terminalCallId: v.value.terminalCallId,
      };
    case "failed":
      // The conversation the guard was given stands in for a transcript.
      throw runFailedFromPb(
        v.value.transcript.length > 0 ? v.value : { ...v.value, transcriptOmitted: true },
        sent,
      );
  }
  throw new ForgeError("the server's Guard answer holds no verdict");
}
