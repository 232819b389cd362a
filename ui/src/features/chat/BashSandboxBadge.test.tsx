// The bash card's sandbox badge: what of home the command saw is in its title when its result
// says, and nothing changes when it does not.
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ToolResult } from "../../api/types";
import { BashSandboxBadge } from "./BashSandboxBadge";

const HOME = "home is hidden but for (read-only) ~/.cargo/bin, ~/.rustup, ~/.gitconfig";
const result = (data: unknown): ToolResult => ({ toolCallId: "b1", output: "exit code 0\n", isError: false, data, diff: null });

describe("BashSandboxBadge", () => {
  it("puts what of home the command saw in the title", () => {
    render(<BashSandboxBadge result={result({ sandbox: "bwrap", sandboxGaps: null, sandboxHome: HOME })} />);
    const badge = screen.getByTestId("bash-sandbox");
    expect(badge.textContent).toBe("sandboxed · bwrap");
    expect(badge.title).toBe(`Ran inside the OS sandbox\n${HOME}`);
  });

  it("keeps the plain title when home was not hidden or the key is not a string", () => {
    const { unmount } = render(<BashSandboxBadge result={result({ sandbox: "bwrap", sandboxHome: null })} />);
    expect(screen.getByTestId("bash-sandbox").title).toBe("Ran inside the OS sandbox");
    unmount();
    render(<BashSandboxBadge result={result({ sandbox: "none", sandboxHome: 42 })} />);
    expect(screen.getByTestId("bash-sandbox").title).toBe("Ran outside the OS sandbox");
  });
});
