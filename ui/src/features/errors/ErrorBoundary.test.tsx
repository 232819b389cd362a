// A view that throws while rendering is replaced by the boundary's message, its neighbours keep
// working, and "Try again" renders the view afresh.
import { render, screen } from "@testing-library/react";
import userEvent from "@testing-library/user-event";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ErrorBoundary } from "./ErrorBoundary";

/** A view that throws while `broken.now` is set, as one fed a row it cannot read would. */
const broken = { now: true };
function FlakyView() {
  if (broken.now) throw new TypeError("Cannot read properties of undefined (reading 'call')");
  return <p>the view is back</p>;
}

describe("ErrorBoundary", () => {
  beforeEach(() => {
    broken.now = true;
    // React and the boundary both log the caught error; the test has no use for the noise.
    vi.spyOn(console, "error").mockImplementation(() => {});
  });
  afterEach(() => vi.restoreAllMocks());

  it("shows the error text and a retry button instead of a blank view, and leaves its neighbours alone", () => {
    render(
      <>
        <ErrorBoundary>
          <FlakyView />
        </ErrorBoundary>
        <ErrorBoundary>
          <p>another view</p>
        </ErrorBoundary>
      </>,
    );
    const shown = screen.getByTestId("error-boundary");
    expect(shown.getAttribute("role")).toBe("alert");
    expect(shown.textContent).toContain("This view stopped working");
    expect(shown.textContent).toContain("Cannot read properties of undefined (reading 'call')");
    expect(screen.getByTestId("error-boundary-retry").textContent).toBe("Try again");
    expect(screen.getByText("another view")).toBeTruthy();
  });

  it("renders the view again on Try again, and catches it again if it still fails", async () => {
    const user = userEvent.setup();
    render(
      <ErrorBoundary>
        <FlakyView />
      </ErrorBoundary>,
    );
    await user.click(screen.getByTestId("error-boundary-retry"));
    expect(screen.getByTestId("error-boundary")).toBeTruthy();

    broken.now = false;
    await user.click(screen.getByTestId("error-boundary-retry"));
    expect(screen.queryByTestId("error-boundary")).toBeNull();
    expect(screen.getByText("the view is back")).toBeTruthy();
  });

  it("shows what was thrown when it is not an Error", () => {
    function ThrowsText(): never {
      throw "the snapshot has no items";
    }
    render(
      <ErrorBoundary>
        <ThrowsText />
      </ErrorBoundary>,
    );
    expect(screen.getByTestId("error-boundary").textContent).toContain("the snapshot has no items");
  });
});
