// The few Node APIs the tests use (tests run on Node under vitest; the app never does, so the
// UI's tsconfig has no Node types).
declare module "node:fs" {
  export function readFileSync(path: string, encoding: "utf8"): string;
  export function readdirSync(path: string): string[];
}

interface ImportMeta {
  /** The folder of the test file (Node 20.11+). */
  readonly dirname: string;
}
