/**
 * Where a channel URL set through the agents API may point. Such a URL is typed by whoever may
 * edit an agent, and every notification is POSTed there, so it must be `https:` to a public host:
 * no loopback, private (10/8, 172.16/12, 192.168/16, 100.64/10 shared), link-local (169.254/16,
 * the cloud metadata address), unspecified, `localhost`, IPv6 ::1, fc00::/7, fe80::/10, or an
 * IPv4-mapped form of any of them. The WHATWG URL parser has already normalised the decimal,
 * hex and short IPv4 forms (`http://2130706433/` is `127.0.0.1`) when this looks at the host.
 * A deployment that sets ALLOW_PRIVATE_URLS=true (local setups: a receiver on the LAN) may also use
 * `http:` and private hosts. URLs from the environment are the deployer's own and only need
 * http(s) (runtime/setting-bounds.ts `httpUrl`). A host name is not resolved here.
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

function privateIpv6(v6: string): boolean {
  if (v6 === "::" || v6 === "::1") return true;
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
