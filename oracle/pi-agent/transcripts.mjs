// Golden transcripts from the real TypeScript Pi agent loop
// (@mariozechner/pi-agent-core + @mariozechner/pi-ai, exact versions in package.json).
//
// Source: the project's oracle (shared/oracle/pi-agent/transcripts.mjs), copied here
// and extended with the scenarios agentstream's differential test compares
// (crates/agentstream/tests/agent_scenarios/). The output is the golden input of
// that test: crates/agentstream/tests/golden/pi/<name>.jsonl and <name>.final.json.
// Regenerate with `bash .ci/pi-agent-oracle.sh --write`; CI runs it with `--check`.
//
// Every scenario drives Pi's `Agent` class with a scripted stream function (no network,
// no timers, no randomness). Each AgentEvent is serialized the moment Pi emits it, to
// transcripts/<name>.jsonl; the run's outcome goes to transcripts/<name>.final.json.
//
// Each scenario is also replayed through the low-level `agentLoop()` stream and the
// two event sequences are compared (printed; a mismatch makes the script exit 1).
//
// Usage: node transcripts.mjs [--check] [--out DIR]
//   --check  regenerate in memory and compare against the files on disk instead of writing.
//   --out    where the transcripts are (default: the repository's golden folder, when the
//            script runs from oracle/pi-agent/).

import { readFileSync, mkdirSync, writeFileSync, existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Agent, agentLoop } from "@mariozechner/pi-agent-core";
import { Type, createAssistantMessageEventStream } from "@mariozechner/pi-ai";

const outFlag = process.argv.indexOf("--out");
const OUT_DIR =
	outFlag >= 0
		? `${process.argv[outFlag + 1].replace(/\/$/, "")}/`
		: fileURLToPath(new URL("../../crates/agentstream/tests/golden/pi/", import.meta.url));
const CHECK = process.argv.includes("--check");

// ---------------------------------------------------------------------------
// Fixed model / message helpers
// ---------------------------------------------------------------------------

const MODEL = {
	// agentstream's `assistant()` builder stamps "scripted" on api, provider and model.
	id: "scripted",
	name: "Scripted Model",
	api: "scripted",
	provider: "scripted",
	baseUrl: "",
	reasoning: false,
	input: ["text"],
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
	contextWindow: 128000,
	maxTokens: 16384,
};

const SYSTEM_PROMPT = "You are a test assistant.";

const zeroUsage = () => ({
	input: 0,
	output: 0,
	cacheRead: 0,
	cacheWrite: 0,
	totalTokens: 0,
	cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
});

const text = (t) => ({ type: "text", text: t });
const call = (id, name, args) => ({ type: "toolCall", id, name, arguments: args });
const user = (t) => ({ role: "user", content: [text(t)], timestamp: 0 });

function assistant(content, stopReason = "stop", errorMessage) {
	const msg = {
		role: "assistant",
		content,
		api: MODEL.api,
		provider: MODEL.provider,
		model: MODEL.id,
		usage: zeroUsage(),
		stopReason,
		timestamp: 0,
	};
	if (errorMessage !== undefined) msg.errorMessage = errorMessage;
	return msg;
}

function deferred() {
	let resolve;
	let reject;
	const promise = new Promise((res, rej) => {
		resolve = res;
		reject = rej;
	});
	return { promise, resolve, reject };
}

// Normalization: the only non-deterministic field Pi produces here is `timestamp`
// (Date.now() on prompt / tool-result messages). Every numeric `timestamp` -> 0.
// JSON serialization also drops `undefined`-valued properties and symbol keys.
function normalize(value) {
	return JSON.parse(JSON.stringify(value, (k, v) => (k === "timestamp" && typeof v === "number" ? 0 : v)));
}

// ---------------------------------------------------------------------------
// Scripted stream function (stands in for pi-ai's streamSimple / a provider)
//
// Emits pi-ai's AssistantMessageEvent protocol for a scripted final message, through
// pi-ai's own AssistantMessageEventStream:
//   start(partial: content [], stopReason "stop", no errorMessage)
//   per block:  text_start / text_delta(whole text) / text_end(content)
//               thinking_start / thinking_delta(whole thinking) / thinking_end(content)
//               toolcall_start(arguments {}) / toolcall_delta(JSON.stringify(arguments);
//                 partial now carries the parsed arguments) / toolcall_end(toolCall)
//   done(reason = stopReason, message = final)     for stop | length | toolUse
//   error(reason = stopReason, error = final)      for error | aborted
// Special cases, mirroring pi-ai's real providers:
//   * signal already aborted when called -> a single `error` event (no `start`) whose
//     message has content [], stopReason "aborted", errorMessage "Request was aborted";
//     the scripted response is NOT consumed.
//   * a scripted stopReason "error" message with empty content -> a single `error`
//     event (no `start`), as when the HTTP request itself fails.
//   * script exhausted -> single `error` event, errorMessage "No more scripted responses".
//   * scenario option `streamIgnoresSignal`: the abort check above is skipped (a stream
//     function that does not honour the signal), to show what the loop itself does.
// Every event carries a deep copy of the partial so later mutation cannot leak.
// ---------------------------------------------------------------------------

function makeScriptedStreamFn(responses, requestLog, { ignoreSignal = false } = {}) {
	const queue = [...responses];
	const streamFn = (model, context, options) => {
		const signal = options?.signal;
		requestLog.push(
			normalize({
				systemPrompt: context.systemPrompt,
				messages: context.messages,
				tools: (context.tools ?? []).map((t) => t.name),
				signalAborted: signal?.aborted === true,
				// Only when set (getApiKey); JSON drops an undefined key.
				apiKey: options?.apiKey,
			}),
		);
		const stream = createAssistantMessageEventStream();
		const header = () => ({
			role: "assistant",
			content: [],
			api: model.api,
			provider: model.provider,
			model: model.id,
			usage: zeroUsage(),
			stopReason: "stop",
			timestamp: 0,
		});
		if (signal?.aborted && !ignoreSignal) {
			const aborted = { ...header(), stopReason: "aborted", errorMessage: "Request was aborted" };
			stream.push({ type: "error", reason: "aborted", error: aborted });
			stream.end(aborted);
			return stream;
		}
		const step = queue.shift();
		if (!step) {
			const failed = { ...header(), stopReason: "error", errorMessage: "No more scripted responses" };
			stream.push({ type: "error", reason: "error", error: failed });
			stream.end(failed);
			return stream;
		}
		const final = structuredClone(step);
		if (final.stopReason === "error" && final.content.length === 0) {
			stream.push({ type: "error", reason: "error", error: final });
			stream.end(final);
			return stream;
		}
		const partial = header();
		const snap = () => structuredClone(partial);
		stream.push({ type: "start", partial: snap() });
		final.content.forEach((block, contentIndex) => {
			if (block.type === "text") {
				partial.content.push({ type: "text", text: "" });
				stream.push({ type: "text_start", contentIndex, partial: snap() });
				partial.content[contentIndex].text = block.text;
				stream.push({ type: "text_delta", contentIndex, delta: block.text, partial: snap() });
				stream.push({ type: "text_end", contentIndex, content: block.text, partial: snap() });
			} else if (block.type === "thinking") {
				partial.content.push({ type: "thinking", thinking: "" });
				stream.push({ type: "thinking_start", contentIndex, partial: snap() });
				partial.content[contentIndex].thinking = block.thinking;
				stream.push({ type: "thinking_delta", contentIndex, delta: block.thinking, partial: snap() });
				stream.push({ type: "thinking_end", contentIndex, content: block.thinking, partial: snap() });
			} else if (block.type === "toolCall") {
				partial.content.push({ type: "toolCall", id: block.id, name: block.name, arguments: {} });
				stream.push({ type: "toolcall_start", contentIndex, partial: snap() });
				const json = JSON.stringify(block.arguments);
				partial.content[contentIndex].arguments = JSON.parse(json);
				stream.push({ type: "toolcall_delta", contentIndex, delta: json, partial: snap() });
				stream.push({ type: "toolcall_end", contentIndex, toolCall: structuredClone(block), partial: snap() });
			}
		});
		if (final.stopReason === "error" || final.stopReason === "aborted") {
			stream.push({ type: "error", reason: final.stopReason, error: final });
		} else {
			stream.push({ type: "done", reason: final.stopReason, message: final });
		}
		stream.end(final);
		return stream;
	};
	return { streamFn, remaining: () => queue.length };
}

// ---------------------------------------------------------------------------
// Tools
// ---------------------------------------------------------------------------

const readParams = Type.Object({ path: Type.String({ description: "File path" }) });

function readTool(ctl, { onExecute, throwError, throwFor } = {}) {
	return {
		name: "read",
		label: "Read",
		description: "Read a file",
		parameters: readParams,
		execute: async (toolCallId, params, signal) => {
			ctl.logExecution("read", toolCallId, params, signal);
			onExecute?.(toolCallId, params);
			if (throwError) throw new Error(throwError);
			if (throwFor && params.path === throwFor) throw new Error(`no such file: ${params.path}`);
			return { content: [text("# Demo\nhello")], details: { path: params.path } };
		},
	};
}

// ---------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------

function parallelGates(ctl, slowId, fastId) {
	// fast resolves once both tools are executing; slow resolves only after Pi has
	// emitted tool_execution_end for the fast call. No timers involved.
	const fastGate = deferred();
	const slowGate = deferred();
	const started = new Set();
	const onStarted = (name) => {
		started.add(name);
		if (started.has("slow") && started.has("fast")) fastGate.resolve();
	};
	ctl.onEvent = (event) => {
		if (event.type === "tool_execution_end" && event.toolCallId === fastId) slowGate.resolve();
	};
	const slow = {
		name: "slow",
		label: "Slow",
		description: "Slow tool",
		parameters: Type.Object({}),
		execute: async (toolCallId, params, signal, onUpdate) => {
			ctl.logExecution("slow", toolCallId, params, signal);
			onUpdate?.({ content: [text("slow: working")], details: { progress: 0.5 } });
			onStarted("slow");
			await slowGate.promise;
			return { content: [text("slow done")], details: { which: "slow" } };
		},
	};
	const fast = {
		name: "fast",
		label: "Fast",
		description: "Fast tool",
		parameters: Type.Object({}),
		execute: async (toolCallId, params, signal) => {
			ctl.logExecution("fast", toolCallId, params, signal);
			onStarted("fast");
			await fastGate.promise;
			return { content: [text("fast done")], details: { which: "fast" } };
		},
	};
	return [slow, fast];
}

// Waits until its abort signal fires, then rejects with Error("Operation aborted").
function waitTool(ctl) {
	return {
		name: "wait",
		label: "Wait",
		description: "Waits until aborted",
		parameters: Type.Object({}),
		execute: (toolCallId, params, signal) =>
			new Promise((_resolve, reject) => {
				ctl.logExecution("wait", toolCallId, params, signal);
				signal?.addEventListener("abort", () => reject(new Error("Operation aborted")), { once: true });
				ctl.toolStarted.resolve();
			}),
	};
}


// Ignores its abort signal: finishes only when the driver releases it.
function stubbornTool(ctl) {
	return {
		name: "stubborn",
		label: "Stubborn",
		description: "Ignores aborts",
		parameters: Type.Object({}),
		execute: async (toolCallId, params, signal) => {
			ctl.logExecution("stubborn", toolCallId, params, signal);
			ctl.toolStarted.resolve();
			await ctl.release.promise;
			return { content: [text("finished anyway")], details: { ignoredAbort: signal?.aborted === true } };
		},
	};
}

// Reports progress once, then waits for the driver's release.
function slowTool(ctl) {
	return {
		name: "slow",
		label: "Slow",
		description: "Slow tool",
		parameters: Type.Object({}),
		execute: async (toolCallId, params, signal, onUpdate) => {
			ctl.logExecution("slow", toolCallId, params, signal);
			onUpdate?.({ content: [text("slow: working")], details: { progress: 0.5 } });
			ctl.toolStarted.resolve();
			await ctl.release.promise;
			return { content: [text("slow done")], details: { which: "slow" } };
		},
	};
}

// A plain JSON Schema (no TypeBox metadata) with the keywords tool schemas use;
// property names in alphabetical order (serde_json's map order without preserve_order).
function searchTool(ctl) {
	return {
		name: "search",
		label: "Search",
		description: "Search the files",
		parameters: {
			type: "object",
			properties: {
				limit: { type: "integer", minimum: 1, maximum: 50 },
				mode: { enum: ["fast", "full"] },
				query: { type: "string", minLength: 3, maxLength: 40 },
			},
			required: ["query"],
			additionalProperties: false,
		},
		execute: async (toolCallId, params, signal) => {
			ctl.logExecution("search", toolCallId, params, signal);
			return { content: [text("no hits")], details: {} };
		},
	};
}

// Returns its result with Pi's `terminate` hint set.
function finishTool(ctl) {
	return {
		name: "finish",
		label: "Finish",
		description: "Ends the task",
		parameters: Type.Object({}),
		execute: async (toolCallId, params, signal) => {
			ctl.logExecution("finish", toolCallId, params, signal);
			return { content: [text("finished")], details: {}, terminate: true };
		},
	};
}

// Its calls make the whole batch sequential (`executionMode: "sequential"`).
function writeTool(ctl) {
	return {
		name: "write",
		label: "Write",
		description: "Write a file",
		parameters: readParams,
		executionMode: "sequential",
		execute: async (toolCallId, params, signal) => {
			ctl.logExecution("write", toolCallId, params, signal);
			return { content: [text(`wrote ${params.path}`)], details: {} };
		},
	};
}

async function releaseOnceToolStarted(ctl) {
	await ctl.toolStarted.promise;
	ctl.release.resolve();
}

async function abortThenRelease(ctl) {
	await ctl.toolStarted.promise;
	ctl.abort();
	ctl.release.resolve();
}

async function abortOnceToolStarted(ctl) {
	await ctl.toolStarted.promise;
	ctl.abort();
}

const SCENARIOS = [
	{
		name: "demo",
		prompt: "What is in the README?",
		tools: (ctl) => [readTool(ctl)],
		responses: [
			assistant([text("Let me read the README first."), call("c1", "read", { path: "README.md" })], "toolUse"),
			assistant([text("The README says hello.")], "stop"),
		],
	},
	{
		name: "parallel",
		prompt: "Run slow and fast.",
		tools: (ctl) => parallelGates(ctl, "c1", "c2"),
		responses: [
			assistant([call("c1", "slow", {}), call("c2", "fast", {})], "toolUse"),
			assistant([text("Both tools finished.")], "stop"),
		],
	},
	{
		name: "unknown_tool",
		prompt: "Call a tool that does not exist.",
		tools: (ctl) => [readTool(ctl)],
		responses: [
			assistant([call("c1", "nope", {})], "toolUse"),
			assistant([text("That tool does not exist.")], "stop"),
		],
	},
	{
		name: "invalid_args",
		prompt: "Read file 5.",
		tools: (ctl) => [readTool(ctl)],
		responses: [
			assistant([call("c1", "read", { path: 5 })], "toolUse"),
			assistant([text("Done.")], "stop"),
		],
	},
	{
		name: "tool_throws",
		prompt: "What is in the README?",
		tools: (ctl) => [readTool(ctl, { throwError: "disk on fire" })],
		responses: [
			assistant([call("c1", "read", { path: "README.md" })], "toolUse"),
			assistant([text("The disk is on fire.")], "stop"),
		],
	},
	{
		name: "steering",
		prompt: "Do A then B.",
		toolExecution: "sequential",
		tools: (ctl) => [
			{
				name: "work",
				label: "Work",
				description: "Do a task",
				parameters: Type.Object({ task: Type.String() }),
				execute: async (toolCallId, params, signal) => {
					ctl.logExecution("work", toolCallId, params, signal);
					if (toolCallId === "c1") ctl.steer(user("stop, do X"));
					return { content: [text(`did ${params.task}`)], details: {} };
				},
			},
		],
		responses: [
			assistant([call("c1", "work", { task: "A" }), call("c2", "work", { task: "B" })], "toolUse"),
			assistant([text("OK, doing X.")], "stop"),
		],
	},
	{
		name: "follow_up",
		prompt: "What is in the README?",
		tools: (ctl) => [readTool(ctl, { onExecute: () => ctl.followUp(user("Also summarize it.")) })],
		responses: [
			assistant([call("c1", "read", { path: "README.md" })], "toolUse"),
			assistant([text("The README says hello.")], "stop"),
			assistant([text("Summary: hello.")], "stop"),
		],
	},
	{
		name: "abort_tool_honours_signal",
		prompt: "Wait for me.",
		tools: (ctl) => [waitTool(ctl)],
		drive: abortOnceToolStarted,
		responses: [assistant([call("c1", "wait", {})], "toolUse"), assistant([text("never")], "stop")],
	},
	{
		name: "abort_tool_ignores_signal",
		prompt: "Run the stubborn tool.",
		tools: (ctl) => [stubbornTool(ctl)],
		drive: abortThenRelease,
		responses: [assistant([call("c1", "stubborn", {})], "toolUse"), assistant([text("never")], "stop")],
	},
	{
		name: "length_with_tool_call",
		prompt: "What is in the README?",
		tools: (ctl) => [readTool(ctl)],
		responses: [
			assistant([text("Reading."), call("c1", "read", { path: "README.md" })], "length"),
			assistant([text("The README says hello.")], "stop"),
		],
	},
	{
		name: "unknown_and_slow_parallel",
		prompt: "Call nope and slow.",
		tools: (ctl) => [slowTool(ctl)],
		drive: releaseOnceToolStarted,
		responses: [
			assistant([call("c1", "nope", {}), call("c2", "slow", {})], "toolUse"),
			assistant([text("One failed, one worked.")], "stop"),
		],
	},
	{
		name: "unfixable_args",
		prompt: "Read and search.",
		tools: (ctl) => [readTool(ctl), searchTool(ctl)],
		responses: [
			assistant(
				[
					call("c1", "read", {}),
					call("c2", "read", { path: { dir: "docs" } }),
					call("c3", "search", { extra: true, limit: 0, mode: "slow", query: "ab" }),
					call("c4", "search", { limit: 51, query: "a query that is far too long to be accepted" }),
				],
				"toolUse",
			),
			assistant([text("I will fix the arguments.")], "stop"),
		],
	},
	{
		name: "error_turn",
		prompt: "Hello?",
		tools: (ctl) => [readTool(ctl)],
		responses: [assistant([], "error", "upstream exploded")],
	},
	{
		name: "error_turn_with_text",
		prompt: "Hello?",
		tools: (ctl) => [readTool(ctl)],
		responses: [assistant([text("Partial ans")], "error", "connection reset")],
	},
	{
		name: "before_tool_call_block_and_rewrite",
		prompt: "Read two files.",
		tools: (ctl) => [readTool(ctl)],
		beforeToolCall: async ({ toolCall, args }) => {
			if (toolCall.id === "c1") return { block: true, reason: "blocked by policy" };
			if (toolCall.id === "c2") args.path = "README.md";
			return undefined;
		},
		responses: [
			assistant([call("c1", "read", { path: "secret.txt" }), call("c2", "read", { path: "draft.md" })], "toolUse"),
			assistant([text("One was blocked.")], "stop"),
		],
	},
	{
		name: "after_tool_call",
		prompt: "Read two files.",
		tools: (ctl) => [readTool(ctl, { throwFor: "missing.md" })],
		afterToolCall: async ({ toolCall, isError }) => {
			if (toolCall.id === "c1") return { content: [text("[redacted]")] };
			if (toolCall.id === "c2" && isError) return { content: [text("recovered")], isError: false };
			return undefined;
		},
		responses: [
			assistant([call("c1", "read", { path: "README.md" }), call("c2", "read", { path: "missing.md" })], "toolUse"),
			assistant([text("Both handled.")], "stop"),
		],
	},
	{
		name: "transform_context",
		prompt: "What is in the README?",
		tools: (ctl) => [readTool(ctl)],
		transformContext: async (messages) =>
			messages.length > 2 ? [user("Summary: the user asked about the README."), ...messages.slice(-2)] : messages,
		responses: [
			assistant([call("c1", "read", { path: "README.md" })], "toolUse"),
			assistant([text("The README says hello.")], "stop"),
		],
	},
	{
		name: "follow_up_and_steering",
		prompt: "What is in the README?",
		tools: (ctl) => [
			readTool(ctl, {
				onExecute: () => {
					ctl.followUp(user("Also summarize it."));
					ctl.steer(user("Check the title too."));
				},
			}),
		],
		responses: [
			assistant([call("c1", "read", { path: "README.md" })], "toolUse"),
			assistant([text("The title is Demo.")], "stop"),
			assistant([text("Summary: hello.")], "stop"),
		],
	},
	{
		// Pi has no turn limit; its loop's `shouldStopAfterTurn` ending the run after
		// the second turn is what agentstream's `max_turns: 2` does.
		name: "max_turns",
		prompt: "Keep reading.",
		stopAfterTurns: 2,
		tools: (ctl) => [readTool(ctl)],
		responses: [
			assistant([call("c1", "read", { path: "README.md" })], "toolUse"),
			assistant([call("c2", "read", { path: "README.md" })], "toolUse"),
			assistant([call("c3", "read", { path: "README.md" })], "toolUse"),
		],
	},
	{
		// `shouldStopAfterTurn` ends the run once a turn read stop.md.
		name: "should_stop_after_turn",
		prompt: "Read until told to stop.",
		shouldStopAfterTurn: async ({ toolResults }) => toolResults.some((r) => r.details?.path === "stop.md"),
		tools: (ctl) => [readTool(ctl)],
		responses: [
			assistant([call("c1", "read", { path: "notes.md" })], "toolUse"),
			assistant([call("c2", "read", { path: "stop.md" })], "toolUse"),
			assistant([text("never")], "stop"),
		],
	},
	{
		// A batch stops the run only when every result sets `terminate`.
		name: "terminate_batch",
		prompt: "Finish up.",
		tools: (ctl) => [readTool(ctl), finishTool(ctl)],
		responses: [
			assistant([call("c1", "finish", {}), call("c2", "read", { path: "README.md" })], "toolUse"),
			assistant([call("c3", "finish", {})], "toolUse"),
			assistant([text("never")], "stop"),
		],
	},
	{
		// One call of a sequential tool runs the whole batch sequentially.
		name: "sequential_tool",
		prompt: "Read, write, read.",
		tools: (ctl) => [readTool(ctl), writeTool(ctl)],
		responses: [
			assistant(
				[call("c1", "read", { path: "a.md" }), call("c2", "write", { path: "b.md" }), call("c3", "read", { path: "c.md" })],
				"toolUse",
			),
			assistant([text("Done.")], "stop"),
		],
	},
	{
		// `prepareArguments` maps an old argument name before validation.
		name: "prepare_arguments",
		prompt: "Read with old arguments.",
		tools: (ctl) => [
			{
				...readTool(ctl),
				prepareArguments: (args) => (args && args.file !== undefined ? { path: args.file } : args),
			},
		],
		responses: [
			assistant([call("c1", "read", { file: "README.md" }), call("c2", "read", { name: "x" })], "toolUse"),
			assistant([text("One worked.")], "stop"),
		],
	},
	{
		// `getApiKey` is asked before every model call.
		name: "get_api_key",
		prompt: "What is in the README?",
		getApiKey: (ctl) => async () => `key-${++ctl.keys}`,
		tools: (ctl) => [readTool(ctl)],
		responses: [
			assistant([call("c1", "read", { path: "README.md" })], "toolUse"),
			assistant([text("The README says hello.")], "stop"),
		],
	},
];

// ---------------------------------------------------------------------------
// Drivers
// ---------------------------------------------------------------------------

function makeCtl() {
	const ctl = {
		executions: [],
		toolStarted: deferred(),
		release: deferred(),
		onEvent: undefined,
		steer: undefined,
		followUp: undefined,
		abort: undefined,
		keys: 0,
		logExecution(tool, toolCallId, params, signal) {
			ctl.executions.push(normalize({ tool, toolCallId, params, signalAborted: signal?.aborted === true }));
		},
	};
	return ctl;
}

// `shouldStopAfterTurn` for a turn limit: stop once `limit` assistant messages were added;
// or the scenario's own.
const stopAfter = (limit, own) =>
	own ?? (limit === undefined ? undefined : async ({ newMessages }) => newMessages.filter((m) => m.role === "assistant").length >= limit);

// Pi's `Agent` does not forward `shouldStopAfterTurn` to its loop; this subclass does.
class TurnLimitedAgent extends Agent {
	constructor(options, shouldStopAfterTurn) {
		super(options);
		this.shouldStopAfterTurn = shouldStopAfterTurn;
	}
	createLoopConfig(options) {
		const config = super.createLoopConfig(options);
		return this.shouldStopAfterTurn ? { ...config, shouldStopAfterTurn: this.shouldStopAfterTurn } : config;
	}
}

async function runWithAgent(sc) {
	const ctl = makeCtl();
	const requests = [];
	const { streamFn, remaining } = makeScriptedStreamFn(sc.responses, requests, { ignoreSignal: sc.streamIgnoresSignal });
	const agent = new TurnLimitedAgent(
		{
			initialState: { systemPrompt: SYSTEM_PROMPT, model: MODEL, tools: sc.tools(ctl) },
			streamFn,
			toolExecution: sc.toolExecution ?? "parallel",
			beforeToolCall: sc.beforeToolCall,
			afterToolCall: sc.afterToolCall,
			transformContext: sc.transformContext,
			getApiKey: sc.getApiKey?.(ctl),
		},
		stopAfter(sc.stopAfterTurns, sc.shouldStopAfterTurn),
	);
	ctl.steer = (m) => agent.steer(m);
	ctl.followUp = (m) => agent.followUp(m);
	ctl.abort = () => agent.abort();
	const events = [];
	let agentEndMessages;
	agent.subscribe((event) => {
		events.push(normalize(event));
		if (event.type === "agent_end") agentEndMessages = normalize(event.messages);
		ctl.onEvent?.(event);
	});
	let promptError;
	const run = agent.prompt(sc.prompt).catch((e) => {
		promptError = e instanceof Error ? e.message : String(e);
	});
	if (sc.drive) await sc.drive(ctl);
	await run;
	const final = {
		scenario: sc.name,
		driver: "Agent.prompt",
		toolExecution: agent.toolExecution,
		result: agentEndMessages,
		stateMessages: normalize(agent.state.messages),
		state: normalize({
			errorMessage: agent.state.errorMessage ?? null,
			isStreaming: agent.state.isStreaming,
			pendingToolCalls: [...agent.state.pendingToolCalls],
			queuedMessagesLeft: agent.hasQueuedMessages(),
		}),
		promptError: promptError ?? null,
		toolExecutions: ctl.executions,
		llmRequests: requests,
		unusedScriptedResponses: remaining(),
	};
	return { events, final };
}

async function runWithAgentLoop(sc) {
	const ctl = makeCtl();
	const requests = [];
	const { streamFn } = makeScriptedStreamFn(sc.responses, requests, { ignoreSignal: sc.streamIgnoresSignal });
	const steeringQueue = [];
	const followUpQueue = [];
	const abortController = new AbortController();
	ctl.steer = (m) => steeringQueue.push(m);
	ctl.followUp = (m) => followUpQueue.push(m);
	ctl.abort = () => abortController.abort();
	const context = { systemPrompt: SYSTEM_PROMPT, messages: [], tools: sc.tools(ctl) };
	const config = {
		model: MODEL,
		convertToLlm: (ms) => ms.filter((m) => m.role === "user" || m.role === "assistant" || m.role === "toolResult"),
		toolExecution: sc.toolExecution ?? "parallel",
		getSteeringMessages: async () => steeringQueue.splice(0, 1),
		getFollowUpMessages: async () => followUpQueue.splice(0, 1),
		beforeToolCall: sc.beforeToolCall,
		afterToolCall: sc.afterToolCall,
		transformContext: sc.transformContext,
		shouldStopAfterTurn: stopAfter(sc.stopAfterTurns, sc.shouldStopAfterTurn),
		getApiKey: sc.getApiKey?.(ctl),
	};
	const stream = agentLoop([{ role: "user", content: [text(sc.prompt)], timestamp: 0 }], context, config, abortController.signal, streamFn);
	const events = [];
	const consume = (async () => {
		for await (const event of stream) {
			events.push(normalize(event));
			ctl.onEvent?.(event);
		}
	})();
	if (sc.drive) await sc.drive(ctl);
	await consume;
	const result = normalize(await stream.result());
	return { events, result, requests, executions: ctl.executions };
}

// ---------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------

const stable = (v) => JSON.stringify(v);
let failures = 0;
if (!CHECK) mkdirSync(OUT_DIR, { recursive: true });

for (const sc of SCENARIOS) {
	const { events, final } = await runWithAgent(sc);
	const jsonl = events.map((e) => JSON.stringify(e)).join("\n") + "\n";
	const finalJson = JSON.stringify(final, null, 2) + "\n";

	const loop = await runWithAgentLoop(sc);
	const loopSame =
		stable(loop.events) === stable(events) &&
		stable(loop.result) === stable(final.result) &&
		stable(loop.requests) === stable(final.llmRequests) &&
		stable(loop.executions) === stable(final.toolExecutions);
	if (!loopSame) failures++;

	const types = events.map((e) =>
		e.type.startsWith("tool_execution") ? `${e.type}(${e.toolCallId})` : e.type === "message_update" ? `update:${e.assistantMessageEvent.type}` : e.type,
	);
	console.log(`${sc.name}: ${events.length} events; agentLoop ${loopSame ? "identical" : "DIFFERS"}`);
	console.log(`  ${types.join(" ")}`);

	const jsonlPath = `${OUT_DIR}${sc.name}.jsonl`;
	const finalPath = `${OUT_DIR}${sc.name}.final.json`;
	if (CHECK) {
		for (const [p, content] of [
			[jsonlPath, jsonl],
			[finalPath, finalJson],
		]) {
			if (!existsSync(p) || readFileSync(p, "utf8") !== content) {
				console.log(`  MISMATCH vs file on disk: ${sc.name}${p.endsWith(".jsonl") ? ".jsonl" : ".final.json"}`);
				failures++;
			}
		}
	} else {
		writeFileSync(jsonlPath, jsonl);
		writeFileSync(finalPath, finalJson);
	}
}

if (failures > 0) {
	console.log(`${failures} problem(s)`);
	process.exit(1);
}
console.log(CHECK ? "all transcripts match" : "transcripts written");
