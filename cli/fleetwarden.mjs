#!/usr/bin/env node
// The `fleetwarden` bin: runs the TypeScript CLI (cli/main.ts) through tsx, a dependency already.
import { tsImport } from "tsx/esm/api";

await tsImport("./main.ts", import.meta.url);
