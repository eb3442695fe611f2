#!/usr/bin/env node
// ACP v2 test agent built on the official TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0, entry point "experimental/v2", or with
// `--unstable` "experimental/v2/unstable"), speaking newline-delimited
// JSON-RPC on stdin/stdout. Logs go to stderr only.
//
// usage: node ts_agent.mjs [--unstable]
//
// Every `session/prompt` is answered as soon as it is accepted (the SDK's v2
// PromptResponse needs `messageId`), then the whole turn is reported as
// `session/update` notifications:
//
//   user_message, state_update(running), plan_update,
//   agent_message_chunk x N (N >= 3, echoing the prompt text),
//   tool_call_update(pending, call_001), state_update(requires_action)
//   + session/request_permission, state_update(running),
//   tool_call_update(in_progress), tool_call_content_chunk,
//   tool_call_update(completed, content), usage_update(cost),
//   state_update(idle, end_turn)
//
// A prompt whose text contains "slow" waits 200 ms between message chunks.
// `session/cancel` aborts the running turn (sleeps and the pending permission
// request included; the SDK then sends `$/cancel_request` for it) and the turn
// ends with state_update(idle, cancelled). A turn that fails ends with
// state_update(idle, error) and the error.
//
// With --unstable, a prompt whose text contains "delegate" first runs a child
// session (a subagent, not cancellable by the client) between the plan_update
// and the echo: subagent_update announcing `sess_child_<turn>` on the parent,
// session_message to it (outgoing view on the parent, incoming on the child),
// then on the child: state_update(running, mirrored on the parent),
// agent_message_chunk x 2, session_message back to the parent,
// state_update(idle, end_turn, mirrored).
//
// Whatever the SDK prints through `console` (how it reports the messages it
// refuses or ignores: "Error handling notification", "Invalid message", ...)
// is copied to stderr as one line `[ts_agent] SDK console.<level>: ...`, so a
// test can demand that a client's run produced none.

import { randomUUID } from "node:crypto";
import { Readable, Writable } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { format } from "node:util";

const UNSTABLE = process.argv.slice(2).includes("--unstable");
const acp = await import(
  UNSTABLE ? "@agentclientprotocol/sdk/experimental/v2/unstable" : "@agentclientprotocol/sdk/experimental/v2"
);

const AGENT_INFO = {
  name: "acp-codegen-interop-ts-agent",
  title: "acp-codegen interop agent (TypeScript SDK)",
  version: "0.1.0",
};
const TOOL_CALL_ID = "call_001";
const SLOW_CHUNK_DELAY_MS = 200;

for (const level of ["error", "warn", "log", "info", "debug"]) {
  console[level] = (...args) => {
    process.stderr.write(`[ts_agent] SDK console.${level}: ${format(...args).replace(/\s+/g, " ").trim()}\n`);
  };
}

/** One stderr line per call (multi-line texts such as zod messages are flattened). */
function log(...args) {
  const text = args
    .map((a) => (typeof a === "string" ? a : a instanceof Error ? a.message : safeJson(a)))
    .join(" ")
    .replace(/\s+/g, " ");
  process.stderr.write(`[ts_agent] ${text}\n`);
}

/** @param {unknown} value */
function safeJson(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/**
 * Thrown inside a turn when it must stop because of `session/cancel` or a
 * `cancelled` permission outcome.
 */
class TurnCancelled extends Error {
  constructor(reason = "cancelled") {
    super(reason);
    this.name = "TurnCancelled";
  }
}

/**
 * @typedef {{ controller: AbortController }} Turn
 * @typedef {{ id: string, turns: number, active: Turn | null }} Session
 */

/** @type {Map<string, Session>} */
const sessions = new Map();

/**
 * Concatenates the text blocks of a prompt.
 * @param {ReadonlyArray<{type: string, text?: unknown}>} blocks
 */
function promptText(blocks) {
  return blocks
    .filter((b) => b && b.type === "text" && typeof b.text === "string")
    .map((b) => /** @type {string} */ (b.text))
    .join("\n");
}

/**
 * Splits the echo reply into at least three chunks whose concatenation is
 * `You said: <text>.`
 * @param {string} text
 */
function replyChunks(text) {
  const words = text.match(/\S+\s*/g) ?? [];
  return ["You said: ", ...(words.length > 0 ? words : ["(nothing)"]), "."];
}

/**
 * Runs one prompt turn. Resolves once the final idle state_update was sent.
 *
 * @param {acp.AgentContext} client
 * @param {Session} session
 * @param {number} turnNumber
 * @param {Array<any>} prompt
 * @param {string} userMessageId
 * @param {AbortSignal} signal
 */
async function runTurn(client, session, turnNumber, prompt, userMessageId, signal) {
  const sessionId = session.id;
  const text = promptText(prompt);
  const slow = text.includes("slow");
  const agentMessageId = `msg_agent_${turnNumber}`;
  /** @type {"none" | "open" | "final"} */
  let toolCall = "none";

  /** @param {Record<string, unknown>} update */
  const send = async (update) => {
    await client.notify("session/update", { sessionId, update });
  };
  const checkpoint = () => {
    if (signal.aborted) throw new TurnCancelled();
  };

  try {
    await send({ sessionUpdate: "user_message", messageId: userMessageId, content: prompt });
    await send({ sessionUpdate: "state_update", state: "running" });
    checkpoint();
    await send({
      sessionUpdate: "plan_update",
      plan: {
        type: "items",
        planId: `plan_${turnNumber}`,
        entries: [
          { content: "Echo the prompt back", priority: "high", status: "in_progress" },
          { content: "Run the echo tool (needs permission)", priority: "medium", status: "pending" },
          { content: "Report usage", priority: "low", status: "pending" },
        ],
      },
    });

    if (UNSTABLE && text.includes("delegate")) {
      await delegate(client, sessionId, turnNumber, text, checkpoint);
    }

    const chunks = replyChunks(text);
    for (let i = 0; i < chunks.length; i++) {
      if (i > 0 && slow) {
        await sleep(SLOW_CHUNK_DELAY_MS, undefined, { signal });
      }
      checkpoint();
      await send({
        sessionUpdate: "agent_message_chunk",
        messageId: agentMessageId,
        content: { type: "text", text: chunks[i] },
      });
    }
    checkpoint();

    const toolTitle = "Echo tool";
    await send({
      sessionUpdate: "tool_call_update",
      toolCallId: TOOL_CALL_ID,
      title: toolTitle,
      kind: "other",
      status: "pending",
      rawInput: { text },
    });
    toolCall = "open";
    await send({ sessionUpdate: "state_update", state: "requires_action" });

    const answer = await client.request(
      "session/request_permission",
      {
        sessionId,
        title: `Allow "${toolTitle}" to run?`,
        subject: {
          type: "tool_call",
          toolCall: { toolCallId: TOOL_CALL_ID, title: toolTitle, kind: "other", status: "pending" },
        },
        options: [
          { optionId: "allow-once", name: "Allow once", kind: "allow_once" },
          { optionId: "allow-always", name: "Always allow", kind: "allow_always" },
          { optionId: "reject-once", name: "Reject", kind: "reject_once" },
        ],
      },
      // Aborting the turn sends `$/cancel_request` for this request and
      // rejects it with -32800 right away.
      { cancellationSignal: signal, stopWaitingOnCancel: true },
    );
    log("permission outcome:", answer.outcome);
    checkpoint();

    const outcome = /** @type {{outcome: string, optionId?: string}} */ (answer.outcome);
    if (outcome.outcome !== "selected") {
      // `cancelled` (or anything unknown): the request was not approved.
      throw new TurnCancelled(`permission outcome ${outcome.outcome}`);
    }
    await send({ sessionUpdate: "state_update", state: "running" });
    const option = ["allow-once", "allow-always", "reject-once"].includes(outcome.optionId ?? "")
      ? outcome.optionId
      : undefined;
    if (!option || option === "reject-once") {
      await send({
        sessionUpdate: "tool_call_update",
        toolCallId: TOOL_CALL_ID,
        status: "failed",
        content: [
          { type: "content", content: { type: "text", text: "Permission was not granted." } },
        ],
      });
      toolCall = "final";
    } else {
      await send({ sessionUpdate: "tool_call_update", toolCallId: TOOL_CALL_ID, status: "in_progress" });
      checkpoint();
      await send({
        sessionUpdate: "tool_call_content_chunk",
        toolCallId: TOOL_CALL_ID,
        content: { type: "content", content: { type: "text", text: "Echoing..." } },
      });
      checkpoint();
      await send({
        sessionUpdate: "tool_call_update",
        toolCallId: TOOL_CALL_ID,
        status: "completed",
        content: [{ type: "content", content: { type: "text", text: `Echo: ${text}` } }],
        rawOutput: { echoed: text },
      });
      toolCall = "final";
    }
    checkpoint();
    await send({
      sessionUpdate: "usage_update",
      used: 1000 * turnNumber + text.length,
      size: 200000,
      cost: { amount: 0.0042 * turnNumber, currency: "USD" },
    });
    checkpoint();
    await send({ sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
    log(`turn ${turnNumber} of ${sessionId} ended: end_turn`);
  } catch (error) {
    const cancelled =
      signal.aborted ||
      error instanceof TurnCancelled ||
      (error instanceof acp.RequestError && error.code === -32800);
    if (!cancelled) {
      log(`turn ${turnNumber} of ${sessionId} failed:`, error);
    }
    try {
      if (toolCall === "open") {
        const status = cancelled ? "cancelled" : "failed";
        await send({ sessionUpdate: "tool_call_update", toolCallId: TOOL_CALL_ID, status });
      }
      const idle = cancelled
        ? { stopReason: "cancelled" }
        : { stopReason: "error", error: { code: -32603, message: "Internal error" } };
      await send({ sessionUpdate: "state_update", state: "idle", ...idle });
      log(`turn ${turnNumber} of ${sessionId} ended: ${idle.stopReason}`);
    } catch (sendError) {
      log("could not report idle:", sendError);
    }
  }
}

/**
 * A child session's whole piece of work, reported on the wire (see the header).
 *
 * @param {acp.AgentContext} client
 * @param {string} parentId
 * @param {number} turnNumber
 * @param {string} text
 * @param {() => void} checkpoint
 */
async function delegate(client, parentId, turnNumber, text, checkpoint) {
  const childId = `sess_child_${turnNumber}`;
  const on = async (sessionId, update) => client.notify("session/update", { sessionId, update });
  const mirror = (state) => on(parentId, { sessionUpdate: "subagent_update", sessionId: childId, state });
  await on(parentId, {
    sessionUpdate: "subagent_update",
    sessionId: childId,
    title: "Helper",
    description: "echoes in a child session",
    _meta: { "example.com/role": "helper" },
  });
  const out = `msg_out_${turnNumber}`;
  const incoming = `msg_in_${turnNumber}`;
  const task = [{ type: "text", text }];
  const link = { senderSessionId: parentId, recipientSessionId: childId };
  await on(parentId, { sessionUpdate: "session_message", messageId: out, ...link, recipientMessageId: incoming, content: task });
  await on(childId, { sessionUpdate: "session_message", messageId: incoming, ...link, senderMessageId: out, content: task });
  await on(childId, { sessionUpdate: "state_update", state: "running" });
  await mirror({ state: "running" });
  checkpoint();
  await on(childId, { sessionUpdate: "agent_message_chunk", messageId: "msg_child", content: { type: "text", text: "Child: " } });
  await on(childId, { sessionUpdate: "agent_message_chunk", messageId: "msg_child", content: { type: "text", text } });
  const back = { senderSessionId: childId, recipientSessionId: parentId };
  await on(childId, { sessionUpdate: "session_message", messageId: `msg_report_${turnNumber}`, ...back, content: [{ type: "text", text: "done" }] });
  await on(parentId, { sessionUpdate: "session_message", messageId: `msg_reported_${turnNumber}`, ...back, senderMessageId: `msg_report_${turnNumber}`, content: [{ type: "text", text: "done" }] });
  await on(childId, { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" });
  await mirror({ state: "idle", stopReason: "end_turn" });
}

const app = acp
  .agent({ name: "ts_agent" })
  .onRequest("initialize", ({ params }) => {
    log("initialize from", params.info, "protocolVersion", params.protocolVersion);
    return {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: AGENT_INFO,
      capabilities: { session: {} },
    };
  })
  .onRequest("session/new", ({ params }) => {
    const id = `sess_${randomUUID().replaceAll("-", "")}`;
    sessions.set(id, { id, turns: 0, active: null });
    log("session/new", id, "cwd", params.cwd);
    return { sessionId: id };
  })
  .onRequest("session/prompt", ({ params, client }) => {
    const session = sessions.get(params.sessionId);
    if (!session) {
      throw acp.RequestError.sessionNotFound(params.sessionId);
    }
    if (session.active) {
      throw acp.RequestError.invalidRequest(
        { sessionId: session.id },
        "this test agent runs one prompt at a time",
      );
    }
    const turnNumber = ++session.turns;
    const userMessageId = `msg_user_${turnNumber}`;
    const turn = { controller: new AbortController() };
    session.active = turn;
    // Start the turn only after the response below has been queued for writing,
    // so `{messageId}` precedes the turn's first session/update on the wire.
    setImmediate(() => {
      runTurn(client, session, turnNumber, params.prompt, userMessageId, turn.controller.signal)
        .catch((error) => log("turn crashed:", error instanceof Error ? error.stack : error))
        .finally(() => {
          if (session.active === turn) session.active = null;
        });
    });
    return { messageId: userMessageId };
  })
  .onNotification("session/cancel", ({ params }) => {
    const session = sessions.get(params.sessionId);
    if (session?.active) {
      log("session/cancel: aborting the running turn of", session.id);
      session.active.controller.abort(new TurnCancelled());
    } else {
      log("session/cancel for an idle or unknown session:", params.sessionId);
    }
  });

const stream = acp.ndJsonStream(Writable.toWeb(process.stdout), Readable.toWeb(process.stdin));
const connection = app.connect(stream);
log("ready");

connection.closed.then(() => {
  const reason = connection.signal.reason;
  const detail =
    reason instanceof Error && reason.message !== "ACP connection closed" ? `: ${reason.message}` : "";
  log(`connection closed${detail}`);
  for (const session of sessions.values()) session.active?.controller.abort();
  process.exit(0);
});
