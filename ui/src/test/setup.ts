// Vitest setup: unmount what each test rendered (Testing Library only does it by itself with globals).
import { cleanup } from "@testing-library/react";
import { afterEach } from "vitest";

afterEach(() => cleanup());
