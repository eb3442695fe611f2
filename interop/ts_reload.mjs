#!/usr/bin/env node
// A client on the official TypeScript SDK (@agentclientprotocol/sdk 2.4.0) for
// sessions that outlive their agent process: v2 through "experimental/v2", v1
// through the default entry point.
//
// usage: node ts_reload.mjs --lane v1|v2 [--session ID] [--timeout S] [--] AGENT_CMD [ARGS...]
//
// Without --session: initialize, session/new in this directory, one prompt
// "hello" (permission requests allowed), then print {"sessionId": ...} once the
// turn ended (v1: the prompt's answer; v2: the first idle state_update).
// With --session ID: initialize, session/list (cwd: this directory), then v1
// session/load or v2 session/resume with replayFrom start (up to the state
// update that follows it), and print
//   {"listed": [...sessions], "replayed": [...updates as the SDK delivered them]}
// It fails (exit 1, one line on stderr) when the SDK drops a notification its
// validators refuse, prints anything on the console, or the agent answers an
// error; exit 2 for bad usage.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { format } from "node:util";

import * as v1 from "@agentclientprotocol/sdk";
import * as v2 from "@agentclientprotocol/sdk/experimental/v2";

const console_lines = [];
for (const level of ["error", "warn", "log", "info", "debug"]) {
  console[level] = (...args) => console_lines.push(`console.${level}: ${format(...args)}`);
}

function fail(message, code = 1) {
  process.stderr.write(`ts_reload: error: ${String(message).replace(/\s+/g, " ")}\n`);
  process.exit(code);
}

function parseArgs(argv) {
  const options = { lane: null, session: null, timeout: 20 };
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      i++;
      break;
    } else if (arg === "--lane" && (argv[i + 1] === "v1" || argv[i + 1] === "v2")) {
      options.lane = argv[++i];
    } else if (arg === "--session" && i + 1 < argv.length) {
      options.session = argv[++i];
    } else if (arg === "--timeout" && Number(argv[i + 1]) > 0) {
      options.timeout = Number(argv[++i]);
    } else if (arg.startsWith("--")) {
      fail(`bad option ${arg}`, 2);
    } else {
      break;
    }
  }
  const command = argv.slice(i);
  if (!options.lane || command.length === 0) fail("usage: ts_reload.mjs --lane v1|v2 [--session ID] -- AGENT_CMD", 2);
  return { ...options, command };
}

function describe(error) {
  if (error && typeof error.code === "number") {
    return `JSON-RPC error ${error.code}: ${error.message} ${JSON.stringify(error.data ?? null)}`;
  }
  return error instanceof Error ? error.message : String(error);
}

async function main() {
  const options = parseArgs(process.argv.slice(2));
  const acp = options.lane === "v1" ? v1 : v2;
  const [cmd, ...args] = options.command;
  const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
  child.once("error", (error) => fail(`cannot start ${cmd}: ${error.message}`));
  child.stdin.on("error", () => {});
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const timer = setTimeout(() => fail(`timeout after ${options.timeout} s`), options.timeout * 1000);

  let raw = 0; // session/update notifications on the wire
  let delivered = 0; // ... and handed to our handler
  const updates = [];
  let idle = null; // resolves at the next idle state_update (v2)
  const wire = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const tapped = {
    writable: wire.writable,
    readable: wire.readable.pipeThrough(
      new TransformStream({
        transform(message, controller) {
          if (message && message.method === "session/update" && !("id" in message)) raw++;
          controller.enqueue(message);
        },
      }),
    ),
  };
  const waitIdle = () => new Promise((resolve) => (idle = resolve));
  const app = acp
    .client({ name: "ts_reload" })
    .onRequest("session/request_permission", ({ params }) => {
      const option = params.options.find((o) => String(o.kind).startsWith("allow"));
      return { outcome: option ? { outcome: "selected", optionId: option.optionId } : { outcome: "cancelled" } };
    })
    .onNotification("session/update", ({ params }) => {
      updates.push(params.update);
      delivered++;
      if (params.update.sessionUpdate === "state_update" && params.update.state === "idle" && idle) {
        const done = idle;
        idle = null;
        done();
      }
    });

  let result;
  try {
    result = await app.connectWith(tapped, async (agent) => {
      const init =
        options.lane === "v1"
          ? { protocolVersion: 1, clientCapabilities: {}, clientInfo: { name: "ts_reload", version: "0.1.0" } }
          : { protocolVersion: acp.PROTOCOL_VERSION, info: { name: "ts_reload", version: "0.1.0" }, capabilities: {} };
      await agent.request("initialize", init);
      const cwd = process.cwd();
      if (options.session === null) {
        const session = await agent.request("session/new", { cwd, mcpServers: [] });
        const ended = options.lane === "v2" ? waitIdle() : null;
        await agent.request("session/prompt", {
          sessionId: session.sessionId,
          prompt: [{ type: "text", text: "hello" }],
        });
        if (ended) await ended;
        return { sessionId: session.sessionId };
      }
      const listed = await agent.request("session/list", { cwd });
      updates.length = 0;
      const sessionId = options.session;
      if (options.lane === "v1") {
        await agent.request("session/load", { sessionId, cwd, mcpServers: [] });
      } else {
        const replayed = waitIdle();
        await agent.request("session/resume", { sessionId, cwd, replayFrom: { type: "start" } });
        await replayed; // the SDK delivers the replay after resolving the request
      }
      await new Promise((resolve) => setImmediate(resolve));
      return { listed: listed.sessions, replayed: [...updates] };
    });
  } catch (error) {
    fail(describe(error));
  }
  if (raw !== delivered) fail(`the SDK dropped ${raw - delivered} of ${raw} session/update notification(s)`);
  if (console_lines.length > 0) fail(`the SDK printed: ${console_lines[0]}`);
  const line = JSON.stringify(result);
  await new Promise((resolve) => process.stdout.write(`${line}\n`, resolve));
  clearTimeout(timer);
  child.stdin.end();
  await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 3000))]);
  process.exit(0);
}

main().catch((error) => fail(describe(error)));
