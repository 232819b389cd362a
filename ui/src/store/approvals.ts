// Approval bookkeeping shared by the reducers: requests arriving (as events or from the
// `pending_approvals` load, never twice), answers on their way, and requests resolved.
import type { ApprovalRequest } from "../api/types";
import { updateTool } from "./items";
import type { SessionState } from "./state";

/** How many resolved ids are remembered; a load older than that many answers is not expected. */
const RESOLVED_MEMORY = 500;

/**
 * Adds `requests` to the pending list (a request already there is replaced in place, one already
 * resolved is ignored) and marks their calls' cards as waiting.
 */
export function addApprovals(state: SessionState, requests: ApprovalRequest[]): SessionState {
  let next = state;
  for (const request of requests) {
    if (next.resolvedApprovals.includes(request.id)) continue;
    const at = next.approvals.findIndex((a) => a.id === request.id);
    const approvals =
      at >= 0 ? next.approvals.map((a, i) => (i === at ? request : a)) : [...next.approvals, request];
    next = updateTool({ ...next, approvals }, request.callId, (item) =>
      item.status === "running" ? { ...item, status: "pending" } : item,
    );
  }
  return next;
}

/** Removes a resolved request; its call runs (approved) or is about to report `denied`. */
export function resolveApproval(state: SessionState, approvalId: string): SessionState {
  const request = state.approvals.find((a) => a.id === approvalId);
  const next: SessionState = {
    ...state,
    approvals: state.approvals.filter((a) => a.id !== approvalId),
    answering: state.answering.filter((id) => id !== approvalId),
    resolvedApprovals: [...state.resolvedApprovals, approvalId].slice(-RESOLVED_MEMORY),
  };
  if (!request) return next;
  return updateTool(next, request.callId, (item) => (item.status === "pending" ? { ...item, status: "running" } : item));
}

/** Notes that an answer to `approvalId` was sent, so its buttons cannot send a second one. */
export function markAnswering(state: SessionState, approvalId: string): SessionState {
  return state.answering.includes(approvalId) ? state : { ...state, answering: [...state.answering, approvalId] };
}
