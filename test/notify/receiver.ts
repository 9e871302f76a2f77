/**
 * A local HTTP receiver standing in for Slack, Discord or ntfy: records every request (method,
 * path, headers, body) and answers with scripted statuses, over real loopback HTTP on port 0.
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface Receiver {
  url: string;
  received: ReceivedRequest[];
  /** Statuses to answer with, in order; once used up, `fallback` answers. */
  script: number[];
  fallback: number;
  /** When true, requests are recorded but never answered (a hung channel). */
  hang: boolean;
  close(): Promise<void>;
}

export async function startReceiver(path = "/hook", fallback = 200): Promise<Receiver> {
  const pending = new Set<import("node:http").ServerResponse>();
  const receiver: Receiver = {
    url: "",
    received: [],
    script: [],
    fallback,
    hang: false,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of pending) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      receiver.received.push({ method: req.method ?? "", path: req.url ?? "", headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      if (receiver.hang) {
        pending.add(res);
        return;
      }
      const status = receiver.script.shift() ?? receiver.fallback;
      res.writeHead(status, { "Content-Type": "text/plain" }).end(status < 300 ? "ok" : "upstream says no");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
