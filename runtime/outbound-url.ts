/**
 * Where a channel URL set through the agents API may point. Such a URL is typed by whoever may
 * edit an agent, and every notification is POSTed there, so it must be `https:` to a public host:
 * no loopback, private (10/8, 172.16/12, 192.168/16, 100.64/10 shared), link-local (169.254/16,
 * the cloud metadata address), unspecified, `localhost`, IPv6 ::1, fc00::/7, fe80::/10, or an
 * IPv4-mapped form of any of them. The WHATWG URL parser has already normalised the decimal,
 * hex and short IPv4 forms (`http://2130706433/` is `127.0.0.1`) when this looks at the host.
 * A deployment that sets ALLOW_PRIVATE_URLS=true (local setups: a receiver on the LAN) may also use
 * `http:` and private hosts. URLs from the environment are the deployer's own and only need
 * http(s) (runtime/setting-bounds.ts `httpUrl`). A host name is not resolved where the URL is
 * set; `resolvedAddressProblem` resolves it where it is sent (the Node host's resolver, every address),
 * so a name that points at loopback, a private network or a NAT64 form of one is refused then.
 */
import { httpUrlProblem } from "./setting-bounds.ts";

const IPV4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function privateIpv4(host: string): boolean {
  const m = IPV4.exec(host);
  if (!m) return false;
  const [a, b] = [Number(m[1]), Number(m[2])];
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    a >= 224
  );
}

/** The IPv4 address an IPv4-mapped or -compatible IPv6 address carries (as the URL parser writes it), else null. */
function embeddedIpv4(v6: string): string | null {
  const m = /^(?:0*:)*(?:ffff:)?([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
  if (!m || !v6.startsWith("::")) return null;
  const hi = parseInt(m[1]!, 16);
  const lo = parseInt(m[2]!, 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

/** The IPv4 address a NAT64 (64:ff9b::/96, 64:ff9b:1::/48) or 6to4 (2002::/16) address carries, else null. */
function translatedIpv4(v6: string): string | null {
  const groups = expandIpv6(v6);
  if (!groups) return null;
  const quad = (hi: number, lo: number) => `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  if (groups[0] === 0x64 && groups[1] === 0xff9b) return quad(groups[6]!, groups[7]!);
  if (groups[0] === 0x2002) return quad(groups[1]!, groups[2]!);
  return null;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 taken as two), else null. */
function expandIpv6(v6: string): number[] | null {
  let text = v6.toLowerCase();
  const dotted = /(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const part = (h: string | undefined) => (h ? h.split(":").map((g) => parseInt(g, 16)) : []);
  const head = part(halves[0]);
  const tail = part(halves[1]);
  const groups = halves.length === 2 ? [...head, ...Array(8 - head.length - tail.length).fill(0), ...tail] : head;
  return groups.length === 8 && groups.every((g) => Number.isInteger(g) && g >= 0 && g <= 0xffff) ? groups : null;
}

function privateIpv6(v6: string): boolean {
  if (v6 === "::" || v6 === "::1") return true;
  const translated = translatedIpv4(v6);
  if (translated) return privateIpv4(translated);
  const mapped = embeddedIpv4(v6);
  if (mapped) return true; // mapped or compatible: never a public destination worth allowing
  const first = parseInt(v6.split(":")[0] || "0", 16);
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}

/** Whether a URL's host (as `new URL` normalised it) is loopback, private, link-local or local by name. */
export function privateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host.startsWith("[") && host.endsWith("]")) return privateIpv6(host.slice(1, -1));
  if (host === "localhost" || host.endsWith(".localhost") || host.endsWith(".local") || host.endsWith(".internal")) return true;
  return privateIpv4(host);
}

/** Why a channel URL may not be used, or null when it may. */
export function channelUrlProblem(url: string, allowPrivate: boolean): string | null {
  const basic = httpUrlProblem(url);
  if (basic) return basic;
  if (allowPrivate) return null;
  const parsed = new URL(url);
  if (parsed.protocol !== "https:") return "must be an https:// URL (http:, loopback and private hosts need ALLOW_PRIVATE_URLS=true)";
  if (privateHost(parsed.hostname))
    return `must point to a public host, not ${parsed.hostname} (loopback, private and link-local hosts need ALLOW_PRIVATE_URLS=true)`;
  return null;
}

/** A resolver as node:dns/promises `lookup(host, {all: true})` answers. */
export type LookupAll = (hostname: string) => Promise<{ address: string; family: number }[]>;

/**
 * Why a URL may not be sent to once its host name is resolved (every address it resolves to must
 * be public), or null. An address literal is judged as written; a name that does not resolve is
 * left to the request itself to fail.
 */
export async function resolvedAddressProblem(url: string, lookup: LookupAll): Promise<string | null> {
  const hostname = new URL(url).hostname;
  if (privateHost(hostname)) return `${hostname} is a loopback, private or link-local host`;
  if (hostname.startsWith("[") || IPV4.test(hostname)) return null;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(hostname);
  } catch {
    return null;
  }
  const bad = addresses.find(({ address }) => privateHost(address.includes(":") ? `[${address}]` : address));
  return bad ? `${hostname} resolves to ${bad.address}, a loopback, private, link-local or NAT64-mapped address` : null;
}
