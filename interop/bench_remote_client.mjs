#!/usr/bin/env node
// The remote rows' client on the official TypeScript SDK (2.4.0: "experimental/v2" with the
// experimental HTTP and WebSocket clients): starts AGENT_CMD, reads its `listening: URL`
// lines, connects over the transport asked for, and runs bench_client.mjs's turn, printing
// {"chunks", "seconds", "peak_rss_kib"}. `seconds` runs from sending session/prompt.
//
// usage: node bench_remote_client.mjs --transport ws|http [--chunks N] -- AGENT_CMD [ARGS...]

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { createInterface } from "node:readline";

import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";

const argv = process.argv.slice(2);
const split = argv.indexOf("--");
const options = split < 0 ? argv : argv.slice(0, split);
const command = split < 0 ? [] : argv.slice(split + 1);
const option = (name, fallback) => {
  const at = options.indexOf(name);
  return at < 0 ? fallback : options[at + 1];
};
const expected = Number(option("--chunks", "20000"));
const transport = option("--transport", "ws");
if (command.length === 0 || !(expected > 0) || !["ws", "http"].includes(transport)) {
  process.stderr.write("usage: bench_remote_client.mjs --transport ws|http [--chunks N] -- AGENT_CMD [ARGS...]\n");
  process.exit(2);
}

function peakRssKib() {
  try {
    const match = /^VmHWM:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "ascii"));
    if (match) return Number(match[1]);
  } catch {}
  return process.resourceUsage().maxRSS;
}

const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
const urls = [];
for await (const line of createInterface({ input: child.stdout })) {
  if (line.startsWith("listening: ")) urls.push(line.slice("listening: ".length).trim());
  if (urls.length === 2) break;
}
const url = urls.find((u) => u.startsWith(transport));
if (!url) {
  process.stderr.write(`bench_remote_client: the agent printed no ${transport} URL\n`);
  process.exit(1);
}

let chunks = 0;
let idle = false;
let finish;
const finished = new Promise((resolve) => (finish = resolve));
const app = acp
  .client({ name: "bench_remote_client" })
  .onNotification("session/update", ({ params }) => {
    const update = params.update;
    if (update.sessionUpdate === "agent_message_chunk") chunks += 1;
    else if (update.sessionUpdate === "state_update" && update.state === "idle") idle = true;
    if (idle && chunks >= expected) finish();
  });

const stream = transport === "ws" ? createWebSocketStream(url, { WebSocket }) : createHttpStream(url);
await app.connectWith(stream, async (agent) => {
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
  process.stdout.write(`${JSON.stringify({ chunks, seconds, peak_rss_kib: peakRssKib() })}\n`);
});
child.kill();
process.exit(chunks === expected ? 0 : 1);
