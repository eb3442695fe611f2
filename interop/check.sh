#!/bin/sh
# Interop smoke test: the SDK client (ts_client.mjs) drives an ACP v2 agent
# through one full prompt turn and through a cancelled one.
#
#   sh interop/check.sh                      # agent = node interop/ts_agent.mjs
#   sh interop/check.sh AGENT_CMD [ARGS...]  # any agent that plays the same script
#
# The agent must play the lifecycle of ts_agent.mjs: user_message,
# state_update, plan_update, >= 3 agent_message_chunk, tool_call_update,
# state_update, (permission) state_update, tool_call_update,
# tool_call_content_chunk, tool_call_update, usage_update, state_update, and
# honour "slow" (200 ms between chunks) and session/cancel.
# Set TS_CLIENT_FLAGS (e.g. "--timeout 60") to pass extra flags to ts_client.mjs.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
cd "$root"

if [ ! -d "$here/node_modules/@agentclientprotocol/sdk" ]; then
  echo "check.sh: installing the SDK (npm ci --prefix interop)" >&2
  npm ci --prefix "$here" --no-audit --no-fund >&2
fi

if [ "$#" -eq 0 ]; then
  set -- node "$here/ts_agent.mjs"
fi
flags=${TS_CLIENT_FLAGS:-}

# verify NAME EXPECT JSON_LINE: checks one ts_client result line.
verify() {
  node -e '
    const [name, expect, line] = process.argv.slice(1);
    const fail = (why) => { console.error(`FAIL ${name}: ${why}\n  got: ${line}`); process.exit(1); };
    let r;
    try { r = JSON.parse(line); } catch { fail("stdout is not one JSON line"); }
    const u = r.updates;
    if (!Array.isArray(u)) fail("no updates array");
    if (r.stopReason !== expect) fail(`stopReason ${JSON.stringify(r.stopReason)}, expected ${expect}`);
    if (u[0] !== "user_message") fail("first update is not user_message");
    if (u[u.length - 1] !== "state_update") fail("last update is not state_update");
    // `want` must occur in `u` as an in-order subsequence
    const inOrder = (want) => { let i = 0; for (const k of u) if (k === want[i]) i++; return i === want.length; };
    if (expect === "end_turn") {
      const want = ["user_message", "state_update", "plan_update",
        "agent_message_chunk", "agent_message_chunk", "agent_message_chunk",
        "tool_call_update", "state_update", "state_update", "tool_call_update",
        "tool_call_content_chunk", "tool_call_update", "usage_update", "state_update"];
      if (!inOrder(want)) fail(`updates do not contain, in order: ${want.join(", ")}`);
    } else {
      if (!inOrder(["user_message", "state_update", "agent_message_chunk", "state_update"]))
        fail("expected user_message, state_update, agent_message_chunk ... state_update");
      if (u.includes("usage_update") || u.includes("tool_call_content_chunk"))
        fail("the turn was not cut short by session/cancel");
    }
    console.error(`ok   ${name}: ${line}`);
  ' "$@"
}

# shellcheck disable=SC2086 # $flags is a list of words on purpose
out=$(node "$here/ts_client.mjs" $flags "$@")
verify "full turn" end_turn "$out"

# shellcheck disable=SC2086
out=$(node "$here/ts_client.mjs" $flags --cancel --prompt "slow hello" "$@")
verify "cancelled turn" cancelled "$out"

echo "check.sh: all interop checks passed" >&2
