// The typed surface of agentstream-wasm. The module itself is the
// wasm-bindgen output of the agentstream-wasm crate with its `js-api`
// feature (`agentstream_wasm.js`, whose own declarations are
// `agentstream_wasm.d.ts`); these types say what its events are.

/** A text, thinking or tool-call part of an assistant message, in Pi's JSON. */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "thinking"; thinking: string }
  | { type: "toolCall"; id: string; name: string; arguments: Record<string, unknown> };

/** An assistant message in Pi's JSON. */
export interface AssistantMessage {
  role: "assistant";
  content: ContentBlock[];
  stopReason: "stop" | "length" | "toolUse" | "error" | "aborted";
  errorMessage?: string;
  [key: string]: unknown;
}

/** One event of a call, in Pi's JSON; the last is `done` or `error`. */
export type ModelEvent =
  | { type: "start"; partial: AssistantMessage }
  | { type: "text_start" | "thinking_start" | "toolcall_start"; contentIndex: number; partial: AssistantMessage }
  | { type: "text_delta" | "thinking_delta" | "toolcall_delta"; contentIndex: number; delta: string; partial: AssistantMessage }
  | { type: "text_end" | "thinking_end" | "toolcall_end"; contentIndex: number; partial: AssistantMessage; [key: string]: unknown }
  | { type: "done"; reason: "stop" | "length" | "toolUse"; message: AssistantMessage }
  | { type: "error"; reason: "aborted" | "error"; error: AssistantMessage };

/** The events of one call: `for await (const event of model.stream("hi"))`. */
export interface EventIterator extends AsyncIterableIterator<ModelEvent> {
  /** Cancels the call now instead of at garbage collection. */
  free(): void;
}

/**
 * A model that answers each call with the next scripted turn. `script` is a
 * JSON array of Pi assistant messages (or of failures `{"stopReason":
 * "error", …}`); each text is split into `chunks` deltas when given. Throws
 * on a script that does not parse, naming the turn.
 */
export declare class ScriptedModel {
  constructor(script: string, chunks?: number | null);
  /** Starts a call with one user message and returns its events. */
  stream(prompt: string): EventIterator;
  /** Frees the model's memory now. */
  free(): void;
}
