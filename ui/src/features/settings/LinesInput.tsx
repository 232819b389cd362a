// A list edited as text, one entry per line (rules, host patterns). The textarea keeps what the
// user typed, blank lines and all, while the list handed up is the trimmed, non-empty lines.
import { useState } from "react";

/** The entries of `text`: one per line, trimmed, blank lines left out. */
export function linesOf(text: string): string[] {
  return text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
}

interface Props {
  testId: string;
  /** The list it starts from; later changes come from the user's typing. */
  values: string[];
  placeholder?: string;
  onChange: (values: string[]) => void;
}

export function LinesInput({ testId, values, placeholder, onChange }: Props) {
  const [text, setText] = useState(values.join("\n"));
  return (
    <textarea
      data-testid={testId}
      rows={Math.max(2, Math.min(8, linesOf(text).length + 1))}
      spellCheck={false}
      value={text}
      placeholder={placeholder}
      onChange={(e) => {
        setText(e.target.value);
        onChange(linesOf(e.target.value));
      }}
    />
  );
}
