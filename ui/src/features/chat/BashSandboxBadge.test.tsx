// The bash card's sandbox badge: what of home the command saw is in its title when its result
// says, and nothing changes when it does not.
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { bashResult } from "../../test/results";
import { BashSandboxBadge } from "./BashSandboxBadge";

const HOME = "home is hidden but for (read-only) ~/.cargo/bin, ~/.rustup, ~/.gitconfig";

describe("BashSandboxBadge", () => {
  it("puts what of home the command saw in the title", () => {
    render(<BashSandboxBadge result={bashResult({ sandbox: "bwrap", sandboxGaps: null, sandboxHome: HOME })} />);
    const badge = screen.getByTestId("bash-sandbox");
    expect(badge.textContent).toBe("sandboxed · bwrap");
    expect(badge.title).toBe(`Ran inside the OS sandbox\n${HOME}`);
  });

  it("keeps the plain title when home was not hidden", () => {
    const { unmount } = render(<BashSandboxBadge result={bashResult({ sandbox: "bwrap", sandboxHome: null })} />);
    expect(screen.getByTestId("bash-sandbox").title).toBe("Ran inside the OS sandbox");
    unmount();
    render(<BashSandboxBadge result={bashResult({ sandbox: "none", sandboxHome: "" })} />);
    expect(screen.getByTestId("bash-sandbox").title).toBe("Ran outside the OS sandbox");
  });
});
