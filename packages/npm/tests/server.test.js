// The agentstream npm package as a user installs it: the official openai
// Node SDK and pi-ai against its server, the vitest helper, errors.
import { stream } from "@mariozechner/pi-ai";
import { startServer, AgentstreamError } from "agentstream";
import { agentstreamTest } from "agentstream/vitest";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";

const weatherCall = {
  role: "assistant",
  stopReason: "toolUse",
  content: [{ type: "toolCall", id: "call_1", name: "get_weather", arguments: { city: "Paris" } }],
};
const tools = [{ type: "function", function: { name: "get_weather", parameters: { type: "object" } } }];

const scripted = agentstreamTest({ script: [weatherCall, "It is 18C in Paris."] });

scripted("an openai SDK tool loop against the fixture's server", async ({ agentstream }) => {
  const client = new OpenAI({ baseURL: agentstream.baseUrl("openai"), apiKey: "unused" });
  const messages = [{ role: "user", content: "Weather in Paris?" }];
  for (;;) {
    const message = (await client.chat.completions.create({ model: "m", messages, tools })).choices[0].message;
    messages.push(message);
    if (!message.tool_calls) break;
    for (const call of message.tool_calls) {
      const { city } = JSON.parse(call.function.arguments);
      messages.push({ role: "tool", tool_call_id: call.id, content: `18C in ${city}` });
    }
  }
  expect(messages.at(-1).content).toBe("It is 18C in Paris.");
  const requests = await agentstream.requests();
  expect(requests).toHaveLength(2);
  expect(requests[1].context.messages.at(-1).role).toBe("toolResult");
  expect((await agentstream.unused()).turns).toEqual([]);
});

it("pi-ai 0.73.1 streams a scripted answer (openai-completions)", async () => {
  const server = await startServer({ script: ["Hello from the script."] });
  try {
    const model = {
      id: "scripted", name: "scripted", api: "openai-completions", provider: "openai",
      baseUrl: server.baseUrl("openai"), reasoning: false, input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096,
    };
    const events = stream(model, { messages: [{ role: "user", content: "hi", timestamp: 0 }] }, { apiKey: "unused" });
    for await (const _ of events) {
      // The final message is checked below.
    }
    const message = await events.result();
    expect(message.stopReason).toBe("stop");
    expect(message.content[0].text).toBe("Hello from the script.");
    expect((await server.requests())[0].api).toBe("openai-completions");
  } finally {
    await server.close();
  }
});

describe("errors", () => {
  it("a bad script path rejects at once with the binary's message", async () => {
    const error = await startServer({ script: "/nonexistent/script.json" }).catch((e) => e);
    expect(error).toBeInstanceOf(AgentstreamError);
    expect(error.message).toContain("/nonexistent/script.json");
    expect(error.stderr).toContain("/nonexistent/script.json");
  });

  it("baseUrl follows each SDK and refuses an unknown API", async () => {
    const server = await startServer();
    try {
      expect(server.baseUrl("openai")).toBe(`${server.root}/v1`);
      expect(server.baseUrl("anthropic")).toBe(server.root);
      expect(server.baseUrl("gemini")).toBe(server.root);
      expect(() => server.baseUrl("cohere")).toThrow(/unknown API/);
      expect(server.headers).toEqual({});
      expect(server.forTest("t1").headers).toEqual({ "x-agentstream-test": "t1" });
    } finally {
      await server.close();
    }
  });
});
