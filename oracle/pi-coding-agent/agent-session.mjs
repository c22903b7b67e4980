// Pi's running AgentSession (pi-coding-agent 0.73.1) on scripted scenarios,
// offline: a custom api registered with pi-ai's registerApiProvider plays
// each scenario's scripted assistant messages (usage numbers included), so
// no network is touched. For every scenario in SCENARIOS (a JSON array) it
// records the session events (types and their deterministic fields), the
// final transcript, the session's entry types and what each summary call
// was given (`reasoning`, `maxTokens`), as NAME.pi.json in DIR.
//
// Usage: node agent-session.mjs [--check] SCENARIOS DIR
//   (default) write DIR/NAME.pi.json; --check: exit 1 if any differs.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createAssistantMessageEventStream, registerApiProvider } from "@mariozechner/pi-ai";
import {
    AuthStorage,
    createAgentSession,
    ModelRegistry,
    SessionManager,
    SettingsManager,
} from "@mariozechner/pi-coding-agent";

const args = process.argv.slice(2);
const check = args[0] === "--check";
if (check) args.shift();
const [scenariosPath, dir] = args;
const scenarios = JSON.parse(readFileSync(scenariosPath, "utf8"));

const API = "agentstream-scripted";
const PROVIDER = "scripted";
const SUMMARIZER = "You are a context summarization assistant.";
let pending = [];
let summaries = [];
let summaryCalls = [];
// Called as the first summary call starts (a scenario's `onSummaryCall`).
let onSummaryCall;

function usage(u = {}) {
    const input = u.input ?? 0;
    const output = u.output ?? 0;
    return {
        input,
        output,
        cacheRead: 0,
        cacheWrite: 0,
        totalTokens: u.totalTokens ?? input + output,
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    };
}

// One scripted step as Pi's AssistantMessage.
function scripted(step, model) {
    const content = [];
    if (step.text !== undefined) content.push({ type: "text", text: step.text });
    for (const call of step.toolCalls ?? []) content.push({ type: "toolCall", ...call });
    const message = {
        role: "assistant",
        content,
        api: API,
        provider: PROVIDER,
        model: model.id,
        usage: usage(step.usage),
        stopReason: step.stopReason ?? "stop",
        timestamp: Date.now(),
    };
    if (step.errorMessage !== undefined) message.errorMessage = step.errorMessage;
    return message;
}

// The agent's turns play `script`, the summarization calls (Pi's
// summarization system prompt) play `summaries`, each in order; past the
// end a call fails with the text our ScriptedModel gives then.
const stream = (model, context, options) => {
    const out = createAssistantMessageEventStream();
    const summary = context.systemPrompt?.startsWith(SUMMARIZER);
    const queue = summary ? summaries : pending;
    if (summary) {
        summaryCalls.push({ reasoning: options?.reasoning ?? null, maxTokens: options?.maxTokens ?? null });
        const hook = onSummaryCall;
        onSummaryCall = undefined;
        hook?.();
    }
    const step = queue.shift() ?? { stopReason: "error", errorMessage: "ScriptedModel has no more responses" };
    queueMicrotask(() => {
        const message = scripted(step, model);
        if (options?.signal?.aborted) {
            message.stopReason = "aborted";
            message.errorMessage = "Request was aborted";
        }
        out.push({ type: "start", partial: { ...message, content: [] } });
        if (message.stopReason === "error" || message.stopReason === "aborted") {
            out.push({ type: "error", reason: message.stopReason, error: message });
        } else {
            out.push({ type: "done", reason: message.stopReason, message });
        }
        out.end(message);
    });
    return out;
};
registerApiProvider({ api: API, stream, streamSimple: stream }, "agentstream-oracle");

function text(message) {
    if (typeof message.content === "string") return message.content;
    if (!Array.isArray(message.content)) return message.summary ?? "";
    return message.content
        .filter((c) => c.type === "text")
        .map((c) => c.text)
        .join("");
}

// The deterministic part of one session event; streaming updates and the
// events that only mirror the queue are left out.
function recordEvent(e) {
    switch (e.type) {
        case "message_update":
        case "queue_update":
            return undefined;
        case "message_start":
            // The start's partial message carries no final stop reason.
            return { type: e.type, role: e.message.role };
        case "message_end": {
            const r = { type: e.type, role: e.message.role };
            if (e.message.role === "assistant") r.stopReason = e.message.stopReason;
            return r;
        }
        case "compaction_start":
            return { type: e.type, reason: e.reason };
        case "compaction_end": {
            const r = { type: e.type, reason: e.reason, aborted: e.aborted, willRetry: e.willRetry };
            if (e.result) r.summary = e.result.summary;
            if (e.errorMessage !== undefined) r.errorMessage = e.errorMessage;
            return r;
        }
        case "auto_retry_start":
            return { type: e.type, attempt: e.attempt, maxAttempts: e.maxAttempts, errorMessage: e.errorMessage };
        case "auto_retry_end": {
            const r = { type: e.type, success: e.success, attempt: e.attempt };
            if (e.finalError !== undefined) r.finalError = e.finalError;
            return r;
        }
        default:
            return { type: e.type };
    }
}

function transcriptEntry(m) {
    const r = { role: m.role, text: text(m) };
    if (m.role === "assistant") r.stopReason = m.stopReason;
    return r;
}

// Waits until the session is idle and stays so past Pi's deferred work:
// a compaction after agent_end, and the `continue()` it schedules 100 ms
// later (after an overflow, or for messages queued meanwhile).
async function settle(session, events) {
    let seen = -1;
    while (seen !== events.length || session.isCompacting || session.isStreaming) {
        seen = events.length;
        await session.agent.waitForIdle();
        await new Promise((r) => setTimeout(r, 250));
    }
}

async function run(scenario) {
    const model = {
        id: "scripted-model",
        name: "scripted-model",
        api: API,
        provider: PROVIDER,
        baseUrl: "http://127.0.0.1:9",
        reasoning: scenario.reasoning ?? false,
        input: ["text"],
        cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
        contextWindow: scenario.contextWindow,
        maxTokens: 4096,
    };
    const sessionManager = SessionManager.inMemory("/work/x");
    for (const m of scenario.history ?? []) {
        if (m.role === "user") {
            sessionManager.appendMessage({ role: "user", content: [{ type: "text", text: m.text }], timestamp: Date.now() });
        } else {
            sessionManager.appendMessage(scripted(m, model));
        }
    }
    const settingsManager = SettingsManager.inMemory({
        compaction: scenario.compaction,
        retry: { ...scenario.retry, baseDelayMs: 1 },
    });
    const authStorage = AuthStorage.inMemory({ [PROVIDER]: { type: "api_key", key: "dummy" } });
    const modelRegistry = ModelRegistry.inMemory(authStorage);
    const { session } = await createAgentSession({
        cwd: "/work/x",
        agentDir: "/nonexistent/agent-dir",
        authStorage,
        modelRegistry,
        model,
        thinkingLevel: scenario.thinkingLevel ?? "off",
        noTools: "all",
        sessionManager,
        settingsManager,
    });
    pending = scenario.script.map((s) => ({ ...s }));
    summaries = scenario.summaries.map((s) => ({ ...s }));
    summaryCalls = [];
    // An abort while a compaction's summary call runs: the session's
    // abort() (the agent's run) or abortCompaction() (the compaction).
    onSummaryCall = {
        abort: () => session.abort(),
        abortCompaction: () => session.abortCompaction(),
    }[scenario.onSummaryCall];
    const events = [];
    const followUps = [...(scenario.followUpOnCompactionStart ?? [])];
    session.subscribe((e) => {
        const r = recordEvent(e);
        if (r) events.push(r);
        if (e.type === "compaction_start" && followUps.length > 0) {
            session.followUp(followUps.shift());
        }

    });
    for (const action of scenario.actions) {
        if (action.prompt !== undefined) {
            events.push({ type: "(prompt)" });
            await session.prompt(action.prompt);
        } else if (action.compact !== undefined) {
            events.push({ type: "(compact)" });
            try {
                await session.compact(action.compact || undefined);
            } catch (error) {
                events.push({ type: "(compact threw)", message: error.message });
            }
        }
        await settle(session, events);
    }
    const result = {
        events,
        transcript: session.messages.map(transcriptEntry),
        entries: sessionManager.getEntries().map((e) => e.type),
        unusedScript: pending.length,
        unusedSummaries: summaries.length,
        summaryCalls,
    };
    session.dispose();
    return result;
}

let differs = 0;
for (const scenario of scenarios) {
    const result = await run(scenario);
    const path = join(dir, `${scenario.name}.pi.json`);
    const json = `${JSON.stringify(result, null, 2)}\n`;
    if (check) {
        if (!existsSync(path) || readFileSync(path, "utf8") !== json) {
            console.error(`differs: ${path}`);
            differs++;
        }
    } else {
        writeFileSync(path, json);
    }
}
if (differs > 0) process.exit(1);
console.log(`agent-session: ${scenarios.length} scenarios ${check ? "match" : "written"}`);
