// The arguments of a request as the user sees and edits them: pretty-printed JSON in, and the
// edit checked (valid JSON, an object) before it may be sent as `editedArguments`.

/** `raw` pretty-printed with two-space indents; left as it is when it is not JSON. */
export function prettyArguments(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw), null, 2);
  } catch {
    return raw;
  }
}

/** The edit to send: `null` when the arguments mean what the request's do, or why it cannot go. */
export type ArgumentsEdit = { ok: true; edited: string | null } | { ok: false; error: string };

/**
 * Judges the textarea's `text` against the request's `original` arguments. Unchanged (also when
 * only whitespace or indentation changed) sends no edit; a change must parse as a JSON object.
 */
export function checkEdit(original: string, text: string): ArgumentsEdit {
  if (text === prettyArguments(original)) return { ok: true, edited: null };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return { ok: false, error: `The arguments are not valid JSON: ${why}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, error: "The arguments must be a JSON object." };
  }
  const same = (() => {
    try {
      return JSON.stringify(JSON.parse(original)) === JSON.stringify(value);
    } catch {
      return false;
    }
  })();
  return { ok: true, edited: same ? null : text.trim() };
}
