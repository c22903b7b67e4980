// Runs a wasm32-wasip1 binary (a cargo test harness) under Node's built-in
// WASI preview 1. Cargo calls it as the target runner:
//   CARGO_TARGET_WASM32_WASIP1_RUNNER="node --no-warnings /abs/path/.ci/wasi-runner.mjs"
// It passes the harness its arguments and environment, gives it the host
// filesystem at "/" (tests read fixtures by absolute path), and exits with
// the harness's own exit code.
import { readFile } from "node:fs/promises";
import { argv, env, exit } from "node:process";
import { WASI } from "node:wasi";

const [wasmPath, ...args] = argv.slice(2);
if (!wasmPath) {
  console.error("usage: wasi-runner.mjs BINARY.wasm [ARGS...]");
  exit(2);
}
const wasi = new WASI({
  version: "preview1",
  args: [wasmPath, ...args],
  env,
  preopens: { "/": "/" },
  returnOnExit: true,
});
const module = await WebAssembly.compile(await readFile(wasmPath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
exit(wasi.start(instance));
