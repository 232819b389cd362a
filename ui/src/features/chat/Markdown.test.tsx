import { render } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { Markdown } from "./Markdown";

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
