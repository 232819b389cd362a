import { render, waitFor } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import { Markdown, warm } from "./Markdown";

/** Every text the markdown renderer was given, in order. */
const parsed: string[] = [];
/** Called after each text is parsed. */
let afterParse = () => {};
vi.mock("react-markdown", async (original) => {
  const real = (await original<typeof import("react-markdown")>()).default;
  return {
    default: (options: Parameters<typeof real>[0]) => {
      parsed.push(options.children ?? "");
      const tree = real(options);
      afterParse();
      return tree;
    },
  };
});

describe("assistant markdown", () => {
  it("renders emphasis, lists and highlighted code", () => {
    const { container } = render(
      <Markdown text={"**Project Atlas** is:\n\n- fast\n- *safe*\n\n```rust\nfn main() { let x = 1; }\n```\n"} />,
    );
    expect(container.querySelector("strong")?.textContent).toBe("Project Atlas");
    expect(container.querySelectorAll("li")).toHaveLength(2);
    expect(container.querySelector("em")?.textContent).toBe("safe");
    const code = container.querySelector("pre code");
    expect(code?.className).toContain("language-rust");
    expect(code?.querySelector(".hljs-keyword")?.textContent).toBe("fn");
  });

  it("never turns model text into live markup or a way out", () => {
    const hostile = 'Hi <img src=x onerror="alert(1)"> <script>alert(2)</script> [click](https://evil.example) ![x](https://evil.example/p.png)';
    const { container } = render(<Markdown text={hostile} />);
    expect(container.querySelector("img")).toBeNull();
    expect(container.querySelector("script")).toBeNull();
    expect(container.querySelector("a")).toBeNull();
    expect(container.textContent).toContain("click (https://evil.example)");
    // Raw HTML is shown as the text it is, never parsed.
    expect(container.textContent).toContain("<script>alert(2)</script>");
    expect(container.textContent).toContain("[image: x]");
  });

  it("shows each text's own tree when texts come back into view (the kept trees are per text)", () => {
    const texts = Array.from({ length: 400 }, (_, i) => `Step ${i}: **bold ${i}**`);
    for (const text of texts) render(<Markdown text={text} />).unmount();
    for (const i of [399, 0, 250]) {
      const { container, unmount } = render(<Markdown text={texts[i] ?? ""} />);
      expect(container.querySelector("strong")?.textContent).toBe(`bold ${i}`);
      expect(container.textContent).toBe(`Step ${i}: bold ${i}`);
      unmount();
    }
  });
});

describe("parsing ahead", () => {
  it("parses the texts given between frames, so showing them later parses nothing", async () => {
    parsed.length = 0;
    const texts = Array.from({ length: 40 }, (_, i) => `Ahead ${i}: **bold ${i}**`);
    warm(texts);
    // Nothing happens in the caller's frame: the slices come after it.
    expect(parsed).toHaveLength(0);
    await waitFor(() => expect(parsed).toHaveLength(40));
    expect(parsed[0]).toBe(texts[0]);
    const { container } = render(<Markdown text={texts[7] ?? ""} />);
    expect(container.querySelector("strong")?.textContent).toBe("bold 7");
    expect(parsed).toHaveLength(40);
  });

  it("drops what an earlier call left when a later one comes", async () => {
    parsed.length = 0;
    const early = Array.from({ length: 3000 }, (_, i) => `Early ${i}: \`code ${i}\``);
    // The later call comes while the earlier one is parsing its fifth text.
    afterParse = () => {
      if (parsed.length === 5) warm(["Later: *one*"]);
    };
    warm(early);
    await waitFor(() => expect(parsed).toContain("Later: *one*"));
    await new Promise((r) => setTimeout(r, 100));
    // The earlier list stopped where it was; nothing of it came after the later one.
    expect(parsed[parsed.length - 1]).toBe("Later: *one*");
    expect(parsed.slice(0, 5)).toEqual(early.slice(0, 5));
    expect(parsed).toHaveLength(6);
  });
});
