#!/usr/bin/env node
// ACP v1 test agent on the official TypeScript SDK's default entry point
// (@agentclientprotocol/sdk 2.4.0: the v1 API), speaking newline-delimited
// JSON-RPC on stdin/stdout. It writes nothing to stderr unless something is
// wrong.
//
// It plays the same turn as examples/v1/echo_agent.py for every `session/prompt`:
//
//   plan (3 entries), agent_message_chunk x N (one messageId, echoing the
//   prompt: "You said: ", its words, "."), plan (the first entry completed),
//   tool_call call_001 (pending),
//   session/request_permission, then tool_call_update in_progress and
//   tool_call_update completed (allowed) or tool_call_update failed
//   (rejected), usage_update, and the answer {"stopReason": "end_turn"}.
//
// A prompt whose text contains "slow" waits 200 ms between message chunks.
// `session/cancel` stops the turn (a pending permission request is withdrawn:
// the SDK sends `$/cancel_request` for it), and the prompt is answered
// {"stopReason": "cancelled"}; so is a permission request answered
// `cancelled`.

import { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";

import * as acp from "@agentclientprotocol/sdk";

const TOOL_CALL_ID = "call_001";
const SLOW_CHUNK_DELAY_MS = 200;
const OPTIONS = [
  { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
  { optionId: "allow-always", name: "Always allow", kind: "allow_always" },
  { optionId: "reject-once", name: "Reject", kind: "reject_once" },
];

class Cancelled extends Error {}

/** @type {Map<string, {turns: number, controller: AbortController | null}>} */
const sessions = new Map();

function replyChunks(text) {
  const words = text.match(/\S+\s*/g) ?? [];
  return ["You said: ", ...(words.length > 0 ? words.map((w) => w) : ["(nothing)"]), "."].map((chunk, i, all) =>
    i === all.length - 2 ? chunk.trimEnd() : chunk,
  );
}

async function runTurn(client, sessionId, number, text, signal) {
  const send = (update) => client.notify("session/update", { sessionId, update });
  const checkpoint = () => {
    if (signal.aborted) throw new Cancelled();
  };
  const plan = (first) => ({
    sessionUpdate: "plan",
    entries: [
      { content: "Echo the prompt back", priority: "medium", status: first },
      { content: "Run the echo tool", priority: "medium", status: "pending" },
      { content: "Report usage", priority: "medium", status: "pending" },
    ],
  });
  await send(plan("pending"));
  const chunks = replyChunks(text);
  for (let i = 0; i < chunks.length; i++) {
    if (i > 0 && text.includes("slow")) await sleep(SLOW_CHUNK_DELAY_MS, undefined, { signal });
    checkpoint();
    await send({
      sessionUpdate: "agent_message_chunk",
      messageId: `msg_agent_${number}`,
      content: { type: "text", text: chunks[i] },
    });
  }
  checkpoint();
  await send(plan("completed"));
  await send({
    sessionUpdate: "tool_call",
    toolCallId: TOOL_CALL_ID,
    title: "Echo tool",
    kind: "other",
    status: "pending",
    rawInput: { text },
  });
  const answer = await client.request(
    "session/request_permission",
    { sessionId, toolCall: { toolCallId: TOOL_CALL_ID, title: "Echo tool" }, options: OPTIONS },
    { cancellationSignal: signal, stopWaitingOnCancel: true },
  );
  checkpoint();
  if (answer.outcome.outcome !== "selected") throw new Cancelled();
  if (answer.outcome.optionId.startsWith("allow")) {
    await send({ sessionUpdate: "tool_call_update", toolCallId: TOOL_CALL_ID, status: "in_progress" });
    await send({
      sessionUpdate: "tool_call_update",
      toolCallId: TOOL_CALL_ID,
      status: "completed",
      content: [{ type: "content", content: { type: "text", text: `Echo: ${text}` } }],
    });
  } else {
    await send({
      sessionUpdate: "tool_call_update",
      toolCallId: TOOL_CALL_ID,
      status: "failed",
      content: [{ type: "content", content: { type: "text", text: "Permission was not granted." } }],
    });
  }
  await send({ sessionUpdate: "usage_update", used: 1000 * number + text.length, size: 200000 });
  return "end_turn";
}

const app = acp
  .agent({ name: "v1_agent" })
  .onRequest("initialize", () => ({
    protocolVersion: acp.PROTOCOL_VERSION,
    agentCapabilities: { loadSession: false },
    agentInfo: { name: "acp-codegen-v1-ts-agent", version: "0.1.0" },
    authMethods: [],
  }))
  .onRequest("session/new", () => {
    const sessionId = `sess_${crypto.randomUUID().replaceAll("-", "")}`;
    sessions.set(sessionId, { turns: 0, controller: null });
    return { sessionId };
  })
  .onRequest("session/prompt", async ({ params, client }) => {
    const session = sessions.get(params.sessionId);
    if (!session) throw acp.RequestError.resourceNotFound(params.sessionId);
    if (session.controller) throw acp.RequestError.invalidRequest(undefined, "one prompt at a time");
    session.turns += 1;
    const controller = new AbortController();
    session.controller = controller;
    const text = params.prompt
      .filter((block) => block.type === "text")
      .map((block) => block.text)
      .join("\n");
    try {
      return { stopReason: await runTurn(client, params.sessionId, session.turns, text, controller.signal) };
    } catch (error) {
      if (controller.signal.aborted || error instanceof Cancelled) return { stopReason: "cancelled" };
      throw error;
    } finally {
      session.controller = null;
    }
  })
  .onNotification("session/cancel", ({ params }) => {
    sessions.get(params.sessionId)?.controller?.abort();
  });

const connection = app.connect(acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin)));
await connection.closed;
