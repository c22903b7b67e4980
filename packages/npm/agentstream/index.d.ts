/** The four APIs `baseUrl` knows. */
export type Api = "openai" | "responses" | "anthropic" | "gemini";

/** A script: a path to a JSON file, a list of turns, or `{ rules, turns }`. */
export type Script = string | unknown[] | { rules?: unknown[]; turns?: unknown[] };

/** The header that isolates a test on a shared server. */
export declare const TEST_HEADER: "x-agentstream-test";

/** A server that did not start, or a failed control call. */
export declare class AgentstreamError extends Error {
  /** What the binary printed on its standard error. */
  readonly stderr: string;
  /** The HTTP status of a failed control call. */
  readonly status?: number;
}

/** Options of `startServer`: one source of answers (none: an empty script). */
export interface ServerOptions {
  /** A path to a script file, or the script itself (written to a temporary file). */
  script?: Script;
  /** A cassette directory to answer from. */
  replay?: string;
  /** A base URL to proxy to, recording into `record`. */
  upstream?: string;
  /** The directory the proxy records cassettes in. */
  record?: string;
  /** Answer a call no rule matches with HTTP 400 (scripts only). */
  strict?: boolean;
  /** More `agentstream serve` arguments, e.g. `["--chunks", "3"]`. */
  args?: string[];
  /** The test id the handle's headers and control calls carry. */
  testId?: string;
  /** The binary to run instead of the platform package's. */
  binary?: string;
  /** How long to wait for the server's URL (default 30 000 ms). */
  startupTimeoutMs?: number;
}

/** A request the server received, in Pi's JSON. */
export interface RecordedRequest {
  api: string;
  model: string;
  context: { systemPrompt?: string; messages: unknown[]; tools?: unknown[] };
  options: Record<string, unknown>;
  /** The body as received (`requests({ raw: true })`). */
  raw?: unknown;
  [key: string]: unknown;
}

/** A running server, or a handle on one for one test. */
export interface Server {
  /** `http://127.0.0.1:PORT` */
  readonly root: string;
  /** `http://127.0.0.1:PORT/v1`, the base URL the binary printed. */
  readonly url: string;
  /** This handle's test id, if any. */
  readonly testId?: string;
  /** What the official SDK of `api` takes as its base URL (`…/v1` for OpenAI). */
  baseUrl(api?: Api): string;
  /** `{ "x-agentstream-test": testId }`, or `{}` without a test id. */
  readonly headers: Record<string, string>;
  /** A handle on this server carrying `testId`. */
  forTest(testId: string): Server;
  /** The requests this test made (all without a test id). */
  requests(options?: { raw?: boolean }): Promise<RecordedRequest[]>;
  /** The rules that never answered and the turns no call reached. */
  unused(): Promise<{ rules: unknown[]; turns: unknown[]; [key: string]: unknown }>;
  /** Rewinds the script and clears the request log (this test's, or all). */
  reset(): Promise<{ test: string | null; reset: true; clearedRequests: number }>;
  /** Replaces the script (this test's, or the server's); `append` extends it. */
  setScript(
    script: Script,
    options?: { append?: boolean },
  ): Promise<{ test: string | null; rules: number; turns: number; appended: boolean }>;
  /** What the binary printed on its standard error so far. */
  stderr(): string;
  /** Stops the server if this handle started it. */
  close(): Promise<void>;
}

/** Starts `agentstream serve` on a free port; rejects with the binary's message if it exits. */
export declare function startServer(options?: ServerOptions): Promise<Server>;

/** A handle on a server already running at `url`. */
export declare function connect(url: string, options?: { testId?: string }): Server;

/** The binary `startServer` runs. */
export declare function binaryPath(): string;
