/**
 * What the provider stand-ins (test/fleet/runpod-server.ts, lambda-server.ts) share: reading a
 * request's JSON body (telling no body from a body that is not JSON) and listening on a loopback
 * port chosen by the system, closed with every open connection.
 */
import type { IncomingMessage, Server } from "node:http";
import type { AddressInfo } from "node:net";

export async function readJsonBody(req: IncomingMessage): Promise<{ json: unknown; invalid: boolean }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text) return { json: undefined, invalid: false };
  try {
    return { json: JSON.parse(text), invalid: false };
  } catch {
    return { json: undefined, invalid: true };
  }
}

/** Listens on 127.0.0.1, port 0; answers the base URL and a close that drops open connections. */
export async function listenLoopback(server: Server): Promise<{ origin: string; close(): Promise<void> }> {
  await new Promise<void>((ready) => server.listen(0, "127.0.0.1", ready));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((done) => (server.closeAllConnections(), server.close(() => done()))),
  };
}
