import type { TestAPI } from "vitest";
import type { Server, ServerOptions } from "./index.js";

/** A vitest `test` whose `agentstream` fixture is this test's server, or with `shared`, its handle on the file's. */
export declare function agentstreamTest(
  options?: ServerOptions & { shared?: boolean },
): TestAPI<{ agentstream: Server }>;
