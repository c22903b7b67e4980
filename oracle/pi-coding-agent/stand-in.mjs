// A pi-ai provider for the oracles (compaction.mjs, branch-summary.mjs)
// that answers "summary" at once and keeps the last request, so that the
// prompts Pi builds can be read without a model or a network.
import { createAssistantMessageEventStream, registerApiProvider } from "@mariozechner/pi-ai";

// Registers the stand-in under `api`; the returned object's `request` is
// the last call's `{ context, options }` (null before any).
export function standIn(api) {
  const seen = { request: null };
  const answer = (model, context, options) => {
    seen.request = { context, options };
    const stream = createAssistantMessageEventStream();
    const message = { role: "assistant", content: [{ type: "text", text: "summary" }], api, provider: "oracle",
      model: "oracle", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 0 };
    stream.push({ type: "done", reason: "stop", message });
    stream.end(message);
    return stream;
  };
  registerApiProvider({ api, stream: answer, streamSimple: answer });
  return seen;
}
