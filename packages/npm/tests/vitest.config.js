// The vitest suite .ci/packages.sh runs in a fresh folder where the packed
// tarballs are installed.
export default { test: { testTimeout: 30_000, hookTimeout: 30_000 } };
