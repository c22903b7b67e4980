// The test id a shared server's handle carries: the file and the test's
// name, in the characters the server accepts (visible ASCII without `/`,
// no `..`), at most 128 of them.
export const testId = (file, name) =>
  (`${file ?? ""}::${name ?? ""}`.replace(/[^A-Za-z0-9._-]/g, "_").replace(/\.(?=\.)/g, "_") || "test").slice(0, 128);
