#!/usr/bin/env node
// ACP v1 test client on the official TypeScript SDK's default entry point
// (@agentclientprotocol/sdk 2.4.0, "@agentclientprotocol/sdk": the v1 API).
//
// usage: node v1_client.mjs [--prompt TEXT] [--cancel chunk|permission] [--reject]
//                           [--timeout SECONDS] [--] AGENT_CMD [ARGS...]
//
// Spawns AGENT_CMD (ACP on its stdin/stdout; its stderr is passed through),
// runs initialize -> session/new -> session/prompt (text "hello" unless
// --prompt), and answers each session/request_permission with the first
// `allow*` option (the first `reject*` one with --reject). Once the prompt is
// answered it prints exactly one line to stdout:
//
//   {"stopReason":"end_turn","updates":[...],"permissions":[...]}
//
// `updates` are the `update` objects of the session/update notifications, as
// the SDK delivered them, in arrival order; `permissions` the `toolCall` of
// each permission request and how it was answered.
//
// --cancel chunk       send session/cancel after the first agent_message_chunk
// --cancel permission  send session/cancel when a permission request comes,
//                      and answer it `cancelled` (what v1 requires of clients)
//
// It fails (exit 1, one line on stderr) when the SDK drops a notification its
// validators refuse, when the agent answers with an error, or on timeout.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk";

const USAGE =
  "usage: v1_client.mjs [--prompt TEXT] [--cancel chunk|permission] [--reject] [--timeout SECONDS] [--] AGENT_CMD [ARGS...]";

class UsageError extends Error {}

function parseArgs(argv) {
  const options = { prompt: "hello", cancel: null, reject: false, timeoutSeconds: 20 };
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      i++;
      break;
    } else if (arg === "--prompt") {
      if (i + 1 >= argv.length) throw new UsageError("--prompt needs a value");
      options.prompt = argv[++i];
    } else if (arg === "--cancel") {
      const when = argv[++i];
      if (when !== "chunk" && when !== "permission") {
        throw new UsageError("--cancel needs `chunk` or `permission`");
      }
      options.cancel = when;
    } else if (arg === "--reject") {
      options.reject = true;
    } else if (arg === "--timeout") {
      const value = Number(argv[++i]);
      if (!(value > 0)) throw new UsageError("--timeout needs a positive number of seconds");
      options.timeoutSeconds = value;
    } else if (arg.startsWith("--")) {
      throw new UsageError(`unknown option ${arg}`);
    } else {
      break;
    }
  }
  const command = argv.slice(i);
  if (command.length === 0) throw new UsageError("missing AGENT_CMD");
  return { ...options, command };
}

function describe(error) {
  if (error instanceof acp.RequestError) {
    const data = error.data === undefined ? "" : ` data=${JSON.stringify(error.data)}`;
    return `JSON-RPC error ${error.code}: ${error.message}${data}`;
  }
  return error instanceof Error ? error.message : String(error);
}

function fail(message) {
  process.stderr.write(`v1_client: error: ${String(message).replace(/\s+/g, " ")}\n`);
  process.exit(1);
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`v1_client: error: ${error.message}\n${USAGE}\n`);
    process.exit(2);
  }
  const [cmd, ...args] = options.command;
  const child = spawn(cmd, args, { stdio: ["pipe", "pipe", "inherit"] });
  child.once("error", (error) => fail(`cannot start ${cmd}: ${error.message}`));
  child.stdin.on("error", () => {});
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const timer = setTimeout(() => fail(`timeout after ${options.timeoutSeconds} s`), options.timeoutSeconds * 1000);

  const updates = [];
  const permissions = [];
  let rawUpdates = 0;
  let sessionId;
  let cancelSent = false;
  let agent;

  const cancel = async () => {
    if (cancelSent) return;
    cancelSent = true;
    await agent.notify("session/cancel", { sessionId });
  };

  // Count the session/update notifications on the wire: the SDK drops the ones
  // its validators refuse before any handler sees them.
  const wire = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const tapped = {
    writable: wire.writable,
    readable: wire.readable.pipeThrough(
      new TransformStream({
        transform(message, controller) {
          if (message && message.method === "session/update" && !("id" in message)) rawUpdates++;
          controller.enqueue(message);
        },
      }),
    ),
  };

  const app = acp
    .client({ name: "v1_client" })
    .onRequest("session/request_permission", async ({ params }) => {
      if (options.cancel === "permission") await cancel();
      let outcome;
      if (cancelSent) {
        outcome = { outcome: "cancelled" };
      } else {
        const wanted = options.reject ? "reject" : "allow";
        const option = params.options.find((o) => o.kind.startsWith(wanted));
        outcome = option ? { outcome: "selected", optionId: option.optionId } : { outcome: "cancelled" };
      }
      permissions.push({ toolCall: params.toolCall, outcome });
      return { outcome };
    })
    .onNotification("session/update", async ({ params }) => {
      updates.push(params.update);
      if (options.cancel === "chunk" && params.update.sessionUpdate === "agent_message_chunk") {
        await cancel();
      }
    });

  let response;
  try {
    response = await app.connectWith(tapped, async (context) => {
      agent = context;
      const init = await agent.request("initialize", {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: "acp-codegen-v1-client", version: "0.1.0" },
      });
      if (init.protocolVersion !== acp.PROTOCOL_VERSION) {
        throw new Error(`the agent speaks protocol ${init.protocolVersion}`);
      }
      const session = await agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
      sessionId = session.sessionId;
      const answer = await agent.request("session/prompt", {
        sessionId,
        prompt: [{ type: "text", text: options.prompt }],
      });
      // Notifications read before the answer are delivered before it: let the
      // SDK finish handing them over.
      await new Promise((resolve) => setImmediate(resolve));
      return answer;
    });
  } catch (error) {
    fail(describe(error));
  }
  if (rawUpdates !== updates.length) {
    fail(`the SDK dropped ${rawUpdates - updates.length} of ${rawUpdates} session/update notification(s)`);
  }
  const line = JSON.stringify({ stopReason: response.stopReason, updates, permissions });
  await new Promise((resolve) => process.stdout.write(`${line}\n`, resolve));
  clearTimeout(timer);
  child.stdin.end();
  const gone = await Promise.race([exited.then(() => true), new Promise((r) => setTimeout(r, 3000, false))]);
  if (!gone) {
    child.kill("SIGTERM");
    fail("the agent did not exit within 3 s of its stdin closing");
  }
  process.exit(0);
}

main().catch((error) => fail(describe(error)));
