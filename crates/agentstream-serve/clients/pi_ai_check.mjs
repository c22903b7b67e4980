// pi-ai 0.73.1's `openai-responses` and `google` providers (the real Pi
// provider layer, not ours) against `agentstream serve clients/script.json`:
// pi-ai takes a `baseUrl` on its model object, pointed here at the server
// (as ../shared/oracle/pi-ai/compare.mjs does for the first two protocols).
// pi-ai always streams, so the script's four turns are four streaming
// calls: a tool call, the answer after its result, and the same again.
// Each asserts the text, the tool call's name and arguments, the stop
// reason and Pi's usage (which equals the script's: both protocols carry
// input, cacheRead, output and the total), and that the server recorded
// the tool result paired with the call.
//
// usage (from a folder where `npm install @mariozechner/pi-ai@0.73.1` was
// run): AGENTSTREAM_URL=http://127.0.0.1:PORT/v1 AGENTSTREAM_SCRIPT=script.json \
//        PI_API=openai-responses|google-generative-ai node pi_ai_check.mjs

import fs from "node:fs";
import { stream } from "@mariozechner/pi-ai";

const URL_V1 = process.env.AGENTSTREAM_URL;
const SCRIPT = JSON.parse(fs.readFileSync(process.env.AGENTSTREAM_SCRIPT, "utf8"));
const API = process.env.PI_API;
const KEY = process.env.AGENTSTREAM_KEY || "not-needed";
const BASE = URL_V1.replace(/\/v1$/, "");

const model = {
  id: API === "google-generative-ai" ? "gemini-2.5-flash" : "scripted-model",
  name: "scripted",
  api: API,
  provider: API === "google-generative-ai" ? "google" : "openai",
  // The OpenAI SDK appends /responses; the Gen AI SDK, with pi-ai's empty
  // apiVersion, appends /models/{id}:streamGenerateContent.
  baseUrl: API === "google-generative-ai" ? `${BASE}/v1beta` : `${BASE}/v1`,
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 128000,
  maxTokens: 4096,
};
const tools = [{
  name: "get_weather",
  description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } } },
}];
const question = { role: "user", content: "What is the weather in Paris?", timestamp: 0 };

function assert(condition, what) {
  if (!condition) throw new Error(what);
}

async function recorded() {
  const response = await fetch(`${URL_V1}/requests`);
  return response.json();
}

async function call(messages) {
  const s = stream(model, { systemPrompt: "Be brief.", messages, tools }, { apiKey: KEY, maxRetries: 0, timeoutMs: 15000 });
  for await (const _ of s) {
    // The events are checked through the final message.
  }
  return s.result();
}

function checkTurn(message, index) {
  const want = SCRIPT[index];
  const text = want.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  const calls = want.content.filter((b) => b.type === "toolCall");
  const got = message.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  assert(got === text, `turn ${index}: text ${JSON.stringify(got)} != ${JSON.stringify(text)}`);
  const gotCalls = message.content.filter((b) => b.type === "toolCall");
  assert(JSON.stringify(gotCalls.map((c) => [c.name, c.arguments])) === JSON.stringify(calls.map((c) => [c.name, c.arguments])),
    `turn ${index}: calls ${JSON.stringify(gotCalls)}`);
  if (API === "openai-responses" && calls.length > 0)
    assert(gotCalls[0].id.split("|")[0] === calls[0].id, `turn ${index}: call id ${gotCalls[0].id}`);
  const stop = calls.length > 0 ? "toolUse" : "stop";
  assert(message.stopReason === stop, `turn ${index}: stopReason ${message.stopReason} ${message.errorMessage ?? ""}`);
  for (const field of ["input", "output", "cacheRead", "totalTokens"])
    assert(message.usage[field] === want.usage[field], `turn ${index}: usage.${field} ${message.usage[field]} != ${want.usage[field]}`);
  return gotCalls;
}

let failed = 0;
async function test(name, body) {
  try {
    await body();
    console.log(`ok   ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`FAIL ${name}\n${error.stack}`);
  }
}

for (const first of [0, 2]) {
  let answer;
  await test(`turn ${first}: a streamed tool call`, async () => {
    answer = await call([question]);
    checkTurn(answer, first);
  });
  await test(`turn ${first + 1}: the answer after the tool result`, async () => {
    const toolCall = answer.content.find((b) => b.type === "toolCall");
    const result = {
      role: "toolResult", toolCallId: toolCall.id, toolName: toolCall.name,
      content: [{ type: "text", text: "18 C, sunny" }], isError: false, timestamp: 0,
    };
    checkTurn(await call([question, answer, result]), first + 1);
    const request = (await recorded())[first + 1];
    assert(request.api === API, `recorded api ${request.api}`);
    const messages = request.context.messages;
    const sent = messages[messages.length - 1];
    const made = messages[messages.length - 2].content.find((b) => b.type === "toolCall");
    assert(sent.role === "toolResult" && sent.toolCallId === made.id && sent.toolName === "get_weather",
      `recorded result ${JSON.stringify(sent)} for ${JSON.stringify(made)}`);
    assert(sent.content[0].text === "18 C, sunny", `recorded result text ${JSON.stringify(sent)}`);
  });
}
console.log(`${4 - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
