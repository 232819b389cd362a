// Argument editing rules: what counts as an edit and what blocks sending one.
import { describe, expect, it } from "vitest";
import { checkEdit, prettyArguments } from "./args";

const ORIGINAL = '{"path":"a.txt","content":"x"}';

describe("approval arguments", () => {
  it("pretty-prints JSON and leaves other text alone", () => {
    expect(prettyArguments(ORIGINAL)).toBe('{\n  "path": "a.txt",\n  "content": "x"\n}');
    expect(prettyArguments("not json")).toBe("not json");
  });

  it("sends no edit when the meaning did not change", () => {
    expect(checkEdit(ORIGINAL, prettyArguments(ORIGINAL))).toEqual({ ok: true, edited: null });
    expect(checkEdit(ORIGINAL, '{ "path": "a.txt", "content": "x" }')).toEqual({ ok: true, edited: null });
  });

  it("sends a changed object as the edited text", () => {
    expect(checkEdit(ORIGINAL, ' {"path":"b.txt","content":"x"}\n')).toEqual({ ok: true, edited: '{"path":"b.txt","content":"x"}' });
  });

  it("refuses text that is not a JSON object", () => {
    expect(checkEdit(ORIGINAL, '{"path": ')).toMatchObject({ ok: false, error: expect.stringContaining("not valid JSON") });
    expect(checkEdit(ORIGINAL, "[1, 2]")).toEqual({ ok: false, error: "The arguments must be a JSON object." });
  });
});
