#!/usr/bin/env node
// The official TypeScript SDK's experimental remote clients (2.4.0: "experimental/http-client"
// for Streamable HTTP, "experimental/ws-client" with the `ws` package for WebSocket) driving
// one ACP v2 connection to an agent behind a URL.
//
// usage: node remote_client.mjs [--token T] [--sessions N] [--prompt TEXT] [--cancel]
//                               [--oversize BYTES] [--timeout SECONDS] URL
//
// Over one connection: initialize, N (default 1) session/new, then one prompt in every session
// at once (permission requests answered with the first allow* option; with --cancel each
// session is cancelled at its first agent_message_chunk and its permission requests answered
// `cancelled`). Once every session reported idle after its prompt it prints one line:
//
//   {"protocol":2,"sessions":[{"stopReason":"end_turn","updates":["user_message",...]},...]}
//
// --oversize BYTES: the prompt is a text of that many bytes instead, and the line is
//   {"error": {"code": ..., "message": ..., "data": ...}} with how the SDK failed the request.
//
// Strict: whatever the SDK prints through `console` fails the run (it is also copied to
// stderr as `remote_client: SDK console.<level>: ...`). Errors are one line on stderr, exit 1
// (2 for bad usage).

import { format } from "node:util";

import * as acp from "@agentclientprotocol/sdk/experimental/v2";
import { createHttpStream } from "@agentclientprotocol/sdk/experimental/http-client";
import { createWebSocketStream } from "@agentclientprotocol/sdk/experimental/ws-client";
import { WebSocket } from "ws";

const USAGE =
  "usage: remote_client.mjs [--token T] [--sessions N] [--prompt TEXT] [--cancel] [--oversize BYTES] [--timeout S] URL";

const sdkConsole = [];
for (const level of ["error", "warn", "log", "info", "debug"]) {
  console[level] = (...args) => {
    const text = format(...args).replace(/\s+/g, " ").trim();
    sdkConsole.push(`console.${level}: ${text}`);
    process.stderr.write(`remote_client: SDK console.${level}: ${text}\n`);
  };
}

function fail(message, status = 1) {
  process.stderr.write(`remote_client: error: ${String(message).replace(/\s+/g, " ").slice(0, 600)}\n`);
  process.exit(status);
}

function parseArgs(argv) {
  const options = { token: undefined, sessions: 1, prompt: "hello", cancel: false, oversize: 0, timeout: 20 };
  const rest = [...argv];
  while (rest.length > 1) {
    const flag = rest.shift();
    if (flag === "--cancel") options.cancel = true;
    else if (flag === "--token") options.token = rest.shift();
    else if (flag === "--prompt") options.prompt = rest.shift();
    else if (flag === "--sessions") options.sessions = Number(rest.shift());
    else if (flag === "--oversize") options.oversize = Number(rest.shift());
    else if (flag === "--timeout") options.timeout = Number(rest.shift());
    else fail(`unknown option ${flag}\n${USAGE}`, 2);
  }
  if (rest.length !== 1 || !/^(https?|wss?):\/\//.test(rest[0])) fail(`missing URL\n${USAGE}`, 2);
  return { ...options, url: rest[0] };
}

function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const headers = options.token === undefined ? {} : { Authorization: `Bearer ${options.token}` };
  const stream = options.url.startsWith("ws")
    ? createWebSocketStream(options.url, { headers, WebSocket })
    : createHttpStream(options.url, { headers });
  const timer = setTimeout(() => fail(`timeout after ${options.timeout}s`), options.timeout * 1000);

  /** @type {Map<string, {updates: string[], stopReason: unknown, cancelled: boolean, cancelSent?: Promise<void>, idle: ReturnType<typeof deferred>, prompted: boolean}>} */
  const turns = new Map();
  let agentContext;
  const app = acp
    .client({ name: "remote_client" })
    .onRequest("session/request_permission", ({ params }) => {
      const turn = turns.get(params.sessionId);
      const option = params.options.find((o) => String(o.kind).startsWith("allow"));
      if (!turn || turn.cancelled || !option) return { outcome: { outcome: "cancelled" } };
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    })
    .onNotification("session/update", ({ params }) => {
      const turn = turns.get(params.sessionId);
      if (!turn) return;
      const update = /** @type {any} */ (params.update);
      turn.updates.push(update.sessionUpdate);
      if (options.cancel && update.sessionUpdate === "agent_message_chunk" && !turn.cancelled) {
        turn.cancelled = true;
        // Kept and awaited before the connection closes: closing aborts a POST in flight.
        turn.cancelSent = agentContext.notify("session/cancel", { sessionId: params.sessionId });
      }
      if (update.sessionUpdate === "state_update" && update.state === "idle" && turn.prompted) {
        turn.stopReason = update.stopReason ?? null;
        turn.idle.resolve();
      }
    });

  const result = await app.connectWith(stream, async (agent) => {
    agentContext = agent;
    const init = await agent.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "acp-codegen-interop-remote-client", version: "0.1.0" },
      capabilities: {},
    });
    const ids = [];
    for (let i = 0; i < options.sessions; i++) {
      const { sessionId } = await agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
      turns.set(sessionId, { updates: [], stopReason: null, cancelled: false, idle: deferred(), prompted: false });
      ids.push(sessionId);
    }
    if (options.oversize > 0) {
      try {
        await agent.request("session/prompt", {
          sessionId: ids[0],
          prompt: [{ type: "text", text: "x".repeat(options.oversize) }],
        });
        return { error: null };
      } catch (error) {
        return { error: { code: error.code, message: error.message, data: error.data } };
      }
    }
    await Promise.all(
      ids.map(async (sessionId) => {
        const turn = turns.get(sessionId);
        turn.prompted = true;
        await agent.request("session/prompt", { sessionId, prompt: [{ type: "text", text: options.prompt }] });
        await turn.idle.promise;
        await turn.cancelSent;
      }),
    );
    return {
      protocol: init.protocolVersion,
      sessions: ids.map((id) => ({ stopReason: turns.get(id).stopReason, updates: turns.get(id).updates })),
    };
  });
  clearTimeout(timer);
  await new Promise((resolve) => setImmediate(resolve));
  if (sdkConsole.length > 0) fail(`the SDK printed ${sdkConsole.length} message(s), first: ${sdkConsole[0]}`);
  await new Promise((resolve) => process.stdout.write(`${JSON.stringify(result)}\n`, resolve));
  process.exit(0);
}

main().catch((error) => {
  const data = error?.data === undefined ? "" : ` data=${JSON.stringify(error.data)}`;
  fail(`${error?.message ?? error}${error?.code === undefined ? "" : ` (${error.code})`}${data}`);
});
