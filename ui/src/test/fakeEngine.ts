// A stand-in for src/api/engine.ts in component tests: records what the UI submits and lets a
// test emit engine events. Use it with
//   vi.mock("../../api/engine", () => import("../../test/fakeEngine").then((m) => m.engineModule));
import { act } from "@testing-library/react";
import { vi } from "vitest";
import type {
  ApprovalRequest,
  AuditEvent,
  AuditQuery,
  Event,
  McpServerSettings,
  McpServerList,
  ModelInfo,
  Op,
  ProcessInfo,
  ProviderSettings,
  RuleList,
  ReviewDecision,
  RuleMeaning,
  SequencedEvent,
  SessionInfo,
  SessionSnapshot,
  SessionSummary,
  Settings,
  SettingsUpdate,
  SkillInfo,
  SlashCommandInfo,
  TurnReview,
} from "../api/types";

export const SUMMARY: SessionSummary = {
  sessionId: "s1",
  workspace: "/home/dev/project",
  mode: "ask",
  model: "mock-model",
  contextWindow: 128000,
  sandbox: "bwrap",
  unsandboxedBecause: null,
  sandboxHome: null,
  price: null,
  instructions: [],
};

/** A stored session with nothing in it yet. */
export const EMPTY_SNAPSHOT: SessionSnapshot = {
  session: { id: "s1", workspace: "/home/dev/project", title: "", createdAt: 0, updatedAt: 0, totalTokens: 0, state: "idle", waitingFor: null, waiting: 0, branch: null, worktree: null, agent: null },
  items: [],
  summary: null,
  pendingApprovals: [],
  usage: { inputTokens: 0, cachedInputTokens: 0, outputTokens: 0 },
  contextUsed: 0,
  turnUsage: [],
  changes: [],
  plan: [],
  agents: [],
  seq: 0,
};

/** Settings of a configured window (a provider is set). */
export const SETTINGS: Settings = {
  configFile: "/home/dev/.local/share/bridle/config.toml",
  workspace: "/home/dev/project",
  configured: true,
  provider: { kind: "openai", baseUrl: "http://127.0.0.1:4010/v1", model: "mock-model", contextWindow: null },
  keySource: null,
  mode: "ask",
  rules: { allow: [], ask: [], deny: [] },
  network: { mode: "off", allow: [], deny: [] },
  sessionHosts: [],
  limits: { maxSteps: 50, toolTimeoutSecs: 60, approvalTimeoutSecs: 600, maxRetries: 4 },
  kinds: [
    { kind: "openai", defaultBaseUrl: "https://api.openai.com/v1", keyVariable: "OPENAI_API_KEY" },
    { kind: "anthropic", defaultBaseUrl: "https://api.anthropic.com", keyVariable: "ANTHROPIC_API_KEY" },
    { kind: "ollama", defaultBaseUrl: "http://127.0.0.1:11434", keyVariable: "OLLAMA_API_KEY" },
  ],
  mcpServers: [],
};

/** A configured MCP server as the Settings view gets it (fields to override). */
export const MCP_SERVER: McpServerSettings = {
  name: "",
  command: "",
  args: [],
  url: "",
  enabled: true,
  startupTimeoutSecs: 10,
  envNames: [],
  headerNames: [],
};

export const fakeEngine = {
  listener: null as ((e: SequencedEvent) => void) | null,
  mcpListener: null as ((list: McpServerList) => void) | null,
  seq: 0,
  submit: vi.fn(async (_op: Op) => {}),
  sessionInfo: vi.fn(async (): Promise<SessionSummary> => SUMMARY),
  pendingApprovals: vi.fn(async (): Promise<ApprovalRequest[]> => []),
  sessionSnapshot: vi.fn(async (): Promise<SessionSnapshot> => EMPTY_SNAPSHOT),
  auditQuery: vi.fn(async (_query: AuditQuery): Promise<AuditEvent[]> => []),
  auditExport: vi.fn(async (): Promise<string> => "/data/audit-export.jsonl"),
  sessionExport: vi.fn(async (id: string, format: string): Promise<string> => `/data/exports/session-${id}.${format}`),
  settingsGet: vi.fn(async (): Promise<Settings> => SETTINGS),
  settingsSave: vi.fn(async (_update: SettingsUpdate): Promise<Settings> => SETTINGS),
  modelsList: vi.fn(async (_p: ProviderSettings, _key: string | null): Promise<ModelInfo[]> => []),
  rulesExplain: vi.fn(async (_list: RuleList, patterns: string[]): Promise<RuleMeaning[]> =>
    patterns.map((pattern) => ({ pattern, meaning: `means ${pattern}`, error: null })),
  ),
  sessionsList: vi.fn(async (): Promise<SessionInfo[]> => []),
  sessionOpen: vi.fn(async (_id: string): Promise<SessionSummary> => SUMMARY),
  sessionNew: vi.fn(async (): Promise<SessionSummary> => SUMMARY),
  sessionDelete: vi.fn(async (_id: string): Promise<SessionSummary> => SUMMARY),
  inbox: vi.fn(async (): Promise<ApprovalRequest[]> => []),
  sessionNewWorktree: vi.fn(async (_name: string | null): Promise<SessionSummary> => SUMMARY),
  sessionArchive: vi.fn(async (_id: string): Promise<void> => {}),
  sessionRestore: vi.fn(async (_id: string): Promise<void> => {}),
  sessionApply: vi.fn(async (_id: string, _dryRun: boolean): Promise<string> => ""),
  sessionMerge: vi.fn(async (_id: string): Promise<string> => "abc123"),
  mcpStatus: vi.fn(async (): Promise<McpServerList> => ({ seq: 0, servers: [] })),
  mcpRestart: vi.fn(async (_name: string): Promise<McpServerList> => ({ seq: 0, servers: [] })),
  mcpSave: vi.fn(async (_server: McpServerSettings, _previous: string | null): Promise<Settings> => SETTINGS),
  mcpRemove: vi.fn(async (_name: string): Promise<Settings> => SETTINGS),
  processesList: vi.fn(async (): Promise<ProcessInfo[]> => []),
  skillsList: vi.fn(async (): Promise<SkillInfo[]> => []),
  skillsTrust: vi.fn(async (): Promise<SkillInfo[]> => []),
  slashCommands: vi.fn(async (): Promise<SlashCommandInfo[]> => [
    { name: "compact", description: "Compact the conversation now", hint: null, skill: false },
    { name: "mode", description: "Switch the approval mode", hint: "MODE", skill: false },
    { name: "skills", description: "List the skills found", hint: null, skill: false },
  ]),
  processStop: vi.fn(
    async (id: string): Promise<ProcessInfo> => processInfo({ id, state: "stopped", endedAt: Date.now() }),
  ),
  reviewTurn: vi.fn(
    async (turnId: string | null): Promise<TurnReview> => ({ sessionId: "s1", turnId: turnId ?? "", hunks: [], decided: 0 }),
  ),
  reviewDecide: vi.fn(
    async (_decision: ReviewDecision, _ids: string[]): Promise<TurnReview> => ({ sessionId: "s1", turnId: "", hunks: [], decided: 0 }),
  ),
};

export const engineModule = {
  submit: (op: Op) => fakeEngine.submit(op),
  sessionInfo: () => fakeEngine.sessionInfo(),
  pendingApprovals: () => fakeEngine.pendingApprovals(),
  sessionSnapshot: () => fakeEngine.sessionSnapshot(),
  auditQuery: (query: AuditQuery) => fakeEngine.auditQuery(query),
  auditExport: () => fakeEngine.auditExport(),
  sessionExport: (id: string, format: string) => fakeEngine.sessionExport(id, format),
  settingsGet: () => fakeEngine.settingsGet(),
  settingsSave: (update: SettingsUpdate) => fakeEngine.settingsSave(update),
  modelsList: (p: ProviderSettings, key: string | null) => fakeEngine.modelsList(p, key),
  rulesExplain: (list: RuleList, patterns: string[]) => fakeEngine.rulesExplain(list, patterns),
  sessionsList: () => fakeEngine.sessionsList(),
  sessionOpen: (id: string) => fakeEngine.sessionOpen(id),
  sessionNew: () => fakeEngine.sessionNew(),
  sessionDelete: (id: string) => fakeEngine.sessionDelete(id),
  inbox: () => fakeEngine.inbox(),
  sessionNewWorktree: (name: string | null) => fakeEngine.sessionNewWorktree(name),
  sessionArchive: (id: string) => fakeEngine.sessionArchive(id),
  sessionRestore: (id: string) => fakeEngine.sessionRestore(id),
  sessionApply: (id: string, dryRun: boolean) => fakeEngine.sessionApply(id, dryRun),
  sessionMerge: (id: string) => fakeEngine.sessionMerge(id),
  mcpStatus: () => fakeEngine.mcpStatus(),
  mcpRestart: (name: string) => fakeEngine.mcpRestart(name),
  mcpSave: (server: McpServerSettings, previous: string | null) => fakeEngine.mcpSave(server, previous),
  mcpRemove: (name: string) => fakeEngine.mcpRemove(name),
  processesList: () => fakeEngine.processesList(),
  processStop: (id: string) => fakeEngine.processStop(id),
  skillsList: () => fakeEngine.skillsList(),
  skillsTrust: () => fakeEngine.skillsTrust(),
  slashCommands: () => fakeEngine.slashCommands(),
  reviewTurn: (turnId: string | null) => fakeEngine.reviewTurn(turnId),
  reviewDecide: (decision: ReviewDecision, ids: string[]) => fakeEngine.reviewDecide(decision, ids),
  onMcpStatus: async (cb: (list: McpServerList) => void) => {
    fakeEngine.mcpListener = cb;
    return () => {
      if (fakeEngine.mcpListener === cb) fakeEngine.mcpListener = null;
    };
  },
  onEngineEvent: async (cb: (e: SequencedEvent) => void) => {
    fakeEngine.listener = cb;
    return () => {
      if (fakeEngine.listener === cb) fakeEngine.listener = null;
    };
  },
};

/** Delivers engine events to the window, as the shell would. */
export function emit(...events: Event[]): void {
  act(() => events.forEach((e) => fakeEngine.listener?.({ ...e, seq: ++fakeEngine.seq })));
}

/** Sends the MCP servers' list to the window, as the shell would after a change. */
export function emitMcp(list: McpServerList): void {
  act(() => fakeEngine.mcpListener?.(list));
}

/** A request for `tool` with overridable fields. */
export function approvalRequest(
  over: Partial<ApprovalRequest> & { tool?: string; arguments?: string } = {},
): ApprovalRequest {
  // A call's tool and arguments may be given on their own; they become its subject.
  const { tool = "write_file", arguments: args = '{"path":"notes/a.txt","content":"hi"}', ...rest } = over;
  return {
    id: "a1",
    sessionId: "s1",
    callId: "c1",
    subject: { type: "call", tool, arguments: args },
    findings: [],
    preview: null,
    callHash: "hash-a1",
    createdAt: Date.now(),
    expiresAt: Date.now() + 10 * 60_000,
    ...rest,
  };
}

/** A background process of session s1 with overridable fields (running, started a second ago). */
export function processInfo(over: Partial<ProcessInfo> = {}): ProcessInfo {
  return {
    id: "p1",
    sessionId: "s1",
    command: "npm run dev",
    state: "running",
    startedAt: Date.now() - 1000,
    endedAt: null,
    exitCode: null,
    tail: "",
    changed: [],
    ...over,
  };
}
