// The header's sandbox chip: what the end-to-end tests read (text, data-sandbox, data-partial)
// stays as it was; a sandbox that hides home says so in the text, the title and data-home.
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { SandboxStatus } from "./SandboxStatus";

const HOME = "home is hidden but for (read-only) ~/.cargo/bin, ~/.rustup, ~/.gitconfig";
const chip = () => screen.getByTestId("sandbox-status");

describe("SandboxStatus", () => {
  it("says home is hidden, and what of it commands see, when the sandbox hides it", () => {
    render(<SandboxStatus sandbox="bwrap" why={null} home={HOME} />);
    expect(chip().textContent).toBe("bash: sandboxed (bwrap) · home hidden");
    expect(chip().dataset.home).toBe(HOME);
    expect(chip().dataset.sandbox).toBe("bwrap");
    expect(chip().dataset.partial).toBeUndefined();
    expect(chip().title).toBe(`Shell commands run inside an OS sandbox\n${HOME}`);
    expect(chip().className).toBe("chip sandbox-status");
  });

  it("keeps the partial sandbox's text first and its gaps in the title", () => {
    render(<SandboxStatus sandbox="landlock" why="Landlock shares /tmp and /dev/shm with the host" home={HOME} />);
    expect(chip().textContent).toBe("bash: sandboxed (landlock) · partial · home hidden");
    expect(chip().dataset.partial).toBe("true");
    expect(chip().title).toBe(
      `Shell commands run inside an OS sandbox that does not hold everything: Landlock shares /tmp and /dev/shm with the host\n${HOME}`,
    );
  });

  it("says nothing of home when the sandbox does not hide it", () => {
    render(<SandboxStatus sandbox="bwrap" why={null} home={null} />);
    expect(chip().textContent).toBe("bash: sandboxed (bwrap)");
    expect(chip().dataset.home).toBeUndefined();
    expect(chip().hasAttribute("data-home")).toBe(false);
    expect(chip().title).toBe("Shell commands run inside an OS sandbox");
  });

  it("leaves the unsandboxed warning as it was, whatever home says", () => {
    render(<SandboxStatus sandbox="none" why="bubblewrap (bwrap) is not installed" home={HOME} />);
    expect(chip().textContent).toBe("bash: unsandboxed — bubblewrap (bwrap) is not installed");
    expect(chip().className).toBe("chip sandbox-status unsandboxed");
    expect(chip().title).toBe("bubblewrap (bwrap) is not installed");
    expect(chip().hasAttribute("data-home")).toBe(false);
  });
});
