import type { Server, ServerOptions } from "./index.js";

/**
 * Registers jest hooks starting a server for each test (or, with `shared`,
 * one per file with a test id per test) and returns a handle standing for
 * the current test's server. Call it at the top of a jest test file.
 */
export declare function useAgentstream(options?: ServerOptions & { shared?: boolean }): Server;
