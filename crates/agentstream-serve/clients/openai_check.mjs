// The official OpenAI Node SDK against `agentstream serve clients/script.json`
// (same turn order as openai_check.py). Run from a directory whose
// node_modules holds `openai`.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import OpenAI from "openai";

const url = process.env.AGENTSTREAM_URL;
const script = JSON.parse(readFileSync(process.env.AGENTSTREAM_SCRIPT, "utf8"));
const client = new OpenAI({ baseURL: url, apiKey: process.env.AGENTSTREAM_KEY ?? "not-needed", maxRetries: 0 });
const tools = [{ type: "function", function: { name: "get_weather", description: "The weather in a city",
  parameters: { type: "object", properties: { city: { type: "string" } } } } }];
const question = [{ role: "user", content: "What is the weather in Paris?" }];

function turn(index) {
  const message = script[index];
  const text = message.content.filter((b) => b.type === "text").map((b) => b.text).join("");
  const calls = message.content.filter((b) => b.type === "toolCall").map((b) => [b.id, b.name, b.arguments]);
  return { text, calls, usage: message.usage };
}

function followUp(call) {
  return [...question,
    { role: "assistant", content: "Let me check the weather.", tool_calls: [
      { id: call[0], type: "function", function: { name: call[1], arguments: JSON.stringify(call[2]) } }] },
    { role: "tool", tool_call_id: call[0], content: "18 C, sunny" }];
}

function checkUsage(usage, want) {
  assert.equal(usage.prompt_tokens, want.input + want.cacheRead);
  assert.equal(usage.completion_tokens, want.output);
  assert.equal(usage.total_tokens, want.totalTokens);
}

async function stream(messages) {
  let text = "", usage = null, finish = null;
  const calls = [];
  const chunks = await client.chat.completions.create({ model: "scripted-model", messages, tools, stream: true,
    stream_options: { include_usage: true } });
  for await (const chunk of chunks) {
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      text += choice.delta.content ?? "";
      for (const call of choice.delta.tool_calls ?? []) {
        calls[call.index] ??= { id: null, name: "", arguments: "" };
        calls[call.index].id = call.id ?? calls[call.index].id;
        calls[call.index].name += call.function?.name ?? "";
        calls[call.index].arguments += call.function?.arguments ?? "";
      }
      finish = choice.finish_reason ?? finish;
    }
  }
  return { text, calls: calls.map((c) => [c.id, c.name, JSON.parse(c.arguments)]), usage, finish };
}

const tests = {
  async streamingToolCall() {
    const got = await stream(question);
    const want = turn(0);
    assert.equal(got.text, want.text);
    assert.deepEqual(got.calls, want.calls);
    assert.equal(got.finish, "tool_calls");
    checkUsage(got.usage, want.usage);
  },
  async streamingAnswerAfterToolResult() {
    const got = await stream(followUp(turn(0).calls[0]));
    const want = turn(1);
    assert.equal(got.text, want.text);
    assert.deepEqual(got.calls, []);
    assert.equal(got.finish, "stop");
    checkUsage(got.usage, want.usage);
    const recorded = await (await fetch(`${url}/requests`)).json();
    const result = recorded[1].context.messages.at(-1);
    assert.equal(result.role, "toolResult");
    assert.equal(result.toolCallId, turn(0).calls[0][0]);
  },
  async toolCallWithoutStreaming() {
    const completion = await client.chat.completions.create({ model: "scripted-model", messages: question, tools });
    const want = turn(2);
    const message = completion.choices[0].message;
    assert.equal(message.content, want.text);
    assert.deepEqual(message.tool_calls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
      want.calls);
    assert.equal(completion.choices[0].finish_reason, "tool_calls");
    checkUsage(completion.usage, want.usage);
  },
  async answerWithoutStreaming() {
    const completion = await client.chat.completions.create({ model: "scripted-model", tools,
      messages: followUp(turn(2).calls[0]) });
    const want = turn(3);
    assert.equal(completion.choices[0].message.content, want.text);
    checkUsage(completion.usage, want.usage);
  },
  async exhaustedScriptIsAClientErrorNotRetried() {
    // The SDK's own retries are turned on for this call: 400 is not retried.
    await assert.rejects(client.chat.completions.create({ model: "scripted-model", messages: question },
      { maxRetries: 2 }),
      (error) => error.status === 400 && /no more responses/.test(error.message));
    const recorded = await (await fetch(`${url}/requests`)).json();
    assert.equal(recorded.length, 5);
  },
};

let passed = 0, failed = 0;
for (const [name, test] of Object.entries(tests)) {
  try {
    await test();
    passed++;
    console.log(`ok   ${name}`);
  } catch (error) {
    failed++;
    console.log(`FAIL ${name}`);
    console.log(error);
  }
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
