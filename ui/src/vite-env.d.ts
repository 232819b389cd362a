// Vite's ambient types: CSS imports (main.tsx) and import.meta.env.
/// <reference types="vite/client" />
