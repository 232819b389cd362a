// The findings on an approval card: one the call's sandbox holds is marked as held; the others
// render as they always did.
import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { Finding } from "../../api/types";
import { FindingList } from "./FindingList";

const finding = (over: Partial<Finding> = {}): Finding => ({
  guardian: "network",
  rule: "unlisted-host",
  severity: "medium",
  message: "the command wants to connect to new.test:8080",
  contained: false,
  ...over,
});

describe("FindingList", () => {
  it("marks a finding the sandbox holds", () => {
    render(<FindingList findings={[finding({ contained: true })]} />);
    const item = screen.getByTestId("approval-finding");
    expect(item.dataset.contained).toBe("true");
    expect(item.querySelector(".finding-contained")?.textContent).toBe("held by the sandbox");
    expect(item.textContent).toBe("medium the command wants to connect to new.test:8080 (network/unlisted-host) held by the sandbox");
  });

  it("renders a finding the sandbox does not hold as before", () => {
    render(<FindingList findings={[finding(), finding({ rule: "push", contained: true })]} />);
    const [open, held] = screen.getAllByTestId("approval-finding");
    expect(open!.hasAttribute("data-contained")).toBe(false);
    expect(open!.querySelector(".finding-contained")).toBeNull();
    expect(open!.textContent).toBe("medium the command wants to connect to new.test:8080 (network/unlisted-host)");
    expect(held!.dataset.contained).toBe("true");
  });
});
