// The jest helper as a user installs it (run by jest with
// --experimental-vm-modules): a server per test, then one per file with a
// test id per test, both driven by the official openai Node SDK.
import { useAgentstream } from "agentstream/jest";
import OpenAI from "openai";

const chat = async (server, text) => {
  const client = new OpenAI({ baseURL: server.baseUrl("openai"), apiKey: "unused", defaultHeaders: server.headers, maxRetries: 0 });
  const reply = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: text }] });
  return reply.choices[0].message.content;
};

describe("a server per test", () => {
  const server = useAgentstream({ script: ["Paris.", "Rome."] });
  let firstUrl;

  test("the first test plays the script from its start", async () => {
    firstUrl = server.baseUrl("openai");
    expect(await chat(server, "Capital of France?")).toBe("Paris.");
    expect(await server.requests()).toHaveLength(1);
  });

  test("the second test has a fresh server and script", async () => {
    expect(server.baseUrl("openai")).not.toBe(firstUrl);
    expect(await chat(server, "Capital of France?")).toBe("Paris.");
    expect((await server.unused()).turns).toHaveLength(1);
  });
});

describe("one server for the file", () => {
  const server = useAgentstream({ shared: true });
  const urls = [];

  test("a test sets its own script", async () => {
    urls.push(server.baseUrl("openai"));
    await server.setScript(["A"]);
    expect(await chat(server, "a")).toBe("A");
    expect(await server.requests()).toHaveLength(1);
  });

  test("the next test shares the server but not the log or script", async () => {
    urls.push(server.baseUrl("openai"));
    expect(urls[0]).toBe(urls[1]);
    expect(await server.requests()).toEqual([]);
    await server.setScript(["B"]);
    expect(await chat(server, "b")).toBe("B");
    expect(server.headers["x-agentstream-test"]).toMatch(/the_next_test_shares/);
  });
});
