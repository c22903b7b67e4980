// agentstream-wasm: the in-process ScriptedModel, no server.
import { ScriptedModel } from "agentstream-wasm";
import { expect, it } from "vitest";

it("ScriptedModel plays its turns in order as Pi's events", async () => {
  const model = new ScriptedModel(JSON.stringify([
    { role: "assistant", content: [{ type: "text", text: "hello there" }], stopReason: "stop" },
    { role: "assistant", stopReason: "toolUse",
      content: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "README.md" } }] },
  ]), 2);
  const deltas = [];
  let last;
  for await (const event of model.stream("hi")) {
    if (event.type === "text_delta") deltas.push(event.delta);
    last = event;
  }
  expect(deltas).toHaveLength(2);
  expect(deltas.join("")).toBe("hello there");
  expect(last.type).toBe("done");
  const events = [];
  for await (const event of model.stream("again")) events.push(event);
  expect(events.at(-1).reason).toBe("toolUse");
  expect(events.at(-1).message.content[0].arguments).toEqual({ path: "README.md" });
});

it("a script that does not parse throws naming the turn", () => {
  expect(() => new ScriptedModel(JSON.stringify([{ role: "assistant", content: 7 }]))).toThrow(/turn 0/);
});
