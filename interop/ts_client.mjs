#!/usr/bin/env node
// ACP v2 test client built on the official TypeScript SDK
// (@agentclientprotocol/sdk 2.4.0, entry point "experimental/v2", or with
// --unstable "experimental/v2/unstable").
//
// usage: node ts_client.mjs [--unstable] [--prompt TEXT] [--cancel] [--sessions]
//                           [--timeout SECONDS] [--] AGENT_CMD [ARGS...]
//
// Spawns AGENT_CMD (stdin/stdout carry ACP, its stderr is passed through),
// runs initialize -> session/new -> session/prompt (text "hello" unless
// --prompt is given), answers each session/request_permission with the first
// option whose kind starts with "allow", records the `sessionUpdate` kind of
// every session/update in arrival order, and once the prompt was accepted and
// an idle state_update arrived prints exactly one line to stdout:
//
//   {"stopReason":"end_turn","updates":["user_message","state_update",...]}
//
// --cancel       send session/cancel right after the first agent_message_chunk
//                (of the prompt's session or of a child: the cancel is the parent's)
//                (permission requests are then answered `cancelled`), then
//                still wait for idle; the stop reason should be "cancelled".
// --sessions     after the turn, exercise the other baseline session methods
//                that `capabilities.session: {}` promises: session/list,
//                session/resume with `replayFrom: {"type": "start"}` (waiting
//                for the replay's state_update), session/close, session/list
//                again; adds to the line
//                "sessions": {"listed": [...], "replayed": [...], "afterClose": [...]}
//                (each listed session as "this" or "other", the replayed kinds).
// --timeout S    overall deadline in seconds (default 20).
// --unstable     speak through the SDK's unstable v2 entry point (its validators
//                know the unstable schema: subagent_update, session_message, ...).
//
// Updates of other sessions than the prompt's (an agent's child sessions,
// announced by a subagent_update) are not the turn's: their kinds are added to
// the line as "children": {"<sessionId>": [...]} (the key only when there are
// any), and only the prompt's session's idle state_update ends the turn.
//
// Strict, with no way to relax it: the run fails when the SDK refuses the
// session/prompt result (e.g. no `messageId`), when it drops a session/update
// its validators refuse (found by comparing the raw incoming stream with what
// it delivered), and when the SDK prints anything on the console before the
// result is decided ("Error handling notification", "Got response to unknown
// request", ...: the SDK reports what it ignores only there). Each console
// line is also copied to stderr as `ts_client: SDK console.<level>: ...`.
//
// Exit status 0 on success; otherwise 1 (2 for bad usage) with a one-line
// error on stderr.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { format } from "node:util";

/** Whether --unstable is among this script's own options (before AGENT_CMD). */
function wantsUnstable(argv) {
  for (let i = 0; i < argv.length && argv[i].startsWith("--") && argv[i] !== "--"; i++) {
    if (argv[i] === "--unstable") return true;
    if (argv[i] === "--prompt" || argv[i] === "--timeout") i++; // skip the value
  }
  return false;
}

const UNSTABLE = wantsUnstable(process.argv.slice(2));
const acp = await import(
  UNSTABLE ? "@agentclientprotocol/sdk/experimental/v2/unstable" : "@agentclientprotocol/sdk/experimental/v2"
);

const USAGE =
  "usage: ts_client.mjs [--unstable] [--prompt TEXT] [--cancel] [--sessions] [--timeout SECONDS] [--] AGENT_CMD [ARGS...]";

/**
 * Everything the SDK prints through `console` (it has no other channel for
 * the messages it refuses or ignores). This script itself never uses
 * `console`: it writes to process.stderr directly.
 * @type {string[]}
 */
const sdkConsole = [];
for (const level of ["error", "warn", "log", "info", "debug"]) {
  console[level] = (...args) => {
    const text = format(...args).replace(/\s+/g, " ").trim();
    sdkConsole.push(`console.${level}: ${text}`);
    process.stderr.write(`ts_client: SDK console.${level}: ${text}\n`);
  };
}

/** One-line, bounded text for error reports. */
function oneLine(text, max = 600) {
  const flat = String(text).replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}

/** @param {unknown} error */
function describeError(error) {
  if (error instanceof acp.RequestError) {
    const data = error.data === undefined ? "" : ` data=${safeJson(error.data)}`;
    return `JSON-RPC error ${error.code}: ${error.message}${data}`;
  }
  if (isZodError(error)) {
    const issues = error.issues
      .map((issue) => `${issue.path.length ? issue.path.join(".") : "(root)"}: ${issue.message}`)
      .join("; ");
    return `SDK validation failed: ${issues}`;
  }
  if (error instanceof Error) return error.message;
  return safeJson(error);
}

/** @param {unknown} error @returns {error is {issues: Array<{path: Array<string|number>, message: string}>}} */
function isZodError(error) {
  return (
    typeof error === "object" &&
    error !== null &&
    /** @type {any} */ (error).name === "ZodError" &&
    Array.isArray(/** @type {any} */ (error).issues)
  );
}

function safeJson(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

function parseArgs(argv) {
  const options = { prompt: "hello", cancel: false, sessions: false, timeoutSeconds: 20 };
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
      options.cancel = true;
    } else if (arg === "--sessions") {
      options.sessions = true;
    } else if (arg === "--unstable") {
      // read before the SDK was imported (UNSTABLE)
    } else if (arg === "--timeout") {
      const value = Number(argv[++i]);
      if (!(value > 0)) throw new UsageError("--timeout needs a positive number of seconds");
      options.timeoutSeconds = value;
    } else if (arg === "-h" || arg === "--help") {
      process.stdout.write(`${USAGE}\n`);
      process.exit(0);
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

class UsageError extends Error {}

function deferred() {
  let resolve, reject;
  const promise = new Promise((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`ts_client: error: ${error.message}\n${USAGE}\n`);
    process.exit(2);
  }

  const [cmd, ...cmdArgs] = options.command;
  const child = spawn(cmd, cmdArgs, { stdio: ["pipe", "pipe", "inherit"] });
  const childExited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));

  /** Settles the whole run: resolve with the result line, reject on failure. */
  const done = deferred();
  child.once("error", (error) => done.reject(new Error(`cannot start agent ${safeJson(cmd)}: ${error.message}`)));
  child.once("exit", (code, signal) =>
    done.reject(new Error(`agent exited (${signal ?? `code ${code}`}) before the turn ended`)),
  );
  // Writes to a dead agent must fail the run, not crash the process.
  child.stdin.on("error", () => {});

  const state = {
    /** kinds of the session/update notifications the SDK delivered */
    updates: /** @type {string[]} */ ([]),
    /** kinds of every session/update seen on the wire, valid or not */
    rawUpdates: /** @type {string[]} */ ([]),
    /** kinds delivered for other sessions (children), by session id */
    children: /** @type {Record<string, string[]>} */ ({}),
    /** every kind the SDK delivered, whatever the session (for the dropped-update check) */
    delivered: /** @type {string[]} */ ([]),
    sessionId: /** @type {string | undefined} */ (undefined),
    promptSent: false,
    promptAccepted: false,
    idleAfterPrompt: false,
    stopReason: /** @type {unknown} */ (null),
    cancelSent: false,
    /** set once the turn is decided; later notifications are not part of it */
    finished: false,
    /** kinds of the updates a `--sessions` resume replays, once it was sent */
    replay: /** @type {string[] | null} */ (null),
    replayDone: deferred(),
    /** @type {acp.ClientContext | undefined} */
    agent: undefined,
  };

  const timer = setTimeout(
    () => done.reject(new Error(`timeout after ${options.timeoutSeconds}s (updates so far: ${safeJson(state.updates)})`)),
    options.timeoutSeconds * 1000,
  );

  const maybeFinish = () => {
    if (state.promptAccepted && state.idleAfterPrompt && !state.finished) {
      state.finished = true;
      done.resolve();
    }
  };

  const sendCancel = () => {
    if (state.cancelSent || !state.agent || !state.sessionId) return;
    state.cancelSent = true;
    state.agent
      .notify("session/cancel", { sessionId: state.sessionId })
      .catch((error) => done.reject(new Error(`cannot send session/cancel: ${describeError(error)}`)));
  };

  // Tap the raw incoming messages: the SDK drops session/update notifications
  // that fail its validators before any handler sees them, and we want to
  // report that instead of silently missing updates.
  const wire = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const tapped = {
    writable: wire.writable,
    readable: wire.readable.pipeThrough(
      new TransformStream({
        transform(message, controller) {
          const m = /** @type {any} */ (message);
          if (!state.finished && m && m.method === "session/update" && !("id" in m)) {
            const kind = m.params?.update?.sessionUpdate;
            state.rawUpdates.push(typeof kind === "string" ? kind : safeJson(kind));
          }
          controller.enqueue(message);
        },
      }),
    ),
  };

  const app = acp
    .client({ name: "ts_client" })
    .onRequest("session/request_permission", ({ params }) => {
      if (state.cancelSent) {
        return { outcome: { outcome: "cancelled" } };
      }
      const option = params.options.find((o) => typeof o.kind === "string" && o.kind.startsWith("allow"));
      if (!option) {
        process.stderr.write("ts_client: warning: no allow* option offered; answering cancelled\n");
        return { outcome: { outcome: "cancelled" } };
      }
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    })
    .onNotification("session/update", ({ params }) => {
      const update = /** @type {any} */ (params.update);
      const kind = update.sessionUpdate;
      if (!state.finished) state.delivered.push(kind);
      if (state.sessionId !== undefined && params.sessionId !== state.sessionId) {
        if (!state.finished) (state.children[params.sessionId] ??= []).push(kind);
        if (options.cancel && kind === "agent_message_chunk") sendCancel(); // the parent's
        return;
      }
      if (state.finished) {
        if (state.replay) {
          state.replay.push(kind);
          if (kind === "state_update") state.replayDone.resolve();
        }
        return;
      }
      state.updates.push(kind);
      if (options.cancel && kind === "agent_message_chunk") sendCancel();
      if (kind === "state_update" && update.state === "idle" && state.promptSent && !state.idleAfterPrompt) {
        // The first idle after the prompt was sent ends the turn.
        state.idleAfterPrompt = true;
        state.stopReason = update.stopReason ?? null;
        maybeFinish();
      }
    });

  const run = app.connectWith(tapped, async (agent) => {
    state.agent = agent;
    await agent.request("initialize", {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: "acp-codegen-interop-ts-client", version: "0.1.0" },
      capabilities: {},
    });
    const session = await agent.request("session/new", { cwd: process.cwd(), mcpServers: [] });
    state.sessionId = session.sessionId;
    state.promptSent = true;
    try {
      await agent.request("session/prompt", {
        sessionId: session.sessionId,
        prompt: [{ type: "text", text: options.prompt }],
      });
    } catch (error) {
      // A ZodError means the agent answered with a result the SDK refused
      // (e.g. `{}` without `messageId`); a RequestError means the agent
      // answered with an error.
      throw new Error(`session/prompt: ${describeError(error)}`);
    }
    state.promptAccepted = true;
    maybeFinish();
    await done.promise;
    if (options.sessions) {
      try {
        sessions.resolve(await exerciseSessions(agent, session.sessionId, state));
      } catch (error) {
        sessions.reject(new Error(`sessions: ${describeError(error)}`));
      }
    }
  });
  run.catch((error) => done.reject(error));
  /** The `--sessions` result, settled after the turn. */
  const sessions = deferred();

  try {
    await done.promise;
    const extra = options.sessions ? { sessions: await sessions.promise } : {};
    // Let notifications already read finish their trip through the SDK.
    await new Promise((resolve) => setImmediate(resolve));
    const rejected = notDelivered(state.rawUpdates, state.delivered);
    if (rejected.length > 0) {
      throw new Error(`the SDK rejected ${rejected.length} session/update notification(s) of kind ${safeJson(rejected)}`);
    }
    if (sdkConsole.length > 0) {
      throw new Error(`the SDK printed ${sdkConsole.length} message(s) about the agent's messages, first: ${sdkConsole[0]}`);
    }
    const children = Object.keys(state.children).length > 0 ? { children: state.children } : {};
    const line = JSON.stringify({ stopReason: state.stopReason, updates: state.updates, ...children, ...extra });
    await new Promise((resolve) => process.stdout.write(`${line}\n`, resolve));
    await shutdown(child, childExited, timer);
    process.exit(0);
  } catch (error) {
    let message = describeError(error);
    // A dead agent usually surfaces first as a broken pipe or a closed
    // connection; name the real cause when the agent is gone.
    const exit = await Promise.race([childExited, new Promise((resolve) => setTimeout(resolve, 200, null))]);
    if (exit && !message.startsWith("agent exited")) {
      message = `agent exited (${exit.signal ?? `code ${exit.code}`}) before the turn ended: ${message}`;
    }
    process.stderr.write(`ts_client: error: ${oneLine(message)}\n`);
    await shutdown(child, childExited, timer);
    process.exit(1);
  }
}

/**
 * list, resume (replay from the start, up to its state_update), close, list.
 * @param {acp.ClientContext} agent
 * @param {string} sessionId
 * @param {{replay: string[] | null, replayDone: {promise: Promise<unknown>}}} state
 */
async function exerciseSessions(agent, sessionId, state) {
  const which = (list) => list.sessions.map((s) => (s.sessionId === sessionId ? "this" : "other"));
  const listed = which(await agent.request("session/list", {}));
  state.replay = [];
  await agent.request("session/resume", { sessionId, cwd: process.cwd(), replayFrom: { type: "start" } });
  await state.replayDone.promise; // the SDK delivers the replay after resolving the request
  await agent.request("session/close", { sessionId });
  const afterClose = which(await agent.request("session/list", {}));
  return { listed, replayed: state.replay, afterClose };
}

/**
 * Kinds in `raw` (wire order) that the SDK did not deliver. `delivered` is a
 * subsequence of `raw` because the SDK handles notifications in order; raw
 * entries after the last delivered one may simply not have been handled yet
 * when the run ended, so they are not counted.
 */
function notDelivered(raw, delivered) {
  const missing = [];
  let j = 0;
  for (const kind of raw) {
    if (j === delivered.length) break;
    if (delivered[j] === kind) j++;
    else missing.push(kind);
  }
  return missing;
}

/** Closes the agent's stdin, then terminates it if it does not exit soon. */
async function shutdown(child, childExited, timer) {
  clearTimeout(timer);
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  child.stdin.end();
  const grace = (ms) => new Promise((resolve) => setTimeout(resolve, ms).unref());
  if (await Promise.race([childExited.then(() => true), grace(2000).then(() => false)])) return;
  child.kill("SIGTERM");
  if (await Promise.race([childExited.then(() => true), grace(1000).then(() => false)])) return;
  child.kill("SIGKILL");
}

main().catch((error) => {
  process.stderr.write(`ts_client: error: ${oneLine(describeError(error))}\n`);
  process.exit(1);
});
