// One server per file, each test isolated by its own test id (needs the
// server's x-agentstream-test support), and the control calls.
import { agentstreamTest } from "agentstream/vitest";
import OpenAI from "openai";
import { expect } from "vitest";

const test = agentstreamTest({ shared: true });

const chat = async (server, text) => {
  const client = new OpenAI({ baseURL: server.baseUrl("openai"), apiKey: "unused", defaultHeaders: server.headers });
  const reply = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: text }] });
  return reply.choices[0].message.content;
};

test.concurrent("test a has its own script and log", async ({ agentstream }) => {
  await agentstream.setScript(["A1", "A2"]);
  expect([await chat(agentstream, "a0"), await chat(agentstream, "a1")]).toEqual(["A1", "A2"]);
  expect((await agentstream.requests()).map((r) => r.context.messages[0].content)).toEqual(["a0", "a1"]);
});

test.concurrent("test b has its own script and log", async ({ agentstream }) => {
  await agentstream.setScript(["B1"]);
  await agentstream.setScript(["B2"], { append: true });
  expect([await chat(agentstream, "b0"), await chat(agentstream, "b1")]).toEqual(["B1", "B2"]);
  const raw = await agentstream.requests({ raw: true });
  expect(raw[0].raw.messages).toEqual([{ role: "user", content: "b0" }]);
  expect((await agentstream.reset()).clearedRequests).toBe(2);
  expect(await agentstream.requests()).toEqual([]);
});
