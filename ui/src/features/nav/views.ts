// The app's views (DESIGN section 11) and their nav labels; the nav test ids derive from `id`.
export const VIEWS = [
  { id: "chat", label: "Chat", glyph: "›_" },
  { id: "sessions", label: "Sessions", glyph: "☰" },
  { id: "approvals", label: "Approvals", glyph: "✓?" },
  { id: "changes", label: "Changes", glyph: "±" },
  { id: "usage", label: "Usage", glyph: "▮▮" },
  { id: "audit", label: "Audit", glyph: "≡" },
  { id: "settings", label: "Settings", glyph: "⚙" },
] as const;

export type ViewId = (typeof VIEWS)[number]["id"];
