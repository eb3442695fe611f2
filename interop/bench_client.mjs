#!/usr/bin/env node
// The end-to-end benchmark's client on the official TypeScript SDK (2.4.0,
// "experimental/v2"): spawns AGENT_CMD, runs initialize, session/new and one
// session/prompt whose text is the number of chunks to stream, and prints
// {"chunks", "seconds", "peak_rss_kib"} once every chunk and the idle
// state_update arrived. `seconds` runs from sending session/prompt.
//
// usage: node bench_client.mjs [--chunks N] -- AGENT_CMD [ARGS...]

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const options = split < 0 ? argv : argv.slice(0, split);
const command = split < 0 ? [] : argv.slice(split + 1);
const chunksAt = options.indexOf("--chunks");
const expected = chunksAt < 0 ? 20000 : Number(options[chunksAt + 1]);
if (command.length === 0 || !(expected > 0)) {
  process.stderr.write("usage: bench_client.mjs [--chunks N] -- AGENT_CMD [ARGS...]\n");
  process.exit(2);
}

// VmHWM starts afresh at exec; the rusage maximum would include the parent's memory.
function peakRssKib() {
  try {
    const match = /^VmHWM:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "ascii"));
    if (match) return Number(match[1]);
  } catch {}
  return process.resourceUsage().maxRSS;
}

const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
child.stdin.on("error", () => {});

let chunks = 0;
let idle = false;
let finish;
const finished = new Promise((resolve) => (finish = resolve));

const app = acp
  .client({ name: "bench_client" })
  .onNotification("session/update", ({ params }) => {
    const update = params.update;
    if (update.sessionUpdate === "agent_message_chunk") {
      chunks += 1;
    } else if (update.sessionUpdate === "state_update" && update.state === "idle") {
      idle = true;
    }
    if (idle && chunks >= expected) finish();
  });

const wire = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
await app.connectWith(wire, async (agent) => {
  await agent.request("initialize", {
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "bench-client", version: "1" },
    capabilities: {},
  });
  const session = await agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
  const start = performance.now();
  await agent.request("session/prompt", {
    sessionId: session.sessionId,
    prompt: [{ type: "text", text: String(expected) }],
  });
  await finished;
  const seconds = (performance.now() - start) / 1000;
  const peak = peakRssKib();
  process.stdout.write(`${JSON.stringify({ chunks, seconds, peak_rss_kib: peak })}\n`);
});
child.kill();
process.exit(chunks === expected ? 0 : 1);
