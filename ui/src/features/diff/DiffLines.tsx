// A unified diff as coloured lines (added, removed, hunk headers, file headers). Text only: the
// diff comes from files the model may have written, so it is never parsed as HTML.
interface Props {
  diff: string;
  /** Extra test hook, e.g. `approval-preview`. */
  testId?: string;
}

type LineKind = "add" | "del" | "hunk" | "meta" | "ctx";

function lineKind(line: string): LineKind {
  if (line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ") || line.startsWith("\\")) return "meta";
  if (line.startsWith("@@")) return "hunk";
  if (line.startsWith("+")) return "add";
  if (line.startsWith("-")) return "del";
  return "ctx";
}

export function DiffLines({ diff, testId }: Props) {
  const lines = diff.endsWith("\n") ? diff.slice(0, -1).split("\n") : diff.split("\n");
  return (
    <pre className="code diff" data-testid={testId}>
      {lines.map((line, i) => (
        <span key={i} className={`diff-line ${lineKind(line)}`}>
          {line}
          {"\n"}
        </span>
      ))}
    </pre>
  );
}
