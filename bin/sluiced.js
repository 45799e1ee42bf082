#!/usr/bin/env node
// The bundled program (npm run build, run by npm ci and npm pack).
import "../dist/bundle/sluiced.js";
