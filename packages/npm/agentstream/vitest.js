// vitest helpers for agentstream: a `test` whose `agentstream` fixture is a
// server for that test, or a handle on one server per file carrying the
// test's own id.
import { afterAll, test as base } from "vitest";
import { startServer } from "./index.js";
import { testId } from "./test-id.js";

const idOf = (task) => testId(task.file?.name, task.name);

/**
 * A vitest `test` with an `agentstream` fixture: a server started for each
 * test with `options` (`startServer`'s), or, with `shared: true`, one server
 * for the file, each test getting a handle carrying its own test id (send
 * `agentstream.headers` with its calls).
 */
export function agentstreamTest(options = {}) {
  const { shared = false, ...serverOptions } = options;
  if (!shared) {
    return base.extend({
      agentstream: async ({}, use) => {
        const server = await startServer(serverOptions);
        try {
          await use(server);
        } finally {
          await server.close();
        }
      },
    });
  }
  let server;
  afterAll(async () => {
    if (server) await (await server).close();
  });
  return base.extend({
    agentstream: async ({ task }, use) => {
      server ??= startServer(serverOptions);
      const handle = (await server).forTest(idOf(task));
      await handle.reset();
      await use(handle);
    },
  });
}
