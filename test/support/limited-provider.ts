/**
 * A provider that can do less than the one it wraps (the simulator, usually): the capabilities
 * named in `without` are gone, as Lambda Cloud has no stop. Every mutating call still reaches the
 * inner provider and is counted in `calls`, so a test can show that nothing asked for one the
 * wrapper lacks — the inner provider would have carried it out.
 */
import type {
  Capability,
  FleetProvider,
  InstanceSpec,
  LogRequest,
  Offer,
  OfferQuery,
  ProviderCall,
} from "../../fleet/providers/provider.ts";

export class LimitedProvider implements FleetProvider {
  readonly kind: FleetProvider["kind"];
  readonly capabilities: ReadonlySet<Capability>;
  readonly calls: string[] = [];

  constructor(
    readonly inner: FleetProvider,
    without: Capability[],
  ) {
    this.kind = inner.kind;
    this.capabilities = new Set([...inner.capabilities].filter((c) => !without.includes(c)));
  }

  list() {
    return this.inner.list();
  }
  get(id: string) {
    return this.inner.get(id);
  }
  start(id: string, call?: ProviderCall) {
    this.calls.push(`start ${id}`);
    return this.inner.start(id, call);
  }
  stop(id: string, call?: ProviderCall) {
    this.calls.push(`stop ${id}`);
    return this.inner.stop(id, call);
  }
  reboot(id: string, call?: ProviderCall) {
    this.calls.push(`reboot ${id}`);
    return this.inner.reboot(id, call);
  }
  destroy(id: string, call?: ProviderCall) {
    this.calls.push(`destroy ${id}`);
    return this.inner.destroy(id, call);
  }
  setLabel(id: string, label: string, call?: ProviderCall) {
    this.calls.push(`label ${id}`);
    return this.inner.setLabel(id, label, call);
  }
  logs(id: string, request: LogRequest) {
    this.calls.push(`logs ${id}`);
    return this.inner.logs(id, request);
  }
  offers(query: OfferQuery, call?: ProviderCall) {
    return this.inner.offers(query, call);
  }
  create(offer: Offer, spec: InstanceSpec, call?: ProviderCall) {
    this.calls.push(`create ${offer.id}`);
    return this.inner.create(offer, spec, call);
  }
}
