// jest helpers for agentstream: `useAgentstream()` at the top of a test
// file starts a server for each test (or one for the file, each test with
// its own test id) through jest's global hooks, and returns a handle that
// stands for the current test's server.
import { startServer } from "./index.js";
import { testId } from "./test-id.js";

/**
 * Registers jest hooks that start a server for each test with `options`
 * (`startServer`'s) and close it after; with `shared: true`, one server for
 * the file, each test getting its own test id (send `server.headers` with
 * its calls) and a reset script log. Returns a handle whose properties are
 * the current test's server's.
 */
export function useAgentstream(options = {}) {
  const { shared = false, ...serverOptions } = options;
  const jest = globalThis;
  for (const hook of ["beforeAll", "afterAll", "beforeEach", "afterEach"]) {
    if (typeof jest[hook] !== "function") {
      throw new Error(`agentstream/jest: ${hook} is not a global; call useAgentstream() at the top of a jest test file`);
    }
  }
  let current;
  const handle = new Proxy(
    {},
    {
      get(_, key) {
        if (!current) {
          throw new Error(`agentstream/jest: server.${String(key)} used outside a test (the server runs from beforeEach to afterEach)`);
        }
        const value = current[key];
        return typeof value === "function" ? value.bind(current) : value;
      },
    },
  );
  if (shared) {
    let server;
    jest.beforeAll(async () => {
      server = await startServer(serverOptions);
    });
    jest.beforeEach(async () => {
      const state = jest.expect?.getState?.() ?? {};
      current = server.forTest(testId(state.testPath?.split(/[\\/]/).pop(), state.currentTestName));
      await current.reset();
    });
    jest.afterEach(() => {
      current = undefined;
    });
    jest.afterAll(async () => {
      await server?.close();
    });
  } else {
    jest.beforeEach(async () => {
      current = await startServer(serverOptions);
    });
    jest.afterEach(async () => {
      const server = current;
      current = undefined;
      await server?.close();
    });
  }
  return handle;
}
