#!/usr/bin/env -S MALLOC_MMAP_THRESHOLD_=32768 MALLOC_TRIM_THRESHOLD_=131072 node --max-semi-space-size=4 --no-memory-reducer
// The bundled program (npm run build, run by npm ci and npm pack). The line above is how sluiced runs:
// glibc's malloc thresholds, V8's young generation size and its memory reducer off, which must be set
// before node starts (see the README); `node bin/sluiced.js` skips them.
import "../dist/bundle/sluiced.js";
