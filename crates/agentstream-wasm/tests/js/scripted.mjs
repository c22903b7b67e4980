// The `js-api` feature from JavaScript: `ScriptedModel` and `for await`
// over a call's events. usage: node --test scripted.mjs PATH/TO/js_api.js
// (the output of `wasm-bindgen --target nodejs` for the `js_api` example).
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";

const require = createRequire(import.meta.url);
const { ScriptedModel } = require(process.argv[2]);

// Pi's assistant messages, in full.
const usage = {
  input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};
const reply = (content, stopReason) => ({
  role: "assistant", content, api: "scripted", provider: "scripted", model: "scripted",
  usage, stopReason, timestamp: 0,
});
const script = JSON.stringify([
  reply([{ type: "text", text: "hello there" }], "stop"),
  reply([{ type: "toolCall", id: "c1", name: "read", arguments: { path: "README.md" } }], "toolUse"),
  reply([{ type: "text", text: "a long answer" }], "stop"),
]);

test("for await iterates a call's events in order, in Pi's JSON", async () => {
  const model = new ScriptedModel(script, 2);
  const types = [];
  const deltas = [];
  let last;
  for await (const event of model.stream("hi")) {
    types.push(event.type);
    if (event.type === "text_delta") deltas.push(event.delta);
    last = event;
  }
  assert.deepEqual(types, ["start", "text_delta", "text_delta", "done"]);
  assert.equal(deltas.join(""), "hello there");
  assert.equal(last.reason, "stop");
  assert.equal(last.message.content[0].text, "hello there");

  // The next call plays the next turn: a tool call.
  const events = [];
  for await (const event of model.stream("again")) events.push(event);
  const done = events.at(-1);
  assert.equal(done.type, "done");
  assert.equal(done.reason, "toolUse");
  assert.deepEqual(done.message.content[0].arguments, { path: "README.md" });
});

test("the stream returns before its producer runs", async () => {
  const model = new ScriptedModel(script);
  const log = [];
  const events = model.stream("hi");
  log.push("stream returned");
  const first = events.next().then((step) => log.push(`first event: ${step.value.type}`));
  log.push("synchronous code ends");
  await first;
  assert.deepEqual(log, ["stream returned", "synchronous code ends", "first event: start"]);
});

test("next() calls made at once resolve in order", async () => {
  const model = new ScriptedModel(script);
  const events = model.stream("hi");
  const steps = await Promise.all([events.next(), events.next(), events.next(), events.next()]);
  assert.deepEqual(
    steps.map((step) => step.value?.type),
    ["start", "text_delta", "done", undefined],
  );
  assert.deepEqual(steps.map((step) => step.done), [false, false, false, true]);
});

test("break ends the iteration; later steps are done", async () => {
  const model = new ScriptedModel(script, 1);
  const events = model.stream("hi");
  for await (const event of events) {
    assert.equal(event.type, "start");
    break;
  }
  assert.deepEqual(await events.next(), { value: undefined, done: true });
});

test("a script that does not parse is an exception naming the turn", () => {
  assert.throws(() => new ScriptedModel("not json"), /the script is not JSON/);
  assert.throws(() => new ScriptedModel("{}"), /must be a JSON array/);
  assert.throws(
    () => new ScriptedModel(JSON.stringify([{ ...reply([], "stop"), stopReason: "sideways" }])),
    /turn 0/,
  );
});
