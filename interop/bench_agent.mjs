#!/usr/bin/env node
// The end-to-end benchmark's agent on the official TypeScript SDK (2.4.0,
// "experimental/v2"): `session/prompt` is answered at once, then the agent
// streams N `agent_message_chunk`s (N is the prompt's text; chunk i says
// `word${i % 100} `), awaiting each notify as a real agent does, and ends the
// turn with state_update idle. See benchmarks/e2e.py.

import { Readable, Writable } from "node:stream";

import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const SESSION_ID = "sess_bench";
const MESSAGE_ID = "msg_bench";

async function stream(client, count) {
  for (let i = 0; i < count; i++) {
    await client.notify("session/update", {
      sessionId: SESSION_ID,
      update: {
        sessionUpdate: "agent_message_chunk",
        messageId: MESSAGE_ID,
        content: { type: "text", text: `word${i % 100} ` },
      },
    });
  }
  await client.notify("session/update", {
    sessionId: SESSION_ID,
    update: { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" },
  });
}

const app = acp
  .agent({ name: "bench_agent" })
  .onRequest("initialize", () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    info: { name: "bench-agent", version: "1" },
    capabilities: {},
  }))
  .onRequest("session/new", () => ({ sessionId: SESSION_ID }))
  .onRequest("session/prompt", ({ params, client }) => {
    const count = Number(params.prompt[0].text);
    setImmediate(() => {
      stream(client, count).catch((error) => process.stderr.write(`bench_agent: ${error}\n`));
    });
    return { messageId: "msg_user" };
  });

// `--listen HOST:PORT`: served by the SDK's experimental remote server (remote_server.mjs)
// over Streamable HTTP and WebSocket instead of stdio (the remote rows of benchmarks/e2e.py).
const listenAt = process.argv.indexOf("--listen");
if (listenAt >= 0) {
  const { serveRemote } = await import("./remote_server.mjs");
  await serveRemote(app, { listen: process.argv[listenAt + 1] ?? "", log: () => {} });
} else {
  const connection = app.connect(
    acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)),
  );
  connection.closed.then(() => process.exit(0));
}
