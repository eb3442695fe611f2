#!/usr/bin/env node
// Wire-level probe of @agentclientprotocol/sdk 2.4.0 (experimental/v2): the
// evidence behind DIFFERENCES.md. It talks raw newline-delimited JSON to the
// SDK on both sides and prints what the SDK sends back:
//
//   A. raw client  -> ts_agent.mjs   (SDK agent side)
//   B. fake agent  -> ts_client.mjs  (SDK client side; the fake agent is this
//      file run as `probe_sdk.mjs --fake-agent SCENARIO`)
//   C. the SDK's own zod validators (imported by file path, they are not in the
//      package's "exports") applied to alpha.3 payloads: targeted cases, plus
//      every v2 documentation example of the acp-examples corpus when found
//      (default /work/shared/acp-examples, or --examples DIR).
//
// usage: node interop/probe_sdk.mjs [--only SUBSTRING] [--examples DIR]
// Output is a human-readable report on stdout; exit status 0 unless the probe
// itself breaks. It asserts nothing: it records behaviour.

import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const AGENT = join(here, "ts_agent.mjs");
const CLIENT = join(here, "ts_client.mjs");
const SELF = fileURLToPath(import.meta.url);

// ---------------------------------------------------------------------------
// B-side fake agent (runs in a child process spawned by ts_client.mjs)
// ---------------------------------------------------------------------------

/**
 * Scenarios for the fake alpha.3-style agent. Each entry may override how the
 * fake agent answers initialize / session/prompt and which updates it sends.
 * `updates` are bare SessionUpdate objects; the fake agent wraps them.
 */
const ALPHA3_TURN = [
  { sessionUpdate: "user_message", messageId: "msg_user_1", content: [{ type: "text", text: "hello" }] },
  { sessionUpdate: "state_update", state: "running" },
  { sessionUpdate: "agent_message_chunk", messageId: "msg_agent_1", content: { type: "text", text: "hi" } },
  { sessionUpdate: "state_update", state: "idle", stopReason: "end_turn" },
];

const FAKE_AGENT_SCENARIOS = {
  // alpha.3 says the prompt is answered `{}`.
  "prompt-result-empty": { promptResult: {} },
  "prompt-result-messageId": { promptResult: { messageId: "msg_user_1" } },
  "prompt-result-null": { promptResult: null },
  "init-protocol-1": { initResult: { protocolVersion: 1 } },
  "init-protocol-3": { initResult: { protocolVersion: 3 } },
  "init-missing-info": { initResult: { info: undefined } },
  "no-jsonrpc-field": { omitJsonrpc: true },
  "string-id-echo": { stringifyIds: true },
  "unknown-fields-everywhere": {
    initResult: { futureField: 1, capabilities: { session: {}, futureCap: {} } },
    promptResult: { messageId: "msg_user_1", extra: true },
    updates: [
      { ...ALPHA3_TURN[0], extra: { a: 1 } },
      { ...ALPHA3_TURN[1], extra: 1 },
      { ...ALPHA3_TURN[2], extra: "x" },
      { ...ALPHA3_TURN[3], extra: null },
    ],
  },
  "unknown-update-kinds": {
    updates: [
      ALPHA3_TURN[0],
      { sessionUpdate: "_vendor_progress", percent: 50 },
      { sessionUpdate: "future_kind", payload: { x: 1 } },
      ALPHA3_TURN[1],
      ALPHA3_TURN[3],
    ],
  },
  "broken-known-update": {
    updates: [
      ALPHA3_TURN[0],
      // agent_message_chunk without messageId: known tag, broken payload
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } },
      // usage_update with negative `used`
      { sessionUpdate: "usage_update", used: -1, size: 10 },
      ALPHA3_TURN[3],
    ],
  },
  "alpha3-available-commands": {
    updates: [
      ALPHA3_TURN[0],
      // alpha.3 AvailableCommand has no `type`; the SDK draft requires type "command"
      { sessionUpdate: "available_commands_update", availableCommands: [{ name: "web", description: "Search" }] },
      ALPHA3_TURN[3],
    ],
  },
  "stop-reasons": {
    updates: [
      ALPHA3_TURN[0],
      { sessionUpdate: "state_update", state: "idle", stopReason: "_custom_reason" },
      { sessionUpdate: "state_update", state: "idle", stopReason: "error", error: { code: -32603, message: "boom" } },
      { sessionUpdate: "state_update", state: "idle", stopReason: 42 },
      { sessionUpdate: "state_update", state: "idle" },
      { sessionUpdate: "state_update", state: "paused_by_future" },
      ALPHA3_TURN[3],
    ],
  },
  "plan-alpha3-lenient-entries": {
    updates: [
      ALPHA3_TURN[0],
      // alpha.3 marks PlanItems.entries default-on-error: a non-list decodes as []
      { sessionUpdate: "plan_update", plan: { type: "items", planId: "p1", entries: "oops" } },
      { sessionUpdate: "plan_update", plan: { type: "file", planId: "p2", path: "/tmp/plan.md" } },
      ALPHA3_TURN[3],
    ],
  },
  "agent-requests": {
    // requests from the fake agent to the SDK client, answers logged
    extraRequests: [
      { id: "r-unknown", method: "fs/read_text_file", params: { sessionId: "sess_1", path: "/x" } },
      { id: "r-ext", method: "_vendor/thing", params: {} },
      { id: null, method: "session/request_permission", params: {} },
      { id: 7.5, method: "session/request_permission", params: {} },
      {
        id: "r-perm-bad",
        method: "session/request_permission",
        params: { sessionId: "sess_1", title: "t", options: [] },
      },
      {
        id: "r-perm",
        method: "session/request_permission",
        params: {
          sessionId: "sess_1",
          title: "t",
          options: [
            { optionId: "no", name: "No", kind: "reject_once" },
            { optionId: "yes", name: "Yes", kind: "allow_once" },
          ],
        },
      },
    ],
    extraRaw: ['[{"jsonrpc":"2.0","method":"session/update","params":{}}]', "{not json"],
  },
  "batch-updates": {
    batch: true,
  },
};

async function runFakeAgent(name) {
  const scenario = FAKE_AGENT_SCENARIOS[name];
  const logPath = process.env.PROBE_LOG;
  const record = (line) => {
    // append synchronously so the parent can read it after we exit
    if (logPath) appendFileSync(logPath, `${line}\n`);
  };
  const write = (obj) => {
    const msg = { ...obj };
    if (scenario.omitJsonrpc) delete msg.jsonrpc;
    if (scenario.stringifyIds && typeof msg.id === "number") msg.id = String(msg.id);
    process.stdout.write(`${JSON.stringify(msg)}\n`);
  };
  const respond = (id, result) => write({ jsonrpc: "2.0", id, result });
  const notify = (update) =>
    write({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "sess_1", update } });

  const rl = createInterface({ input: process.stdin });
  for await (const line of rl) {
    record(line);
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      continue;
    }
    if (msg.method === "initialize") {
      const result = {
        protocolVersion: 2,
        info: { name: "fake-alpha3-agent", version: "0" },
        capabilities: { session: {} },
        ...(scenario.initResult ?? {}),
      };
      respond(msg.id, result);
    } else if (msg.method === "session/new") {
      respond(msg.id, { sessionId: "sess_1" });
    } else if (msg.method === "session/prompt") {
      const result = "promptResult" in scenario ? scenario.promptResult : { messageId: "msg_user_1" };
      respond(msg.id, result);
      for (const request of scenario.extraRequests ?? []) {
        write({ jsonrpc: "2.0", ...request });
      }
      for (const raw of scenario.extraRaw ?? []) process.stdout.write(`${raw}\n`);
      if (scenario.extraRequests || scenario.extraRaw) {
        await new Promise((resolve) => setTimeout(resolve, 300));
      }
      const updates = scenario.updates ?? ALPHA3_TURN;
      if (scenario.batch) {
        process.stdout.write(
          `${JSON.stringify(updates.map((update) => ({ jsonrpc: "2.0", method: "session/update", params: { sessionId: "sess_1", update } })))}\n`,
        );
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      for (const update of updates) notify(update);
    }
  }
}

// ---------------------------------------------------------------------------
// A-side: raw client against the SDK agent (ts_agent.mjs)
// ---------------------------------------------------------------------------

/**
 * Spawns ts_agent.mjs, writes `lines` (strings or objects) one by one, waiting
 * `gapMs` between them, collects everything the agent writes for `settleMs`
 * after the last line, and returns the parsed output lines.
 * A line may also be a function `(received) => line|undefined` so a step can
 * answer something the agent sent (e.g. echo a permission request id).
 */
async function talkToSdkAgent(lines, { gapMs = 60, settleMs = 400 } = {}) {
  const child = spawn(process.execPath, [AGENT], { stdio: ["pipe", "pipe", "pipe"] });
  const received = [];
  const stderr = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    try {
      received.push(JSON.parse(line));
    } catch {
      received.push({ unparsable: line });
    }
  });
  createInterface({ input: child.stderr }).on("line", (line) => stderr.push(line));
  const waitUntil = async (predicate, timeoutMs) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate() && Date.now() < deadline) await sleep(10);
  };
  // Wait until the agent is listening, so nothing below races its startup.
  await waitUntil(() => stderr.some((l) => l.includes("[ts_agent] ready")), 5000);
  for (const item of lines) {
    const value = typeof item === "function" ? item(received) : item;
    if (value !== undefined) {
      child.stdin.write(`${typeof value === "string" ? value : JSON.stringify(value)}\n`);
    }
    // A request waits for its response: the SDK agent rejects any request
    // sent while `initialize` is still in flight.
    const isRequest = value && typeof value === "object" && !Array.isArray(value) && "method" in value && "id" in value;
    if (isRequest) {
      await waitUntil(() => received.some((m) => !("method" in m) && m.id === value.id), 1000);
    }
    await sleep(gapMs);
  }
  await sleep(settleMs);
  child.stdin.end();
  await new Promise((resolve) => child.once("exit", resolve));
  return { received, stderr };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const INIT = {
  jsonrpc: "2.0",
  id: 0,
  method: "initialize",
  params: { protocolVersion: 2, info: { name: "raw", version: "0" }, capabilities: {} },
};
const NEW = { jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/tmp", mcpServers: [] } };
const sessionIdOf = (received) => received.find((m) => m.id === 1 && m.result)?.result?.sessionId;
const prompt = (text, id = 2) => (received) => ({
  jsonrpc: "2.0",
  id,
  method: "session/prompt",
  params: { sessionId: sessionIdOf(received), prompt: [{ type: "text", text }] },
});

const AGENT_SIDE = {
  "A1 initialize protocolVersion 2 (alpha.3 number)": [INIT],
  "A2 initialize protocolVersion 1": [{ ...INIT, params: { ...INIT.params, protocolVersion: 1 } }],
  "A3 initialize protocolVersion 3 (newer than SDK)": [{ ...INIT, params: { ...INIT.params, protocolVersion: 3 } }],
  "A4 initialize without info (alpha.3 requires it too)": [
    { ...INIT, params: { protocolVersion: 2, capabilities: {} } },
  ],
  "A5 initialize with unknown fields": [
    { ...INIT, params: { ...INIT.params, futureField: true, capabilities: { futureCap: {} } } },
  ],
  "A6 request before initialize": [NEW],
  "A7 request without jsonrpc member": [{ id: 0, method: "initialize", params: INIT.params }],
  "A8 request with id null": [{ ...INIT, id: null }],
  "A9 request with id 1.5": [{ ...INIT, id: 1.5 }],
  "A10 request with string id": [{ ...INIT, id: "init-1" }],
  "A11 JSON-RPC batch": [[INIT]],
  "A12 unparsable line": ["{oops"],
  "A13 unknown method / extension method / unknown notification": [
    INIT,
    { jsonrpc: "2.0", id: 5, method: "session/set_mode", params: {} },
    { jsonrpc: "2.0", id: 6, method: "_vendor/ping", params: {} },
    { jsonrpc: "2.0", method: "_vendor/note", params: {} },
    { jsonrpc: "2.0", method: "session/unknown_notification", params: {} },
  ],
  "A14 session/prompt with empty prompt array (alpha.3 allows it)": [
    INIT,
    NEW,
    (received) => ({
      jsonrpc: "2.0",
      id: 2,
      method: "session/prompt",
      params: { sessionId: sessionIdOf(received), prompt: [] },
    }),
  ],
  "A15 session/new with invalid mcpServers item (alpha.3 skips invalid items)": [
    INIT,
    { jsonrpc: "2.0", id: 1, method: "session/new", params: { cwd: "/tmp", mcpServers: [{ bogus: true }] } },
  ],
  "A16 session/prompt for unknown session": [
    INIT,
    { jsonrpc: "2.0", id: 2, method: "session/prompt", params: { sessionId: "nope", prompt: [{ type: "text", text: "x" }] } },
  ],
  "A17 full turn, permission answered allow (string ids from the client)": [
    INIT,
    NEW,
    prompt("hello"),
    (received) => {
      const req = received.find((m) => m.method === "session/request_permission");
      return req && { jsonrpc: "2.0", id: req.id, result: { outcome: { outcome: "selected", optionId: "allow-once" } } };
    },
  ],
  "A18 session/cancel while the permission request is pending": [
    INIT,
    NEW,
    prompt("hello"),
    (received) => ({ jsonrpc: "2.0", method: "session/cancel", params: { sessionId: sessionIdOf(received) } }),
    (received) => {
      const req = received.find((m) => m.method === "session/request_permission");
      return req && { jsonrpc: "2.0", id: req.id, result: { outcome: { outcome: "cancelled" } } };
    },
  ],
  "A19 permission answered with a result the SDK rejects (outcome missing)": [
    INIT,
    NEW,
    prompt("hello"),
    (received) => {
      const req = received.find((m) => m.method === "session/request_permission");
      return req && { jsonrpc: "2.0", id: req.id, result: {} };
    },
  ],
  "A20 $/cancel_request for the in-flight session/prompt": [
    INIT,
    NEW,
    prompt("slow hello"),
    { jsonrpc: "2.0", method: "$/cancel_request", params: { requestId: 2 } },
  ],
};

// ---------------------------------------------------------------------------
// B-side: fake agent behind ts_client.mjs (SDK client side)
// ---------------------------------------------------------------------------

async function runClientAgainstFake(name, clientArgs = []) {
  const dir = mkdtempSync(join(tmpdir(), "acp-probe-"));
  const logPath = join(dir, "client-to-agent.ndjson");
  const child = spawn(
    process.execPath,
    [CLIENT, "--timeout", "3", ...clientArgs, process.execPath, SELF, "--fake-agent", name],
    { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, PROBE_LOG: logPath } },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => (stdout += d));
  child.stderr.on("data", (d) => (stderr += d));
  const code = await new Promise((resolve) => child.once("exit", resolve));
  await sleep(50);
  let sent = [];
  try {
    sent = readFileSync(logPath, "utf8").split("\n").filter(Boolean);
  } catch {
    /* the agent may not have received anything */
  }
  rmSync(dir, { recursive: true, force: true });
  return { code, stdout: stdout.trim(), stderr: stderr.trim(), sent };
}


// ---------------------------------------------------------------------------
// C: the SDK's validators applied to alpha.3 payloads
// ---------------------------------------------------------------------------

const ZOD_GEN = new URL("./node_modules/@agentclientprotocol/sdk/dist/v2/schema/zod.gen.js", import.meta.url);

/** [zod export, value, what it shows] */
const VALIDATOR_CASES = [
  ["zPromptResponse", {}, "alpha.3 PromptResponse `{}`"],
  ["zPromptResponse", { messageId: "m1" }, "PromptResponse with messageId (also valid alpha.3: objects are open)"],
  ["zPromptRequest", { sessionId: "s", prompt: [] }, "empty prompt (alpha.3 has no minItems)"],
  ["zInitializeResponse", { protocolVersion: 2, info: { name: "a", version: "1" } }, "minimal InitializeResponse"],
  ["zInitializeResponse", { protocolVersion: 2, info: { name: "a", version: "1" }, capabilities: { session: 5 } }, "bad capability salvaged"],
  ["zStateUpdate", { state: "idle", stopReason: "end_turn" }, "idle end_turn"],
  ["zStateUpdate", { state: "idle" }, "idle without stopReason"],
  ["zStateUpdate", { state: "idle", stopReason: null }, "idle stopReason null"],
  ["zStateUpdate", { state: "idle", stopReason: "_custom" }, "custom stop reason"],
  ["zStateUpdate", { state: "idle", stopReason: "future_reason", extra: 1 }, "unknown stop reason with extra field"],
  ["zStateUpdate", { state: "idle", stopReason: 42 }, "non-string stopReason (alpha.3: default-on-error)"],
  ["zStateUpdate", { state: "idle", stopReason: "error" }, "draft-only `error` stop reason, no error object"],
  ["zStateUpdate", { state: "idle", stopReason: "error", error: { code: 1, message: "x" } }, "draft-only `error` stop reason with error"],
  ["zStateUpdate", { state: "running", background: "junk" }, "draft-only `background`, malformed"],
  ["zStateUpdate", { state: "paused_by_future" }, "unknown state"],
  ["zStateUpdate", { state: "running", extra: 1 }, "unknown field on a known state"],
  ["zSessionUpdate", { sessionUpdate: "future_kind", a: { b: 1 } }, "unknown sessionUpdate kind"],
  ["zSessionUpdate", { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "x" } }, "known kind, missing messageId"],
  ["zSessionUpdate", { sessionUpdate: "agent_message_chunk", messageId: "m", content: { type: "future_block", x: 1 } }, "unknown content block type"],
  ["zSessionUpdate", { sessionUpdate: "agent_message", messageId: "m", content: null }, "agent_message content null (clear)"],
  ["zSessionUpdate", { sessionUpdate: "agent_message", messageId: "m", content: [{ type: "text" }, { type: "text", text: "ok" }] }, "agent_message with one invalid item"],
  ["zSessionUpdate", { sessionUpdate: "plan_update", plan: { type: "items", planId: "p", entries: "oops" } }, "PlanItems.entries not a list (alpha.3: default-on-error)"],
  ["zSessionUpdate", { sessionUpdate: "plan_update", plan: { type: "items", planId: "p", entries: [{ content: "c", priority: "high", status: "pending" }, { bad: 1 }] } }, "PlanItems.entries with an invalid item"],
  ["zSessionUpdate", { sessionUpdate: "plan_update", plan: { type: "file", planId: "p" } }, "plan type `file` (reserved in alpha.3, not in the draft)"],
  ["zSessionUpdate", { sessionUpdate: "available_commands_update", availableCommands: [{ name: "web", description: "d" }] }, "alpha.3 AvailableCommand (no `type`)"],
  ["zSessionUpdate", { sessionUpdate: "available_commands_update", availableCommands: "oops" }, "availableCommands not a list (alpha.3: default-on-error)"],
  ["zSessionUpdate", { sessionUpdate: "tool_call_update", toolCallId: "c", status: "paused" }, "draft-only tool status `paused`"],
  ["zSessionUpdate", { sessionUpdate: "tool_call_update", toolCallId: "c", locations: [{ path: "/a", line: 0 }] }, "ToolCallLocation.line 0 (alpha.3 minimum 0, draft minimum 1)"],
  ["zSessionUpdate", { sessionUpdate: "tool_call_update", toolCallId: "c", status: 7, title: 8 }, "malformed optional fields"],
  ["zSessionUpdate", { sessionUpdate: "usage_update", used: 1, size: 2, cost: { amount: 1, currency: "usd" } }, "currency not ^[A-Z]{3}$"],
  ["zSessionUpdate", { sessionUpdate: "usage_update", used: 1.5, size: 2 }, "non-integer used"],
  ["zSessionUpdate", { sessionUpdate: "usage_update", used: true, size: 2 }, "boolean used"],
  ["zSessionUpdate", { sessionUpdate: "usage_update", used: 1, size: 2, cost: { amount: 1 } }, "cost without currency (alpha.3: default-on-error)"],
  ["zRequestPermissionResponse", { outcome: { outcome: "cancelled" } }, "cancelled outcome"],
  ["zRequestPermissionResponse", { outcome: { outcome: "selected" } }, "selected without optionId"],
  ["zRequestPermissionResponse", { outcome: { outcome: "_later", x: 1 } }, "unknown outcome"],
  ["zRequestPermissionRequest", { sessionId: "s", title: "t", options: [{ optionId: "o", name: "n", kind: "allow_once" }] }, "minimal permission request"],
  ["zError", { code: -32022, message: "m", data: { requested: 1, supported: [2] } }, "draft-only error code -32022"],
  ["zNewSessionRequest", { cwd: "/x", mcpServers: null }, "mcpServers null (draft: default-on-null)"],
  ["zNewSessionRequest", { cwd: "/x", mcpServers: [{ bogus: 1 }] }, "invalid mcpServers item (alpha.3: skip-invalid-items)"],
  ["zNewSessionResponse", { sessionId: "s", configOptions: "oops" }, "configOptions not a list"],
];

function summarizeIssues(error) {
  return error.issues
    .map((i) => `${i.path.length ? i.path.join(".") : "(root)"}: ${i.message}`)
    .join("; ");
}

/** Keys present in `input` but absent from `output`, as JSON paths. */
function droppedKeys(input, output, path = "$") {
  const out = [];
  if (input && typeof input === "object" && output && typeof output === "object") {
    if (Array.isArray(input)) {
      if (!Array.isArray(output)) return out;
      if (input.length !== output.length) out.push(`${path} (length ${input.length} -> ${output.length})`);
      input.forEach((v, i) => i < output.length && out.push(...droppedKeys(v, output[i], `${path}[${i}]`)));
    } else {
      for (const key of Object.keys(input)) {
        if (!(key in output)) out.push(`${path}.${key}`);
        else out.push(...droppedKeys(input[key], output[key], `${path}.${key}`));
      }
    }
  }
  return out;
}

/** JSON with object keys sorted, so key order does not count as a change. */
function canonical(value) {
  return JSON.stringify(value, (_key, v) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, v[k]]))
      : v,
  );
}

function describeParse(validator, value) {
  const result = validator.safeParse(value);
  if (!result.success) return `REJECTED  ${summarizeIssues(result.error)}`;
  const dropped = droppedKeys(value, result.data);
  const changed = canonical(result.data) !== canonical(value) && dropped.length === 0;
  return `accepted${dropped.length ? `  dropped: ${dropped.join(", ")}` : ""}${changed ? `  parsed as ${JSON.stringify(result.data)}` : ""}`;
}

async function validatorSection(examplesDir, show) {
  const z = await import(ZOD_GEN.href);
  console.log("# C. SDK validators (dist/v2/schema/zod.gen.js) on alpha.3 payloads\n");
  for (const [name, value, note] of VALIDATOR_CASES) {
    if (!show(`${name} ${note}`)) continue;
    console.log(`- ${name} ${JSON.stringify(value)}  (${note})\n    -> ${describeParse(z[name], value)}`);
  }
  console.log();
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(examplesDir, "manifest.json"), "utf8"));
  } catch {
    console.log(`(no acp-examples corpus at ${examplesDir}; skipped)\n`);
    return;
  }
  console.log(`## alpha.3 v2 documentation examples from ${examplesDir}\n`);
  let accepted = 0;
  let total = 0;
  for (const entry of manifest.files) {
    if (entry.version !== "v2" || entry.schema_family !== "v2" || !entry.typed_def || entry.partial_of) continue;
    if (!show(entry.file)) continue;
    const doc = JSON.parse(readFileSync(join(examplesDir, entry.file), "utf8"));
    const value =
      entry.kind === "fragment" ? doc : entry.kind === "response" ? doc.result : entry.kind === "error" ? doc.error : doc.params;
    const validator = z[`z${entry.typed_def}`];
    if (!validator) {
      console.log(`- ${entry.file} [${entry.typed_def}] -> no SDK validator of that name`);
      continue;
    }
    total++;
    const verdict = describeParse(validator, value);
    if (verdict.startsWith("accepted")) accepted++;
    if (verdict !== "accepted") {
      console.log(`- ${entry.file} [${entry.typed_def}, alpha.3 valid: ${entry.valid_stable}] -> ${verdict}`);
    }
  }
  console.log(`\n${accepted}/${total} examples accepted; examples not listed were accepted unchanged.\n`);
}
// ---------------------------------------------------------------------------

async function main() {
  const argv = process.argv.slice(2);
  if (argv[0] === "--fake-agent") {
    await runFakeAgent(argv[1]);
    return;
  }
  let only;
  let examplesDir = "/work/shared/acp-examples";
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--only") only = argv[++i];
    else if (argv[i] === "--examples") examplesDir = argv[++i];
  }
  const show = (title) => !only || title.includes(only);

  console.log("# A. raw client -> SDK agent (ts_agent.mjs)\n");
  for (const [title, lines] of Object.entries(AGENT_SIDE)) {
    if (!show(title)) continue;
    const { received, stderr } = await talkToSdkAgent(lines);
    console.log(`## ${title}`);
    for (const m of received) console.log(`  <- ${JSON.stringify(m)}`);
    const sdkLogs = stderr.filter((l) => !l.startsWith("[ts_agent]"));
    for (const l of sdkLogs) console.log(`  stderr: ${l}`);
    console.log();
  }

  console.log("# B. fake agent -> SDK client (ts_client.mjs)\n");
  const clientCases = [
    ["prompt-result-empty", []],
    ["prompt-result-messageId", []],
    ["prompt-result-null", []],
    ["init-protocol-1", []],
    ["init-protocol-3", []],
    ["init-missing-info", []],
    ["no-jsonrpc-field", []],
    ["string-id-echo", []],
    ["unknown-fields-everywhere", []],
    ["unknown-update-kinds", []],
    ["broken-known-update", []],
    ["alpha3-available-commands", []],
    ["stop-reasons", []],
    ["plan-alpha3-lenient-entries", []],
    ["agent-requests", []],
    ["batch-updates", []],
  ];
  for (const [name, args] of clientCases) {
    const title = `${name}${args.length ? ` ${args.join(" ")}` : ""}`;
    if (!show(title)) continue;
    const r = await runClientAgainstFake(name, args);
    console.log(`## ${title}`);
    console.log(`  exit ${r.code}`);
    if (r.stdout) console.log(`  stdout: ${r.stdout}`);
    for (const l of r.stderr.split("\n").filter(Boolean)) console.log(`  stderr: ${l}`);
    for (const l of r.sent) console.log(`  client sent: ${l}`);
    console.log();
  }

  await validatorSection(examplesDir, show);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
