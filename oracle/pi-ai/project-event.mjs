// One pi-ai stream event as the comparisons hold it: its value fields
// (`partial` is a live, mutated reference in Pi; it is left out).
export function projectEvent(e) {
  const p = { type: e.type };
  if ("contentIndex" in e) p.contentIndex = e.contentIndex;
  if ("delta" in e) p.delta = e.delta;
  if ("content" in e) p.content = e.content;
  if ("toolCall" in e) p.toolCall = JSON.parse(JSON.stringify(e.toolCall));
  if ("reason" in e) p.reason = e.reason;
  return p;
}
