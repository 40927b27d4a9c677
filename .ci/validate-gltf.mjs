#!/usr/bin/env node
// Validate glTF/GLB files with the Khronos glTF validator (npm package `gltf-validator`).
// Usage: node .ci/validate-gltf.mjs FILE...
// Prints one JSON line per file: {"file", "errors", "warnings", "infos", "hints", "messages"}
// (messages: the error-severity issues, at most 20). Exits 1 when any file has an error or
// cannot be read, 2 on bad usage. Install first: `cd .ci && npm install`.
import fs from "node:fs";
import path from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const validator = require("gltf-validator");

const files = process.argv.slice(2);
if (files.length === 0) {
  console.error("usage: node .ci/validate-gltf.mjs FILE...");
  process.exit(2);
}

let failed = false;
for (const file of files) {
  try {
    const bytes = new Uint8Array(fs.readFileSync(file));
    const report = await validator.validateBytes(bytes, {
      uri: path.basename(file),
      maxIssues: 1000,
      externalResourceFunction: (uri) =>
        new Promise((resolve, reject) => {
          const full = path.resolve(path.dirname(file), decodeURIComponent(uri));
          fs.readFile(full, (err, data) => (err ? reject(err.toString()) : resolve(new Uint8Array(data))));
        }),
    });
    const issues = report.issues;
    const summary = {
      file,
      errors: issues.numErrors,
      warnings: issues.numWarnings,
      infos: issues.numInfos,
      hints: issues.numHints,
      messages: issues.messages
        .filter((m) => m.severity === 0)
        .slice(0, 20)
        .map((m) => `${m.code} ${m.pointer ?? ""}: ${m.message}`),
    };
    console.log(JSON.stringify(summary));
    if (issues.numErrors > 0) failed = true;
  } catch (error) {
    console.log(JSON.stringify({ file, errors: 1, failure: String(error) }));
    failed = true;
  }
}
process.exit(failed ? 1 : 0);
