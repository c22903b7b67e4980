// What pi-ai 0.73.1 makes of the cut-off and refusal streams in
// ../../fixtures/cut-tool-calls: each body is served over HTTP on 127.0.0.1
// to pi-ai's own `anthropic-messages` (files named anthropic-*) or
// `openai-completions` (openai-*) provider, as ../../../../../shared/oracle/pi-ai/compare.mjs does,
// and the terminal message and the event types are written to <file>.pi.json.
// Usage, from a folder where `npm install @mariozechner/pi-ai@0.73.1` was run:
//   node PATH/TO/generate.mjs
import { readFileSync, writeFileSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { stream } from "@mariozechner/pi-ai";

const here = new URL(".", import.meta.url).pathname;
const fixtures = join(here, "..", "..", "fixtures", "cut-tool-calls");

for (const file of readdirSync(fixtures).filter((f) => f.endsWith(".sse")).sort()) {
  const anthropic = file.startsWith("anthropic-");
  const body = readFileSync(join(fixtures, file));
  const server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.end(body);
    });
  });
  await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
  const port = server.address().port;
  const model = {
    id: "recorded", name: "recorded", provider: "recorded", reasoning: false, input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, maxTokens: 4096,
    ...(anthropic
      ? { api: "anthropic-messages", baseUrl: `http://127.0.0.1:${port}`, contextWindow: 200000 }
      : { api: "openai-completions", baseUrl: `http://127.0.0.1:${port}/v1`, contextWindow: 128000 }),
  };
  const events = [];
  let message;
  for await (const event of stream(model, { messages: [{ role: "user", content: "hi", timestamp: 0 }] }, { apiKey: "test" })) {
    events.push(event.type);
    if (event.type === "done") message = event.message;
    if (event.type === "error") message = event.error;
  }
  server.close();
  message.timestamp = 0;
  writeFileSync(join(here, `${file}.pi.json`), JSON.stringify({ events, message }, null, 1) + "\n");
}
