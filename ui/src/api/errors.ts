// A command's failure in words: the shell rejects with an ErrorInfo; anything else is shown as is.
import type { ErrorInfo } from "./types";

export function describeError(err: unknown): string {
  if (err && typeof err === "object" && "message" in err && typeof (err as ErrorInfo).message === "string") {
    return (err as ErrorInfo).message;
  }
  return err instanceof Error ? err.message : String(err);
}

/** Whether a command's failure is the shell's ErrorInfo (rather than, say, a failed `invoke`). */
export function isErrorInfo(err: unknown): err is ErrorInfo {
  return (
    err !== null &&
    typeof err === "object" &&
    typeof (err as ErrorInfo).code === "string" &&
    typeof (err as ErrorInfo).message === "string"
  );
}
