// Vite build for the Bridle webview: output embedded by src-tauri (frontendDist ../ui/dist).
import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  clearScreen: false,
  // Must match devUrl in src-tauri/tauri.conf.json.
  server: { port: 1420, strictPort: true, host: "127.0.0.1" },
  build: { outDir: "dist", target: "es2020" },
});
