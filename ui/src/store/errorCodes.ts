// What the window does about each ErrorCode, decided by an exhaustive switch: a code added to the
// protocol fails to compile here until someone says what it means for the window.
import type { ErrorCode } from "../api/types";

/** Whether an error means the answers on their way were refused, so the requests they answered
 * stay pending and their buttons may be used again. */
export function freesAnswers(code: ErrorCode): boolean {
  switch (code) {
    case "approval_refused":
      return true;
    case "store_write_failed":
    case "turn_failed":
    case "undo_busy":
    case "compact_busy":
    case "mode_change_failed":
    case "skill_not_loaded":
    case "config_write_failed":
    case "config_read_failed":
    case "undo_failed":
    case "audit_write_failed":
    case "compact_failed":
    case "provider_rate_limited":
    case "provider_unavailable":
    case "provider_rejected":
    case "provider_unreachable":
    case "provider_stream_dropped":
    case "provider_protocol":
    case "provider_stream_error":
    case "provider_setup":
    case "not_started":
    case "no_session":
    case "engine_closed":
    case "store_read_failed":
    case "no_such_session":
    case "workspace_missing":
    case "session_open_failed":
    case "session_delete_failed":
    case "worktree_failed":
    case "settings_read_failed":
    case "settings_save_failed":
    case "settings_invalid":
    case "keychain_failed":
    case "settings_reload_failed":
    case "connection_failed":
    case "mcp_unknown_server":
    case "no_such_process":
    case "invalid_argument":
    case "audit_read_failed":
    case "audit_export_failed":
    case "review_failed":
    case "review_conflict":
    case "engine_unreachable":
    case "session_snapshot_failed":
    case "pending_approvals_failed":
    case "submit_failed":
      return false;
    default:
      return assertNever(code);
  }
}

function assertNever(code: never): never {
  throw new Error(`unknown error code: ${String(code)}`);
}
