// Protocol types the UI uses, re-exported from the ts-rs bindings so features import one module.
export type { AbortReason } from "./bindings/AbortReason";
export type { ApprovalAnswer } from "./bindings/ApprovalAnswer";
export type { ApprovalRequest } from "./bindings/ApprovalRequest";
export type { AuditEvent } from "./bindings/AuditEvent";
export type { AuditQuery } from "./bindings/AuditQuery";
export type { Decision } from "./bindings/Decision";
export type { DecisionSource } from "./bindings/DecisionSource";
export type { ErrorInfo } from "./bindings/ErrorInfo";
export type { Event } from "./bindings/Event";
export type { Finding } from "./bindings/Finding";
export type { Op } from "./bindings/Op";
export type { Severity } from "./bindings/Severity";
export type { TokenUsage } from "./bindings/TokenUsage";
export type { ToolCall } from "./bindings/ToolCall";
export type { ToolResult } from "./bindings/ToolResult";
export type { ToolStatus } from "./bindings/ToolStatus";
/** What the shell's `session_info` command returns about the open session. */
export type { SessionSnapshot } from "./bindings/SessionSnapshot";
export type { SessionSummary } from "./bindings/SessionSummary";
export type { Mode } from "./bindings/Mode";
