// agentstream for JavaScript: starts `agentstream serve` (the binary of the
// platform package @agentstream/linux-x64, or $AGENTSTREAM_BIN) on a free
// port of 127.0.0.1 and talks to its control API. No dependencies; Node 18+.
import { spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";

/** The header that isolates a test on a shared server. */
export const TEST_HEADER = "x-agentstream-test";

const BUILD_FROM_SOURCE =
  "build it from source with `cargo install --path crates/agentstream-cli` in the agentstream " +
  "repository, then put it on PATH or set AGENTSTREAM_BIN to its path";

/** The error of a server that did not start or of a failed control call. */
export class AgentstreamError extends Error {
  constructor(message, { stderr = "", status } = {}) {
    super(message);
    this.name = "AgentstreamError";
    this.stderr = stderr;
    this.status = status;
  }
}

const executable = (path) => {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
};

/** The agentstream binary: $AGENTSTREAM_BIN, the platform package's, or the first on PATH. */
export function binaryPath() {
  if (process.env.AGENTSTREAM_BIN) return process.env.AGENTSTREAM_BIN;
  const platform = `${process.platform}-${process.arch}`;
  if (platform === "linux-x64") {
    try {
      return createRequire(import.meta.url).resolve("@agentstream/linux-x64/bin/agentstream");
    } catch {
      // Not installed (--no-optional): look on PATH.
    }
  }
  const name = process.platform === "win32" ? "agentstream.exe" : "agentstream";
  for (const dir of (process.env.PATH ?? "").split(delimiter)) {
    if (dir && executable(join(dir, name))) return join(dir, name);
  }
  throw new AgentstreamError(
    `agentstream has no prebuilt binary for ${platform} (only linux-x64): ${BUILD_FROM_SOURCE}`,
  );
}

const rootOf = (url) => {
  const trimmed = url.trim().replace(/\/+$/, "");
  return trimmed.endsWith("/v1") ? trimmed.slice(0, -3) : trimmed;
};

/** A running server, or a handle on one (see `forTest`). */
class Server {
  #process;
  #owner;
  #stderr;
  #scratch;

  constructor(url, { testId, process, owner, stderr, scratch } = {}) {
    /** http://127.0.0.1:PORT */
    this.root = rootOf(url);
    /** The base URL the binary printed: http://127.0.0.1:PORT/v1 */
    this.url = `${this.root}/v1`;
    this.testId = testId;
    this.#process = process;
    this.#owner = owner ?? false;
    this.#stderr = stderr ?? (() => "");
    this.#scratch = scratch;
  }

  /** What the official SDK of `api` takes as its base URL. */
  baseUrl(api = "openai") {
    if (api === "openai" || api === "responses") return this.url;
    if (api === "anthropic" || api === "gemini") return this.root;
    throw new TypeError(`unknown API ${JSON.stringify(api)}: one of openai, responses, anthropic, gemini`);
  }

  /** The headers that make a client's calls this handle's test's. */
  get headers() {
    return this.testId === undefined ? {} : { [TEST_HEADER]: this.testId };
  }

  /** A handle on the same server whose calls and control calls carry `testId`. */
  forTest(testId) {
    return new Server(this.url, { testId, stderr: this.#stderr });
  }

  /** What the binary printed on its standard error so far. */
  stderr() {
    return this.#stderr();
  }

  async #call(method, path, body) {
    const headers = { ...this.headers };
    if (body) headers["content-type"] = "application/json";
    let response;
    try {
      response = await fetch(this.root + path, { method, headers, body });
    } catch (error) {
      throw new AgentstreamError(`${method} ${path}: ${error.cause?.message ?? error.message}`, {
        stderr: this.#stderr(),
      });
    }
    const text = await response.text();
    if (!response.ok) {
      throw new AgentstreamError(`${method} ${path}: HTTP ${response.status}: ${text}`, {
        status: response.status,
      });
    }
    return JSON.parse(text);
  }

  /** The requests this test made (all without a test id), decoded into Pi's JSON. */
  requests({ raw = false } = {}) {
    return this.#call("GET", `/v1/requests${raw ? "?raw=1" : ""}`);
  }

  /** The rules that never answered and the turns no call reached. */
  unused() {
    return this.#call("GET", "/v1/unused");
  }

  /** Rewinds the script and clears the request log (this test's, or the server's). */
  reset() {
    return this.#call("POST", "/v1/reset", "");
  }

  /** Replaces (or with `append`, extends) the script: this test's, or the server's. */
  setScript(script, { append = false } = {}) {
    const body = typeof script === "string" ? script : JSON.stringify(script);
    return this.#call("POST", `/v1/script${append ? "?append=1" : ""}`, body);
  }

  /** Stops the server (SIGINT) if this handle started it. */
  async close() {
    const child = this.#process;
    if (!this.#owner || child === undefined) return;
    this.#process = undefined;
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGINT");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (this.#scratch) rmSync(this.#scratch, { recursive: true, force: true });
  }
}

/**
 * Starts `agentstream serve` on a free port of 127.0.0.1 and resolves once it
 * printed its URL; rejects with the binary's message when it exits first (a
 * bad script path, a bad cassette directory).
 */
export async function startServer(options = {}) {
  const { script, replay, upstream, record, strict = false, args = [], testId, binary } = options;
  const startupTimeoutMs = options.startupTimeoutMs ?? 30_000;
  if ((upstream === undefined) !== (record === undefined)) {
    throw new TypeError("upstream and record go together");
  }
  if ([script, replay, upstream].filter((x) => x !== undefined).length > 1) {
    throw new TypeError("give one of script, replay or upstream/record");
  }
  const command = ["serve"];
  let scratch;
  if (upstream !== undefined) {
    command.push("--upstream", upstream, "--record", record);
  } else if (replay !== undefined) {
    command.push("--replay", replay);
  } else {
    if (typeof script === "string") {
      command.push(script);
    } else {
      scratch = mkdtempSync(join(tmpdir(), "agentstream-"));
      const path = join(scratch, "script.json");
      writeFileSync(path, JSON.stringify(script ?? []));
      command.push(path);
    }
    if (strict) command.push("--strict");
  }
  command.push("--port", "0", ...args);
  const bin = binary ?? binaryPath();
  const child = spawn(bin, command, { stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk) => {
    stderr += chunk;
  });
  const cleanup = () => scratch && rmSync(scratch, { recursive: true, force: true });
  const url = await new Promise((resolve, reject) => {
    let stdout = "";
    const fail = (message) => {
      clearTimeout(timer);
      child.kill("SIGKILL");
      cleanup();
      reject(new AgentstreamError(message, { stderr }));
    };
    const timer = setTimeout(() => fail(`${bin} ${command.join(" ")} printed no URL within ${startupTimeoutMs} ms`), startupTimeoutMs);
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
      const newline = stdout.indexOf("\n");
      if (newline >= 0) {
        clearTimeout(timer);
        resolve(stdout.slice(0, newline));
      }
    });
    child.once("error", (error) => fail(`cannot run ${bin}: ${error.message}; ${BUILD_FROM_SOURCE}`));
    child.once("exit", (code, signal) => {
      // Let stderr drain before reporting it.
      setImmediate(() =>
        fail(`${bin} ${command.join(" ")} exited (${code ?? signal}) before serving:\n${stderr.trim()}`),
      );
    });
  });
  child.removeAllListeners("exit");
  child.stdout.resume();
  return new Server(url, { testId, process: child, owner: true, stderr: () => stderr, scratch });
}

/** A handle on a server already running at `url`; `close()` leaves it running. */
export function connect(url, { testId } = {}) {
  return new Server(url, { testId });
}
