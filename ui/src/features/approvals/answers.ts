// The four answers as buttons and keys: for a tool call, and for a host (a network request's
// answers are about the host, never about running anything, so they are worded for hosts). A held
// change gets two: keep or discard; what one command wrote is never approved for later ones.
import type { ApprovalAnswer } from "../../api/types";
import { hostPort } from "./hostRequest";

export interface AnswerButton {
  decision: ApprovalAnswer;
  testId: string;
  label: string;
  key: string;
  hint: string;
}

/** The four answers to a tool call. */
export const CALL_ANSWERS: AnswerButton[] = [
  { decision: "approveOnce", testId: "approve-once", label: "Approve once", key: "y", hint: "Run this call" },
  { decision: "approveSession", testId: "approve-session", label: "For this session", key: "s", hint: "Run it and the same call for the rest of the session" },
  { decision: "approveAlways", testId: "approve-always", label: "Always", key: "a", hint: "Run it and add an allow rule to the config" },
  { decision: "deny", testId: "deny", label: "Deny", key: "n", hint: "Do not run it; the model is told, with your feedback" },
];

/** The same four answers, about a host. */
export function hostAnswers(request: { host: string; port: number }): AnswerButton[] {
  const where = hostPort(request);
  return [
    { decision: "approveOnce", testId: "approve-once", label: "Allow for this command", key: "y", hint: `Let this command reach ${where}` },
    {
      decision: "approveSession",
      testId: "approve-session",
      label: "Allow for the session",
      key: "s",
      hint: `Let any command reach ${where} until the session ends`,
    },
    {
      decision: "approveAlways",
      testId: "approve-always",
      label: `Always allow (adds ${where} to [sandbox.network] allow)`,
      key: "a",
      hint: `Let commands reach ${where} from now on, written to the config`,
    },
    { decision: "deny", testId: "deny", label: "Deny", key: "n", hint: "Refuse the connection; the command sees it fail, and the model is told why" },
  ];
}

/** The answers to a held change: keep it or throw it away. */
export const EFFECTS_ANSWERS: AnswerButton[] = [
  {
    decision: "approveOnce",
    testId: "approve-once",
    label: "Keep these changes",
    key: "y",
    hint: "Let what the command changed land in the workspace, checkpointed (undo can restore it)",
  },
  {
    decision: "deny",
    testId: "deny",
    label: "Discard",
    key: "n",
    hint: "Throw the changes away; the model is told which files, with your feedback",
  },
];
