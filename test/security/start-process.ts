/**
 * Runs `npm start`'s entry (functions/node.ts; or another `script`, e.g. `npm run db:migrate`'s) as
 * a child process with exactly the given variables, and returns its exit code and output once it
 * exits (it is stopped with SIGTERM once stdout matches `stopWhenStdout`, and killed after
 * `timeoutMs`).
 * As root, `asNobody` runs it as uid 65534 so that file permissions apply to it.
 */
import { spawn } from "node:child_process";

export interface Exited {
  code: number | null;
  stderr: string;
  stdout: string;
}

export function runStart(
  vars: Record<string, string>,
  options: { asNobody?: boolean; timeoutMs?: number; stopWhenStdout?: RegExp; script?: string } = {},
): Promise<Exited> {
  // Exactly these variables, nothing inherited (worker-configuration.d.ts widens ProcessEnv's type).
  const env = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: "/tmp", ...vars } as unknown as NodeJS.ProcessEnv;
  const nobody = options.asNobody && process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};
  const child = spawn(process.execPath, ["--import", "tsx", options.script ?? "functions/node.ts"], {
    env,
    stdio: ["ignore", "pipe", "pipe"],
    ...nobody,
  });
  let stderr = "";
  let stdout = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
    if (options.stopWhenStdout?.test(stdout)) child.kill("SIGTERM");
  });
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
  return new Promise((done) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      done({ code, stderr, stdout });
    }),
  );
}
