// Unit and component tests: jsdom, no Tauri runtime (src/api/engine.ts is mocked per test).
import { defineConfig, mergeConfig } from "vitest/config";
import viteConfig from "./vite.config.ts";

export default mergeConfig(
  viteConfig,
  defineConfig({
    test: {
      environment: "jsdom",
      include: ["src/**/*.test.{ts,tsx}"],
      setupFiles: ["src/test/setup.ts"],
      clearMocks: true,
    },
  }),
);
