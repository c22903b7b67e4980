// The final messages pi-ai 0.73.1 makes of the recorded streams in
// ../../fixtures/{openai-responses-sse,google-sse}: the Responses events go
// through its processResponsesStream; the Gemini bodies are served over
// HTTP to its google provider (baseUrl pointed at a local server). Usage:
//   node generate.mjs PATH/TO/node_modules/@mariozechner/pi-ai/dist/providers
import { readFileSync, writeFileSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const providers = process.argv[2];
const here = new URL(".", import.meta.url).pathname;
const fixtures = join(here, "..", "..", "fixtures");
const load = async (file) => import(pathToFileURL(join(providers, file)).href);
const { processResponsesStream } = await load("openai-responses-shared.js");
const { streamGoogle } = await load("google.js");
const { AssistantMessageEventStream } = await import(
  pathToFileURL(join(providers, "..", "utils", "event-stream.js")).href
);

const payloads = (text, sse) =>
  sse
    ? text.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5)))
    : text.split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));

const model = (api, provider, id) => ({
  id, name: id, api, provider, baseUrl: "", reasoning: true, input: ["text", "image"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000,
});

for (const file of readdirSync(join(fixtures, "openai-responses-sse")).filter((f) => /\.(sse|jsonl)$/.test(f))) {
  const events = payloads(readFileSync(join(fixtures, "openai-responses-sse", file), "utf8"), file.endsWith(".sse"));
  const output = {
    role: "assistant", content: [], api: "openai-responses", provider: "openai", model: "gpt-5",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "stop", timestamp: 0,
  };
  const stream = new AssistantMessageEventStream();
  try {
    await processResponsesStream((async function* () { yield* events; })(), output, stream, model("openai-responses", "openai", "gpt-5"));
  } catch (error) {
    output.stopReason = "error";
    output.errorMessage = error.message;
  }
  writeFileSync(join(here, `${file}.pi.json`), JSON.stringify(output, null, 1) + "\n");
}

for (const file of readdirSync(join(fixtures, "google-sse")).filter((f) => /\.(sse|jsonl)$/.test(f))) {
  const text = readFileSync(join(fixtures, "google-sse", file), "utf8");
  const body = payloads(text, file.endsWith(".sse")).map((p) => `data: ${JSON.stringify(p)}\r\n\r\n`).join("");
  const server = createServer((_, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(body);
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const m = model("google-generative-ai", "google", "gemini-3-flash-preview");
  m.baseUrl = `http://127.0.0.1:${server.address().port}`;
  let final;
  for await (const event of streamGoogle(m, { messages: [{ role: "user", content: "hi", timestamp: 0 }] }, { apiKey: "test" })) {
    if (event.type === "done") final = event.message;
    if (event.type === "error") final = event.error;
  }
  server.close();
  final.timestamp = 0;
  // Pi's generated call ids carry the clock: keep their shape only.
  for (const block of final.content) {
    if (block.type === "toolCall") block.id = block.id.replace(/_\d{13}_\d+$/, "_<time>_<n>");
  }
  writeFileSync(join(here, `${file}.pi.json`), JSON.stringify(final, null, 1) + "\n");
}
