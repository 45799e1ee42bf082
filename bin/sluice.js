#!/usr/bin/env node
// Runs the TypeScript entry point through tsx, so the package needs no separate compile step.
import { register } from "tsx/esm/api";

register();
await import("../src/bin/sluice.ts");
