#!/usr/bin/env node
// The command line of the local Functions host: the compiled dist/main.js (npm run build first).
// A file of its own, committed, so that npm links the bin when it installs, before any build.
require("../dist/main.js");
