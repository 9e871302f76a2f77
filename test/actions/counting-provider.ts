/**
 * The simulator provider with every call counted, and an outage switch: while `outage` is set,
 * every mutating call throws that ProviderError (as the Vast client does after its own retries).
 */
import type {
  CreatedInstance,
  FleetInstance,
  FleetProvider,
  InstanceSpec,
  LogRequest,
  Offer,
  OfferQuery,
  ProviderError,
} from "../../fleet/providers/provider.ts";
import { SimulatorProvider } from "../../fleet/providers/simulator.ts";
import type { Db } from "../../db/client.ts";
import type { Clock } from "../../runtime/clock.ts";

export class CountingProvider implements FleetProvider {
  readonly kind = "simulator" as const;
  get capabilities() {
    return this.inner.capabilities;
  }
  readonly calls: string[] = [];
  outage: ProviderError | null = null;
  readonly inner: SimulatorProvider;

  constructor(db: Db, clock: Clock) {
    this.inner = new SimulatorProvider(db, clock);
  }

  private async act(call: string, run: () => Promise<void>): Promise<void> {
    this.calls.push(call);
    if (this.outage) throw this.outage;
    await run();
  }

  list(): Promise<FleetInstance[]> {
    return this.inner.list();
  }
  get(id: string): Promise<FleetInstance | null> {
    return this.inner.get(id);
  }
  start(id: string) {
    return this.act(`start ${id}`, () => this.inner.start(id));
  }
  stop(id: string) {
    return this.act(`stop ${id}`, () => this.inner.stop(id));
  }
  reboot(id: string) {
    return this.act(`reboot ${id}`, () => this.inner.reboot(id));
  }
  destroy(id: string) {
    return this.act(`destroy ${id}`, () => this.inner.destroy(id));
  }
  logs(id: string, request: LogRequest) {
    return this.inner.logs(id, request);
  }
  setLabel(id: string, label: string) {
    return this.act(`label ${id} ${label}`, () => this.inner.setLabel(id, label));
  }
  offers(query: OfferQuery) {
    return this.inner.offers(query);
  }
  async create(offer: Offer, spec: InstanceSpec): Promise<CreatedInstance> {
    this.calls.push(`create ${offer.id}`);
    if (this.outage) throw this.outage;
    return this.inner.create(offer, spec);
  }
}
