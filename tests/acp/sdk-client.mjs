#!/usr/bin/env node
// A generic ACP v1 client driven by the official TypeScript SDK (@agentclientprotocol/sdk), for
// the Rust tests of `bridle acp`: it runs a plan of steps against an agent process and prints
// one JSON transcript on stdout (nothing else goes to stdout; diagnostics go to stderr).
//
//   node tests/acp/sdk-client.mjs PLAN.json
//
// PLAN.json:
//   {
//     "agent": ["/path/bridle", "acp", "--data-dir", "/x/data"],   // argv of the agent
//     "env": {"OPENAI_API_KEY": "x"},          // added to this process's environment (optional)
//     "cwd": "/x/ws",                          // the session cwd (also the agent's working dir)
//     "permission": "allow_once" | "allow_always" | "reject_once" | "reject_always" | "cancelled",
//     "wire": false,                           // true: the transcript gets every line both ways
//     "steps": [
//       {"op": "start"},                       // spawns the agent
//       {"op": "initialize"},                  // protocolVersion 1, no fs, no terminal
//       {"op": "new", "mcpServers": [...]},    // session/new; remembers the sessionId
//       {"op": "prompt", "text": "...", "cancelAfterMs": 800},   // session/prompt (+ cancel)
//       {"op": "setMode", "mode": "plan"},     // session/set_mode
//       {"op": "restart"},                     // ends the agent, starts and initializes a new one
//       {"op": "load"},                        // session/load of the remembered id, no MCP servers
//       {"op": "raw", "line": "...", "waitMs": 500}   // a raw line on the agent's stdin
//     ]
//   }
//
// Every step may also carry "sessionId" (overrides the remembered one for that step).
//
// Transcript:
//   {
//     "steps": [{"op", "ok", "result" | "error": {code, message, data}, "ms"}],
//     "updates": [{"step": index, ...session/update params}],
//     "permissions": [{"step": index, ...session/request_permission params}],
//     "cancelToAnswerMs": number | null,       // last prompt with cancelAfterMs
//     "exitCode": number | null,               // the agent's exit code at the end (null: signal)
//     "exitSignal": string | null,
//     "invalid": [{"step", "direction", "message", "issues"}],  // agent messages the v1 schema rejects
//     "sdkErrors": [string],                   // what the SDK logged (unknown responses, handler errors)
//     "stdoutNoise": [string],                 // agent stdout lines that are not JSON objects
//     "wire": [{"step", "dir": "in"|"out", "line"}]   // only with "wire": true
//   }
// A step whose request got an error answer has ok: false and goes on. The "raw" step's result is
// {"replies": [...]}: the responses (messages without a method) the agent wrote in the waitMs
// (default 500) after the line. "start" and "restart" results carry {"pid"}.

import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { Readable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

const { client, methods, ndJsonStream, PROTOCOL_VERSION } = acp;

const started = Date.now();
const log = (...args) => process.stderr.write(`[sdk-client +${Date.now() - started}ms] ${args.join(" ")}\n`);

// The v1 zod schemas the SDK itself validates with; used here to check what the SDK does not
// (responses) and to say why it rejected a notification or request.
let zod = null;
try {
  const main = import.meta.resolve("@agentclientprotocol/sdk");
  zod = await import(new URL("../schema/zod.gen.js", main).href);
} catch (e) {
  log(`no schema validation: ${e.message}`);
}

const transcript = {
  steps: [],
  updates: [],
  permissions: [],
  cancelToAnswerMs: null,
  exitCode: null,
  exitSignal: null,
  invalid: [],
  sdkErrors: [],
  stdoutNoise: [],
};

// The SDK reports what it drops (an invalid notification, a response to an unknown request)
// with console.error: keep those in the transcript as well as on stderr.
const originalConsoleError = console.error.bind(console);
console.error = (...args) => {
  const text = args
    .map((a) => (typeof a === "string" ? a : a instanceof Error ? a.stack || a.message : safeJson(a)))
    .join(" ");
  transcript.sdkErrors.push(text);
  originalConsoleError(...args);
};

function safeJson(value) {
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** A JSON-RPC error as {code, message, data}; anything else (a closed pipe, a closed connection)
 * as {code: null, message, data: {errno}}. */
function errorJson(e) {
  if (e && typeof e === "object" && typeof e.code === "number") {
    const out = { code: e.code, message: e.message };
    if (e.data !== undefined) out.data = e.data;
    return out;
  }
  const out = { code: null, message: String(e?.message ?? e) };
  if (e && typeof e === "object" && typeof e.code === "string") out.data = { errno: e.code };
  return out;
}

function check(schemaName, value) {
  const schema = zod?.[schemaName];
  if (!schema) return null;
  const parsed = schema.safeParse(value);
  return parsed.success ? null : parsed.error.issues.map((i) => ({ path: i.path, message: i.message, code: i.code }));
}

// ---------------------------------------------------------------------------------------------

const planPath = process.argv[2];
if (!planPath) {
  process.stderr.write("usage: node tests/acp/sdk-client.mjs PLAN.json\n");
  process.exit(1);
}
let plan;
try {
  plan = JSON.parse(readFileSync(planPath, "utf8"));
  if (!Array.isArray(plan.agent) || plan.agent.length === 0) throw new Error("plan.agent must be a non-empty argv array");
  if (typeof plan.cwd !== "string") throw new Error("plan.cwd must be a path");
  if (!Array.isArray(plan.steps)) throw new Error("plan.steps must be an array");
  const kinds = ["allow_once", "allow_always", "reject_once", "reject_always", "cancelled"];
  plan.permission ??= "allow_once";
  if (!kinds.includes(plan.permission)) throw new Error(`plan.permission must be one of ${kinds.join(", ")}`);
  const ops = ["start", "initialize", "new", "prompt", "setMode", "restart", "load", "raw", "sleep"];
  plan.steps.forEach((step, i) => {
    if (!ops.includes(step?.op)) throw new Error(`step ${i}: unknown op ${JSON.stringify(step?.op)} (one of ${ops.join(", ")})`);
  });
} catch (e) {
  process.stderr.write(`sdk-client: bad plan ${planPath}: ${e.message}\n`);
  process.exit(1);
}
if (plan.wire) transcript.wire = [];

let stepIndex = -1; // the step running now, for updates and permissions
let sessionId = null;

/** The current agent: its process, SDK connection and the helpers around them. */
let agent = null;

function spawnAgent() {
  const [command, ...args] = plan.agent;
  const child = spawn(command, args, {
    cwd: plan.cwd,
    env: { ...process.env, ...(plan.env ?? {}) },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const state = {
    child,
    exited: null, // {code, signal} once it exited
    exitPromise: null,
    connection: null,
    ctx: null,
    rawListeners: new Set(), // (message) => void, for the raw step
    stdinClosed: false,
  };
  state.exitPromise = new Promise((resolve) => {
    child.on("exit", (code, signal) => {
      state.exited = { code, signal };
      log(`agent ${child.pid} exited code=${code} signal=${signal}`);
      resolve(state.exited);
    });
    child.on("error", (e) => {
      log(`agent spawn error: ${e.message}`);
      state.exited = { code: null, signal: null, error: e.message };
      resolve(state.exited);
    });
  });
  child.stderr.on("data", (chunk) => process.stderr.write(`[agent ${child.pid}] ${chunk}`));
  child.stdin.on("error", (e) => log(`agent stdin: ${e.message}`));

  // Output: one byte sink shared by the SDK's ndJsonStream and the raw step, so a raw line
  // never lands in the middle of an SDK message (Node writes each chunk whole, in order).
  const stdinWeb = new WritableStream({
    write(chunk) {
      if (state.stdinClosed) throw new Error("agent stdin is closed");
      if (plan.wire) {
        const text = Buffer.from(chunk).toString("utf8");
        for (const line of text.split("\n").filter(Boolean)) transcript.wire.push({ step: stepIndex, dir: "out", line });
      }
      return new Promise((resolve, reject) => child.stdin.write(chunk, (e) => (e ? reject(e) : resolve())));
    },
  });
  state.writeRaw = (line) =>
    new Promise((resolve, reject) => {
      if (state.stdinClosed) return reject(new Error("agent stdin is closed"));
      if (plan.wire) transcript.wire.push({ step: stepIndex, dir: "out", line });
      child.stdin.write(line.endsWith("\n") ? line : `${line}\n`, (e) => (e ? reject(e) : resolve()));
    });

  // Input: tap the agent's stdout lines (checks, raw replies, wire log) before the SDK parses
  // the same bytes.
  const stdoutWeb = Readable.toWeb(child.stdout);
  let pending = "";
  const tap = new TransformStream({
    transform(chunk, controller) {
      pending += Buffer.from(chunk).toString("utf8");
      let nl;
      while ((nl = pending.indexOf("\n")) >= 0) {
        observeLine(state, pending.slice(0, nl));
        pending = pending.slice(nl + 1);
      }
      controller.enqueue(chunk);
    },
    flush() {
      if (pending.trim()) observeLine(state, pending);
    },
  });
  const stream = ndJsonStream(stdinWeb, stdoutWeb.pipeThrough(tap));

  const app = client({ name: "bridle-acp-sdk-client" })
    .onNotification(methods.client.session.update, ({ params }) => {
      transcript.updates.push({ step: stepIndex, ...params });
    })
    .onRequest(methods.client.session.requestPermission, ({ params }) => {
      transcript.permissions.push({ step: stepIndex, ...params });
      if (plan.permission === "cancelled") return { outcome: { outcome: "cancelled" } };
      const option = params.options.find((o) => o.kind === plan.permission);
      if (!option) {
        log(`no permission option of kind ${plan.permission}; answering cancelled`);
        return { outcome: { outcome: "cancelled" } };
      }
      return { outcome: { outcome: "selected", optionId: option.optionId } };
    });

  // connectWith keeps the connection for as long as its callback runs: hand the context out and
  // hold the callback open until the agent is ended.
  let release;
  const held = new Promise((resolve) => (release = resolve));
  state.ready = new Promise((resolve) => {
    state.connection = app
      .connectWith(stream, async (ctx) => {
        resolve(ctx);
        await held;
      })
      .catch((e) => log(`SDK connection closed: ${e?.message ?? e}`));
  });
  state.release = release;
  return state;
}

function observeLine(state, line) {
  const stepAt = stepIndex;
  if (plan.wire) transcript.wire.push({ step: stepAt, dir: "in", line });
  const trimmed = line.trim();
  if (!trimmed) return;
  let message;
  try {
    message = JSON.parse(trimmed);
  } catch {
    transcript.stdoutNoise.push(line);
    return;
  }
  if (!message || typeof message !== "object" || Array.isArray(message)) {
    transcript.stdoutNoise.push(line);
    return;
  }
  // What the SDK validates (requests and notifications to the client), checked here too so the
  // transcript says why one was dropped.
  let issues = null;
  if (message.method === methods.client.session.update) issues = check("zSessionNotification", message.params);
  else if (message.method === methods.client.session.requestPermission)
    issues = check("zRequestPermissionRequest", message.params);
  if (issues) transcript.invalid.push({ step: stepAt, direction: "in", message, issues });
  if (!("method" in message)) for (const listener of state.rawListeners) listener(message);
}

async function startAgent() {
  if (agent && !agent.exited) await stopAgent();
  agent = spawnAgent();
  // The agent cannot be started (no such program...): the plan cannot run.
  const spawned = await Promise.race([
    new Promise((resolve) => agent.child.once("spawn", () => resolve(true))),
    agent.exitPromise.then(() => false),
  ]);
  if (!spawned && agent.exited?.error)
    throw Object.assign(new Error(`cannot start the agent ${JSON.stringify(plan.agent[0])}: ${agent.exited.error}`), {
      planError: true,
    });
  agent.ctx = await agent.ready;
  return { pid: agent.child.pid };
}

/** Closes the agent's stdin, waits for it to exit (at most 10 s), kills it otherwise. */
async function stopAgent() {
  if (!agent) return null;
  const state = agent;
  if (!state.stdinClosed) {
    state.stdinClosed = true;
    state.child.stdin.end();
  }
  const timeout = new Promise((resolve) => setTimeout(() => resolve("timeout"), 10000));
  let result = await Promise.race([state.exitPromise, timeout]);
  if (result === "timeout") {
    log(`agent ${state.child.pid} still running 10 s after stdin closed; killing it`);
    state.child.kill("SIGKILL");
    result = await state.exitPromise;
    result = { ...result, killed: true };
  }
  state.release();
  await state.connection;
  transcript.exitCode = result.code ?? null;
  transcript.exitSignal = result.signal ?? null;
  return result;
}

function needAgent() {
  if (!agent || agent.exited) throw new Error("the agent is not running (no start step, or it exited)");
  return agent.ctx;
}

function needSession(step) {
  const id = step.sessionId ?? sessionId;
  if (!id) throw new Error("no session yet (no successful new step)");
  return id;
}

async function initialize() {
  const ctx = needAgent();
  return ctx.request(methods.agent.initialize, {
    protocolVersion: PROTOCOL_VERSION ?? 1,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
    clientInfo: { name: "bridle-acp-sdk-client", version: "1" },
  });
}

async function runStep(step) {
  switch (step.op) {
    case "start":
      return { result: await startAgent() };
    case "initialize":
      return { result: await initialize(), schema: "zInitializeResponse" };
    case "new": {
      const ctx = needAgent();
      const result = await ctx.request(methods.agent.session.new, {
        cwd: step.cwd ?? plan.cwd,
        mcpServers: step.mcpServers ?? [],
      });
      if (result?.sessionId) sessionId = result.sessionId;
      return { result, schema: "zNewSessionResponse" };
    }
    case "load": {
      const ctx = needAgent();
      const result = await ctx.request(methods.agent.session.load, {
        sessionId: needSession(step),
        cwd: step.cwd ?? plan.cwd,
        mcpServers: step.mcpServers ?? [],
      });
      return { result, schema: "zLoadSessionResponse" };
    }
    case "prompt": {
      const ctx = needAgent();
      const id = needSession(step);
      const prompt = step.prompt ?? [{ type: "text", text: String(step.text ?? "") }];
      let cancelledAt = null;
      let timer = null;
      const answer = ctx.request(methods.agent.session.prompt, { sessionId: id, prompt });
      if (typeof step.cancelAfterMs === "number") {
        timer = setTimeout(() => {
          cancelledAt = Date.now();
          log(`session/cancel ${id}`);
          ctx.notify(methods.agent.session.cancel, { sessionId: id }).catch((e) => log(`cancel failed: ${e.message}`));
        }, step.cancelAfterMs);
      }
      try {
        const result = await answer;
        return { result, schema: "zPromptResponse" };
      } finally {
        clearTimeout(timer);
        if (typeof step.cancelAfterMs === "number")
          transcript.cancelToAnswerMs = cancelledAt === null ? null : Date.now() - cancelledAt;
      }
    }
    case "setMode": {
      const ctx = needAgent();
      const result = await ctx.request(methods.agent.session.setMode, { sessionId: needSession(step), modeId: step.mode });
      return { result, schema: "zSetSessionModeResponse" };
    }
    case "restart": {
      const stopped = await stopAgent();
      const started = await startAgent();
      const init = await initialize();
      return { result: { stopped, ...started, initialize: init } };
    }
    case "raw": {
      needAgent();
      const replies = [];
      const listener = (message) => replies.push(message);
      agent.rawListeners.add(listener);
      try {
        await agent.writeRaw(String(step.line));
        await new Promise((resolve) => setTimeout(resolve, step.waitMs ?? 500));
      } finally {
        agent.rawListeners.delete(listener);
      }
      return { result: { replies, alive: !agent.exited } };
    }
    case "sleep":
      await new Promise((resolve) => setTimeout(resolve, step.ms ?? 0));
      return { result: {} };
    default:
      throw Object.assign(new Error(`unknown op ${JSON.stringify(step.op)}`), { planError: true });
  }
}

async function main() {
  for (let i = 0; i < plan.steps.length; i++) {
    const step = plan.steps[i];
    stepIndex = i;
    const t0 = Date.now();
    const entry = { op: step.op };
    try {
      const { result, schema } = await runStep(step);
      entry.ok = true;
      entry.result = result ?? null;
      const issues = schema ? check(schema, result ?? {}) : null;
      if (issues) transcript.invalid.push({ step: i, direction: "in", message: { result }, issues });
    } catch (e) {
      if (e?.planError) throw e;
      entry.ok = false;
      entry.error = errorJson(e);
      log(`step ${i} (${step.op}) failed: ${entry.error.message}`);
    }
    entry.ms = Date.now() - t0;
    transcript.steps.push(entry);
  }
  stepIndex = plan.steps.length;
  await stopAgent();
}

try {
  await main();
} catch (e) {
  process.stderr.write(`sdk-client: ${e?.planError ? e.message : (e?.stack ?? e)}\n`);
  if (agent && !agent.exited) agent.child.kill("SIGKILL");
  process.exit(1);
}
process.stdout.write(`${JSON.stringify(transcript)}\n`);
process.exit(0);
