// The audit table holds 100,000 rows and puts only a window of them in the DOM; the window
// follows the scroll, a row in it still selects on click, and the end of the loaded rows asks
// for the next page.
import { fireEvent, render, screen } from "@testing-library/react";
import { useRef, useState } from "react";
import { describe, expect, it, vi } from "vitest";
import type { AuditEvent } from "../../api/types";
import { AuditTable } from "./AuditTable";

const ROW_HEIGHT = 27;
const EPOCH = Date.UTC(2026, 10, 24);

/** A shown row's id, read back from its time cell. */
const idOf = (row: HTMLElement): number => (Date.parse(row.querySelector("td")!.title) - EPOCH) / 1000;

/** `n` rows, newest (highest id) first, as `audit_query` answers. */
function log(n: number): AuditEvent[] {
  return Array.from({ length: n }, (_, i) => {
    const id = n - i;
    const decided = id % 3 === 0;
    return {
      id,
      at: EPOCH + id * 1000,
      sessionId: "s1",
      turnId: `t${id}`,
      callId: `c${id}`,
      tool: "bash",
      kind: decided ? "guard_decision" : "tool_call",
      decision: decided ? "deny" : null,
      source: decided ? "mode" : null,
      status: null,
      latencyMs: null,
      payload: null,
      prevHash: "",
      hash: "",
    };
  });
}

/** The table in its scroll box, mounted once the rows are in, as the Audit view does. */
function Harness({ rows, onNearEnd }: { rows: AuditEvent[]; onNearEnd: () => void }) {
  const scroller = useRef<HTMLDivElement>(null);
  const [selected, setSelected] = useState<number | null>(null);
  return (
    <div className="audit-scroll" ref={scroller}>
      {rows.length > 0 && (
        <AuditTable
          rows={rows}
          selectedId={selected}
          showSession={false}
          onSelect={(r) => setSelected(r.id)}
          scroller={scroller}
          onNearEnd={onNearEnd}
        />
      )}
    </div>
  );
}

describe("AuditTable", () => {
  it("puts a bounded window of 100,000 rows in the DOM and moves it with the scroll", () => {
    const rows = log(100_000);
    const onNearEnd = vi.fn();
    const { container, rerender } = render(<Harness rows={[]} onNearEnd={onNearEnd} />);
    rerender(<Harness rows={rows} onNearEnd={onNearEnd} />);

    let shown = screen.getAllByTestId("audit-row");
    expect(shown.length).toBeGreaterThan(20);
    expect(shown.length).toBeLessThan(100);
    expect(container.querySelectorAll("*").length).toBeLessThan(1000);
    expect(shown[0]!.dataset.kind).toBe("tool_call");
    expect(onNearEnd).not.toHaveBeenCalled();

    // Halfway down: the rows there, and spacers as tall as the rows left out on either side.
    const scroller = container.querySelector(".audit-scroll") as HTMLDivElement;
    Object.defineProperty(scroller, "scrollTop", { configurable: true, value: ROW_HEIGHT * 50_000 });
    fireEvent.scroll(scroller);
    shown = screen.getAllByTestId("audit-row");
    expect(shown.length).toBeLessThan(100);
    const ids = shown.map(idOf);
    expect(ids[0]! - ids[ids.length - 1]!).toBe(ids.length - 1);
    expect(ids.some((id) => id === 50_000)).toBe(true);
    const spacers = [...container.querySelectorAll<HTMLTableCellElement>(".audit-spacer td")].map((td) => Number.parseFloat(td.style.height));
    expect(spacers).toHaveLength(2);
    expect(spacers[0]! + spacers[1]! + shown.length * ROW_HEIGHT).toBe(rows.length * ROW_HEIGHT);
    expect(spacers[0]! / ROW_HEIGHT).toBeGreaterThan(49_900);

    // A row of that window still selects on click, with its contract attributes.
    const row = shown[30]!;
    fireEvent.click(row);
    expect(row.getAttribute("aria-selected")).toBe("true");
    expect(row.className).toBe("audit-row selected");
    expect(["tool_call", "guard_decision"]).toContain(row.dataset.kind);
    expect(row.dataset.decision).toBe(row.dataset.kind === "guard_decision" ? "deny" : "");

    // Near the last loaded row: the next page is asked for.
    Object.defineProperty(scroller, "scrollTop", { configurable: true, value: ROW_HEIGHT * 99_990 });
    fireEvent.scroll(scroller);
    expect(onNearEnd).toHaveBeenCalled();
    expect(screen.getAllByTestId("audit-row").length).toBeLessThan(100);
  });
});
