#!/usr/bin/env node
// The official SDK's own validators as a differential oracle, one long-lived process.
//
// Reads one JSON request per line on stdin and writes one JSON answer per line on stdout:
//
//   {"lane": "v2", "checks": [["PromptResponse", <value>], ...]}
//     -> {"results": [{"ok": true, "data": <parsed>} | {"ok": false, "issues": [...]}, ...]}
//   {"lane": "v2", "types": true}
//     -> {"types": ["AbsolutePath", ...]}   (every exported validator, without its `z`)
//
// `data` is what `z<Type>.safeParse(value)` returns after JSON.stringify (so `undefined`
// keys are gone). Each issue is `{path, code, message}` (and `format` when zod gives one).
// A request the oracle cannot serve gets `{"error": "..."}`; the process keeps reading.
// Lanes: v1 and v2 (the stable validators), v1-unstable and v2-unstable.

import { createInterface } from "node:readline";

const SDK = "./node_modules/@agentclientprotocol/sdk/dist";
const LANES = {
  v1: `${SDK}/v1/schema/zod.gen.js`,
  v2: `${SDK}/v2/schema/zod.gen.js`,
  "v1-unstable": `${SDK}/v1/unstable/schema/zod.gen.js`,
  "v2-unstable": `${SDK}/v2/unstable/schema/zod.gen.js`,
};
const loaded = new Map();

async function validators(lane) {
  if (!Object.hasOwn(LANES, lane)) throw new Error(`unknown lane ${JSON.stringify(lane)}`);
  if (!loaded.has(lane)) loaded.set(lane, await import(new URL(LANES[lane], import.meta.url)));
  return loaded.get(lane);
}

function check(module, name, value) {
  const schema = Object.hasOwn(module, `z${name}`) ? module[`z${name}`] : undefined;
  if (schema === undefined) return { ok: false, issues: [{ path: [], code: "no_type", message: name }] };
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, data: result.data };
  const issues = result.error.issues.map((issue) => {
    const out = { path: issue.path.map(String), code: issue.code, message: issue.message };
    if (issue.format !== undefined) out.format = issue.format;
    return out;
  });
  return { ok: false, issues };
}

async function answer(line) {
  const request = JSON.parse(line);
  const module = await validators(request.lane);
  if (request.types) {
    return { types: Object.keys(module).filter((k) => k.startsWith("z")).map((k) => k.slice(1)).sort() };
  }
  return { results: request.checks.map(([name, value]) => check(module, name, value)) };
}

const input = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of input) {
  if (!line.trim()) continue;
  let reply;
  try {
    reply = await answer(line);
  } catch (error) {
    reply = { error: String(error?.message ?? error) };
  }
  process.stdout.write(JSON.stringify(reply) + "\n");
}
