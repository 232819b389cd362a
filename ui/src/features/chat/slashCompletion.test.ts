import { describe, expect, it } from "vitest";
import type { SlashCommandInfo } from "../../api/types";
import { completed, suggestions } from "./slashCompletion";

const commands: SlashCommandInfo[] = [
  { name: "compact", description: "Compact", hint: null, skill: false },
  { name: "mode", description: "Mode", hint: "MODE", skill: false },
  { name: "skills", description: "Skills", hint: null, skill: false },
  { name: "sketch", description: "A skill", hint: "ARGS", skill: true },
];

describe("slash completion", () => {
  it("offers the commands that start with what was typed", () => {
    expect(suggestions("/sk", commands).map((c) => c.name)).toEqual(["skills", "sketch"]);
    expect(suggestions("/", commands)).toHaveLength(4);
  });

  it("offers nothing once the name is whole, an argument begins, or it is not a command", () => {
    expect(suggestions("/skills", commands).map((c) => c.name)).toEqual([]);
    expect(suggestions("/mode pl", commands)).toEqual([]);
    expect(suggestions("fix /sk", commands)).toEqual([]);
  });

  it("completes to the name, with a space when an argument follows", () => {
    const [, mode, skills] = commands as [SlashCommandInfo, SlashCommandInfo, SlashCommandInfo];
    expect(completed(skills)).toBe("/skills");
    expect(completed(mode)).toBe("/mode ");
  });
});
