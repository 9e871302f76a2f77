/**
 * A local Vast.ai stand-in for contract tests: a real node:http server on port 0 that records
 * every request and answers through a handler the test writes in Vast's wire shapes.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  body: unknown;
}

export interface Answer {
  status?: number;
  body?: unknown;
  /** Sent as-is instead of JSON.stringify(body). */
  raw?: string;
  headers?: Record<string, string>;
}

export interface VastServer {
  url: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  return text ? JSON.parse(text) : undefined;
}

export async function startVastServer(handler: (req: SeenRequest, index: number) => Answer): Promise<VastServer> {
  const requests: SeenRequest[] = [];
  const server = createServer(async (req, res) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const seen: SeenRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: url.searchParams,
      authorization: req.headers.authorization,
      body: await readBody(req),
    };
    requests.push(seen);
    const answer = handler(seen, requests.length - 1);
    res.writeHead(answer.status ?? 200, { "Content-Type": "application/json", ...answer.headers });
    res.end(answer.raw ?? JSON.stringify(answer.body ?? { success: true }));
  });
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}

/** A Vast instance object as the API sends it (only the fields fleetwarden reads, plus noise). */
export function vastInstance(id: number, overrides: Record<string, unknown> = {}) {
  return {
    id,
    actual_status: "running",
    intended_status: "running",
    cur_state: "running",
    next_state: "running",
    label: `job-${id}`,
    status_msg: "success, running pytorch/pytorch",
    gpu_name: "RTX 4090",
    num_gpus: 2,
    dph_total: 0.734,
    start_date: 1767225600.5,
    machine_id: 12,
    ssh_host: "ssh1.vast.ai",
    ...overrides,
  };
}
