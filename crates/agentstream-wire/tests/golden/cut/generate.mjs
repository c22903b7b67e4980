// What pi-ai 0.73.1 makes of the cut-off and refusal streams in
// ../../fixtures/cut-tool-calls: each body is served over HTTP on 127.0.0.1
// to pi-ai's own `anthropic-messages` (files named anthropic-*) or
// `openai-completions` (openai-*) provider, as the pi-ai oracle's compare.mjs
// does, and the event types and the terminal message are written to
// <file>.pi.json. Usage (after `npm install @mariozechner/pi-ai@0.73.1`):
//   node generate.mjs PATH/TO/node_modules/@mariozechner/pi-ai
import { readFileSync, writeFileSync, readdirSync } from "node:fs";
import { createServer } from "node:http";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const { stream } = await import(pathToFileURL(join(process.argv[2], "dist", "index.js")).href);

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
