// Generates the golden request bodies from pi-ai 0.73.1's own providers:
// each provider is called with a context and options, and its `onPayload`
// hook records the parameters it would send (the call then stops before
// any network access). Usage, from a directory where pi-ai is installed
// (see /work/shared/oracle/pi-ai):
//   node generate.mjs PATH/TO/node_modules/@mariozechner/pi-ai/dist/providers
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const providers = process.argv[2];
const here = new URL(".", import.meta.url).pathname;
const load = async (file) => import(pathToFileURL(join(providers, file)).href);
const { streamOpenAIResponses } = await load("openai-responses.js");
const { streamGoogle } = await load("google.js");
const { streamGoogleVertex } = await load("google-vertex.js");

const model = (api, provider, id, reasoning) => ({
  id, name: id, api, provider, baseUrl: "http://127.0.0.1:9", reasoning,
  input: ["text", "image"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100000, maxTokens: 1000,
});

const vertex = { project: "p", location: "us-central1" };

const cases = [
  ["responses-same-model", "plain", streamOpenAIResponses, model("openai-responses", "openai", "gpt-5", false), {}],
  ["responses-same-model", "options", streamOpenAIResponses, model("openai-responses", "openai", "gpt-5", true),
    { maxTokens: 100, temperature: 0.5, reasoningEffort: "high", reasoningSummary: "detailed" }],
  ["responses-foreign", "plain", streamOpenAIResponses, model("openai-responses", "openai", "gpt-5", false), {}],
  ["google-same-model", "plain", streamGoogle, model("google-generative-ai", "google", "gemini-2.5-flash", false), {}],
  ["google-same-model", "options", streamGoogle, model("google-generative-ai", "google", "gemini-2.5-flash", true),
    { maxTokens: 100, temperature: 0.5, toolChoice: "any", thinking: { enabled: true, budgetTokens: 1024 } }],
  ["google-same-model", "off", streamGoogle, model("google-generative-ai", "google", "gemini-2.5-flash", true),
    { thinking: { enabled: false } }],
  ["google-foreign", "plain", streamGoogle, model("google-generative-ai", "google", "gemini-2.5-flash", false), {}],
  ["google-foreign", "gemini3", streamGoogle, model("google-generative-ai", "google", "gemini-3-pro-preview", true),
    { thinking: { enabled: true, level: "LOW" } }],
  // Vertex AI: provider and api `google-vertex`. History recorded there, the
  // same history recorded through the Gemini API, and one whose provider is
  // `google-vertex` but whose api is the Gemini API's.
  ["google-vertex-same-model", "vertex", streamGoogleVertex, model("google-vertex", "google-vertex", "gemini-2.5-flash", false), vertex],
  ["google-same-model", "vertex", streamGoogleVertex, model("google-vertex", "google-vertex", "gemini-2.5-flash", false), vertex],
  ["google-vertex-mixed", "vertex", streamGoogleVertex, model("google-vertex", "google-vertex", "gemini-2.5-flash", false), vertex],
];

for (const [context, name, stream, m, options] of cases) {
  const ctx = JSON.parse(readFileSync(join(here, `${context}.context.json`), "utf8"));
  let payload;
  const events = stream(m, ctx, {
    ...options,
    apiKey: "test",
    onPayload: (params) => {
      payload = params;
      throw new Error("payload recorded");
    },
  });
  for await (const _ of events) {
    // drain until the stream ends
  }
  if (!payload) throw new Error(`${context}.${name}: no payload`);
  writeFileSync(join(here, `${context}.${name}.pi.json`), JSON.stringify(payload, null, 1) + "\n");
}
