#!/usr/bin/env node
// The compiled entry point (npm run build, run by npm ci and npm pack).
import "../dist/bundle/sluice.js";
